package io.hyperframes.inference;

import io.hyperframes.model.Block;
import io.hyperframes.model.MoeSpec;
import io.hyperframes.model.TransformerSpec;
import java.util.List;
import org.apache.commons.math3.distribution.NormalDistribution;

/**
 * The busiest expert-parallel rank under uniform routing (and under a measured skew,
 * {@link #rankBlocks}). With {@code ep} ranks each holding
 * {@code E/ep} experts, the experts a step touches and the token copies routed to a rank are
 * binomial counts; the rank with the most sets the step's MoE time (Fedus et al. 2021, Switch
 * Transformer §2.2: the slowest expert bounds the layer). The expected maximum of {@code ranks}
 * independent Binomial(n, p) counts is {@code Σ_{x<n} (1 − F(x)^ranks)} (the tail-sum form of the
 * expectation of a non-negative integer variable, F the binomial distribution function). The
 * counts of different ranks share a total, which independence ignores: at one token, top-2 of 8
 * experts on 8 ranks, independent counts leave every rank empty with probability 0.75^8 while
 * in fact two ranks hold one each. Callers bound the estimate below by what is certain
 * ({@code ExpertWeights#busiestRankExperts}). Above {@link #EXACT_TRIALS} trials the
 * binomial is replaced by its normal approximation, μ + σ·E[max of ranks standard normals].
 */
final class ExpertBalance {
  private ExpertBalance() {}

  /**
   * The layer blocks as the busiest expert-parallel rank runs them. With experts over several
   * ranks (ep &gt; 1) a step ends when the rank with the most routed token copies has computed
   * and exchanged them ({@code workload.moeLoadImbalance} times those of uniform routing, whose
   * chance maximum at the step's token count the estimator already takes, {@link #expectedMax}):
   * its MoE blocks are those of a layer padded to that capacity factor, as the training
   * estimator expresses the busiest rank. The model's parameters, memory and the weights a step
   * reads are the real routing's. Without expert parallelism, without routing, with a capacity
   * factor of the model's own or at imbalance 1 the blocks are the model's.
   */
  static List<Block> rankBlocks(TransformerSpec m, InferenceWorkload w, int ep) {
    double imbalance = w.moeLoadImbalance();
    if (ep == 1 || imbalance == 1.0 || !m.isMoe() || !m.moe().routed()
        || m.moe().capacityFactor() > 0) {
      return m.blocks();
    }
    return new TransformerSpec(m.name(), m.layers(), m.hidden(), m.heads(), m.kvHeads(),
        m.ffnHidden(), m.gatedMlp(), m.vocab(), m.seqLen(), m.tiedEmbeddings(), m.headDim(),
        m.moe().withCapacityFactor(imbalance), m.mla(), m.slidingWindow(), m.mtpLayers())
        .blocks();
  }

  /** The MoE spec of {@code blocks} (the model's where they have no MoE block). */
  static MoeSpec moeOf(List<Block> blocks, TransformerSpec m) {
    for (Block b : blocks) {
      if (b instanceof Block.Moe moe) {
        return moe.moe();
      }
    }
    return m.moe();
  }

  /** Largest trial count summed exactly. */
  static final int EXACT_TRIALS = 4096;

  private static final NormalDistribution STANDARD = new NormalDistribution(null, 0, 1);

  /**
   * Expected maximum of {@code ranks} independent Binomial({@code trials}, {@code p}) counts.
   * One rank: the mean {@code trials·p}.
   */
  static double expectedMax(long trials, double p, int ranks) {
    if (trials <= 0 || p <= 0) {
      return 0.0;
    }
    if (ranks == 1 || p >= 1) {
      return trials * Math.min(1.0, p);
    }
    if (trials > EXACT_TRIALS) {
      double mean = trials * p;
      return Math.min(trials, mean + Math.sqrt(mean * (1 - p)) * maxOfNormals(ranks));
    }
    // pmf(x) by the ratio pmf(x+1)/pmf(x) = (n-x)/(x+1) · p/(1-p), from pmf(0) = (1-p)^n in logs.
    double logQ = Math.log1p(-p);
    double logRatio = Math.log(p) - logQ;
    double logPmf = trials * logQ;
    double cdf = 0.0;
    double sum = 0.0;
    for (long x = 0; x < trials; x++) {
      cdf = Math.min(1.0, cdf + Math.exp(logPmf));
      double tail = 1.0 - Math.pow(cdf, ranks);
      sum += tail;
      if (tail < 1e-12 && x > trials * p) {
        break;
      }
      logPmf += Math.log((double) (trials - x) / (x + 1)) + logRatio;
    }
    return sum;
  }

  /**
   * E[max of {@code ranks} independent standard normals] = ∫ x·r·φ(x)·Φ(x)^(r−1) dx, by the
   * trapezoid rule on [−7, 7] in steps of 0.05 (the integrand is smooth and negligible
   * outside).
   */
  static double maxOfNormals(int ranks) {
    double sum = 0.0;
    double step = 0.05;
    for (int i = 0; i <= 280; i++) {
      double x = -7 + i * step;
      double weight = i == 0 || i == 280 ? 0.5 : 1.0;
      sum += weight * x * ranks * STANDARD.density(x)
          * Math.pow(STANDARD.cumulativeProbability(x), ranks - 1);
    }
    return sum * step;
  }
}
