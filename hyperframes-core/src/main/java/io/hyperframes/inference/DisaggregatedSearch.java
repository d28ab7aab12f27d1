package io.hyperframes.inference;

import io.hyperframes.hardware.Cluster;
import io.hyperframes.model.TransformerSpec;
import io.hyperframes.precision.NumberFormat;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import org.apache.commons.math3.distribution.PoissonDistribution;

/**
 * The disaggregated side of a serving plan (docs/inference.md, "Serving plans"): for each weight
 * and KV-cache format, the smallest prefill pool and the smallest decode pool that meet the SLO at
 * the request rate, over the replica configurations the aggregated search tries, and the pair of
 * them with the fewest devices. The pools are sized apart, as each depends only on its own
 * configuration:
 *
 * <ul>
 *   <li><b>Prefill pool.</b> A replica computes up to {@link #PREFILL_BATCHES} prompts together
 *       ({@link Disaggregated#prefill}: its prefill, the KV transfer layer by layer, the exposed
 *       part of it); the replicas, from the fewest whose capacity exceeds the rate, are simulated
 *       under Poisson arrivals ({@link PrefillQueue}) until the TTFT at the SLO percentile meets
 *       the target.
 *   <li><b>Decode pool.</b> A replica decodes the most sequences whose KV cache fits, lowered to
 *       meet the TPOT target ({@link Disaggregated#decode}). A request holds a slot for its
 *       output tokens at that TPOT, so by Little's law the sequences in flight average λ = rate ·
 *       outputTokens · TPOT, and with Poisson arrivals their number is Poisson(λ) (the M/G/∞
 *       queue; Kleinrock, Queueing Systems vol. 1, 1975, §4.8): the pool has the slots of that
 *       distribution's SLO percentile, so that a request waits for a slot no more often than the
 *       TTFT target may be missed.
 *   <li><b>The fabric.</b> The KV cache crosses the inter-node fabric, or NVLink where both
 *       pools fit in one node.
 *   <li><b>Experts over several replicas.</b> For a mixture of experts the configurations also
 *       include those whose routed experts span an expert-parallel group of ep/tp replicas
 *       running attention data-parallel ({@link InferencePlanner#spanningReplicas}), without and
 *       with two-batch overlap; such a pool has whole groups of replicas, and each replica of a
 *       group is queued as a server of its own (the group's replicas step together in a real
 *       engine, which the queue does not model).
 * </ul>
 */
final class DisaggregatedSearch {
  private DisaggregatedSearch() {}

  /** Batch limits of a prefill replica searched: prompts it computes together at most. */
  static final int[] PREFILL_BATCHES = {1, 2, 4, 8, 16};

  private record Sized(InferencePlanner.PoolConfig pool, double latencySeconds) {}

  /**
   * The disaggregated configuration with the fewest devices that meets the SLO, then (at equal
   * devices) one whose experts stay within each replica, then the lowest TTFT; null when none
   * does.
   */
  static InferencePlanner.DisaggregatedConfig best(TransformerSpec model, Cluster cluster,
      InferenceWorkload w, List<InferencePlanner.Replica> replicas, double usdPerDeviceHour,
      InferenceEstimator estimator) {
    Cluster oneNode = cluster.withDevices(cluster.devicesPerNode());
    Cluster twoNodes = cluster.withDevices(2 * cluster.devicesPerNode());
    List<InferencePlanner.DisaggregatedConfig> found = new ArrayList<>();
    java.util.Set<List<NumberFormat>> formats = new java.util.LinkedHashSet<>();
    replicas.forEach(r -> formats.add(List.of(r.weights(), r.kvCache())));
    for (List<NumberFormat> format : formats) {
      NumberFormat wf = format.get(0);
      NumberFormat kf = format.get(1);
      List<InferencePlanner.Replica> same = replicas.stream()
          .filter(r -> r.weights() == wf && r.kvCache() == kf).toList();
      Sized decode = smallest(same.stream().map(r -> decodePool(model, w, r, estimator)));
      if (decode == null) {
        continue;
      }
      List<List<InferenceEstimate>> prefills = same.stream()
          .map(r -> prefillEstimates(model, r, estimator)).toList();
      Sized apart = null;
      Sized together = null;
      for (int i = 0; i < same.size(); i++) {
        apart = smaller(apart, prefillPool(model, w, same.get(i), prefills.get(i), twoNodes,
            estimator));
        together = smaller(together, prefillPool(model, w, same.get(i), prefills.get(i),
            oneNode, estimator));
      }
      Sized prefill = apart;
      boolean inOneNode = false;
      if (together != null && together.pool().devices() + decode.pool().devices()
          <= cluster.devicesPerNode()) {
        prefill = together;
        inOneNode = true;
      }
      if (prefill == null) {
        continue;
      }
      int devices = prefill.pool().devices() + decode.pool().devices();
      found.add(new InferencePlanner.DisaggregatedConfig(prefill.pool(), decode.pool(), wf, kf,
          devices, InferencePlanner.usdPerMillionTokens(usdPerDeviceHour, devices, w),
          prefill.latencySeconds(),
          decode.latencySeconds(), inOneNode));
    }
    return found.stream().min(Comparator.comparingInt(InferencePlanner.DisaggregatedConfig::devices)
        .thenComparing((InferencePlanner.DisaggregatedConfig c) -> spans(c.prefill())
            || spans(c.decode()))
        .thenComparingDouble(InferencePlanner.DisaggregatedConfig::ttftSeconds)).orElse(null);
  }

  /**
   * Fewest devices first; at equal devices a pool whose experts stay within a replica (no
   * exchange between replicas to run, and the pools {@code --emit} writes), then the lower
   * latency.
   */
  private static final Comparator<Sized> FEWEST = Comparator
      .comparingInt((Sized s) -> s.pool().devices())
      .thenComparing((Sized s) -> spans(s.pool()))
      .thenComparingDouble(Sized::latencySeconds);

  /** Whether a pool's routed experts span several replicas (ep &gt; tp). */
  static boolean spans(InferencePlanner.PoolConfig p) {
    return p.replicasPerGroup() > 1;
  }

  private static Sized smallest(java.util.stream.Stream<Sized> pools) {
    return pools.filter(java.util.Objects::nonNull).min(FEWEST).orElse(null);
  }

  private static Sized smaller(Sized a, Sized b) {
    return a == null ? b : b == null ? a : FEWEST.compare(b, a) < 0 ? b : a;
  }

  /** One replica's pool of configuration {@code r}: one expert-parallel group where ep &gt; tp. */
  private static Disaggregation.Pool pool(InferencePlanner.Replica r) {
    return new Disaggregation.Pool(r.tp(), r.ep(), r.group(), 0, r.twoBatchOverlap(),
        r.redundantExperts());
  }

  /**
   * A prefill replica's estimates of configuration {@code r} at 1, 2, ... prompts a batch, up to
   * the largest of {@link #PREFILL_BATCHES} or the last that fits.
   */
  static List<InferenceEstimate> prefillEstimates(TransformerSpec model,
      InferencePlanner.Replica r, InferenceEstimator estimator) {
    Disaggregation.Pool pool = pool(r);
    List<InferenceEstimate> out = new ArrayList<>();
    for (int k = 1; k <= PREFILL_BATCHES[PREFILL_BATCHES.length - 1]; k++) {
      InferenceEstimate e = Disaggregated.prefillEstimate(estimator, model, r.cluster(),
          r.base(), pool, k);
      if (!e.feasible()) {
        break;
      }
      out.add(e);
    }
    return out;
  }

  /**
   * The fewest prefill replicas of configuration {@code r} (at the best batch limit) whose TTFT
   * at the SLO percentile meets the target at the rate, from its {@code estimates} at 1, 2, ...
   * prompts a batch, the KV cache sent over {@code whole}'s fabric; null when none up to
   * {@link InferencePlanner#TRIES} above the fewest with the capacity does.
   */
  static Sized prefillPool(TransformerSpec model, InferenceWorkload w,
      InferencePlanner.Replica r, List<InferenceEstimate> estimates, Cluster whole,
      InferenceEstimator estimator) {
    Disaggregation.Pool pool = pool(r);
    int fits = estimates.size();
    double[] period = new double[fits + 1];
    double[] latency = new double[fits + 1];
    for (int k = 1; k <= fits; k++) {
      Disaggregated.Prefill p = Disaggregated.sent(estimator, estimates.get(k - 1), model, whole,
          r.base(), pool, k);
      period[k] = p.period();
      latency[k] = p.ttft();
    }
    double target = w.ttftSloSeconds();
    if (fits == 0 || (target > 0 && latency[1] > target)) {
      return null;
    }
    double rate = w.arrivalRatePerSecond();
    Sized best = null;
    for (int limit : PREFILL_BATCHES) {
      if (limit > fits) {
        break;
      }
      double[] periods = java.util.Arrays.copyOf(period, limit + 1);
      double[] latencies = java.util.Arrays.copyOf(latency, limit + 1);
      double perReplica = limit / period[limit];
      // Replicas come in whole expert-parallel groups; each replica of a group takes its own
      // prompts (attention data-parallel) at the group's period.
      int replicas = (int) InferencePlanner.wholeGroups(r.group(), (long) Math.floor(rate / perReplica) + 1);
      for (int tries = 0; tries < InferencePlanner.TRIES
          && (long) replicas * r.tp() <= InferencePlanner.MAX_DEVICES;
          tries++, replicas += r.group()) {
        double ttft = PrefillQueue.ttftAt(rate, replicas, periods, latencies,
            w.sloPercentile(), InferencePlanner.SEARCH_REQUESTS, Serving.SEED);
        if (target == 0 || ttft <= target) {
          best = smaller(best, new Sized(new InferencePlanner.PoolConfig(r.tp(), r.ep(),
              replicas, limit, replicas * r.tp(), r.twoBatchOverlap(), r.redundantExperts()),
              ttft));
          break;
        }
      }
    }
    return best;
  }

  /**
   * The decode replicas of configuration {@code r} that hold the SLO percentile of the sequences
   * in flight at the rate, each at the largest batch that fits and meets the TPOT target; null
   * when one sequence misses it or does not fit.
   */
  static Sized decodePool(TransformerSpec model, InferenceWorkload w,
      InferencePlanner.Replica r, InferenceEstimator estimator) {
    Disaggregation.Pool pool = pool(r);
    long most = Disaggregated.decode(estimator, model, r.cluster(), r.base(), pool, 1)
        .maxBatchSize();
    if (most < 1) {
      return null;
    }
    int batch = (int) Math.min(most, 1 << 16);
    InferenceEstimate e = Disaggregated.decode(estimator, model, r.cluster(), r.base(), pool,
        batch);
    double target = w.tpotSloSeconds();
    if (target > 0 && e.tpotSeconds() > target) {
      e = Disaggregated.largest(batch - 1, b -> Disaggregated.decode(estimator, model,
          r.cluster(), r.base(), pool, b), x -> x.tpotSeconds() <= target);
      batch = e.batchSize();
    }
    if (!e.feasible() || !(e.tpotSeconds() > 0) || (target > 0 && e.tpotSeconds() > target)) {
      return null;
    }
    double inFlight = w.arrivalRatePerSecond() * w.outputTokens() * e.tpotSeconds();
    int slots = new PoissonDistribution(null, inFlight, PoissonDistribution.DEFAULT_EPSILON,
        PoissonDistribution.DEFAULT_MAX_ITERATIONS)
        .inverseCumulativeProbability(w.sloPercentile() / 100);
    long replicas = InferencePlanner.wholeGroups(r.group(), Math.max(1, (slots + batch - 1) / batch));
    if (replicas * r.tp() > InferencePlanner.MAX_DEVICES) {
      return null;
    }
    return new Sized(new InferencePlanner.PoolConfig(r.tp(), r.ep(), (int) replicas, batch,
        (int) replicas * r.tp(), r.twoBatchOverlap(), r.redundantExperts()), e.tpotSeconds());
  }
}
