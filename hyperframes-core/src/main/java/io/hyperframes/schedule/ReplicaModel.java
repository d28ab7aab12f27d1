package io.hyperframes.schedule;

import static com.google.common.base.Preconditions.checkArgument;

import io.hyperframes.inference.InferenceEstimate;
import io.hyperframes.inference.InferenceEstimator;
import io.hyperframes.inference.InferenceRequest;
import io.hyperframes.inference.InferenceWorkload;
import java.util.ArrayList;
import java.util.List;

/**
 * The iteration times and memory of one serving replica, what a continuous-batching server's
 * scheduler needs (iteration-level scheduling: Yu et al., "Orca", OSDI 2022, §3; Kwon et al.,
 * "vLLM", SOSP 2023, §4): an iteration either prefills some waiting prompts or decodes one token
 * of every running sequence.
 *
 * <p>Prefill of prompts with {@code T} tokens in all and Σp² over their lengths takes
 * {@code max(prefillFloor, prefillFixed + prefillPerToken·T + prefillPerSquare·Σp²)} (the matmuls
 * are linear in the tokens, attention quadratic in each prompt; a short prefill cannot be faster
 * than reading the weights once, the roofline's memory side: Williams et al., "Roofline", CACM
 * 2009); a decode step of {@code n} sequences holding
 * {@code K} context tokens in all takes {@code decodeFixed + decodePerSequence·n +
 * decodePerContextToken·K} (weights read once, work per sequence, the KV cache read). {@link
 * #fromServing} fits these coefficients to the serving estimator of {@code HyperFrames.serve()}.
 *
 * @param gpus GPUs one replica holds (tensor × pipeline parallel), ≥ 1
 * @param gpuMilli thousandths of each GPU it holds: 1000, or less for a replica on a slice of
 *     one GPU ({@link #fromServing(InferenceRequest, InferenceEstimator, int)})
 * @param maxBatch most sequences a replica runs at once, ≥ 1
 * @param kvTokens KV-cache capacity in tokens: a request is admitted only when its prompt and
 *     output fit next to those of the running ones (its memory is reserved on admission), ≥ 1
 * @param prefillTokenBudget most prompt tokens one prefill iteration takes (a longer prompt runs
 *     alone), ≥ 1
 * @param prefillFixed seconds of every prefill iteration, ≥ 0
 * @param prefillPerToken seconds per prompt token, ≥ 0
 * @param prefillPerSquare seconds per squared prompt token, ≥ 0
 * @param prefillFloor least seconds of a prefill iteration, ≥ 0
 * @param decodeFixed seconds of every decode step, ≥ 0
 * @param decodePerSequence seconds per running sequence, ≥ 0
 * @param decodePerContextToken seconds per context token read, ≥ 0
 * @param requestSeconds fixed time before a request's first token outside the iterations (the
 *     request path), ≥ 0
 * @param fitError largest relative error of the coefficients on the points they were fitted
 *     to (0 when given by hand)
 */
public record ReplicaModel(int gpus, int gpuMilli, int maxBatch, long kvTokens,
    int prefillTokenBudget, double prefillFixed, double prefillPerToken, double prefillPerSquare,
    double prefillFloor, double decodeFixed, double decodePerSequence,
    double decodePerContextToken, double requestSeconds, double fitError) {

  public ReplicaModel {
    checkArgument(gpus >= 1, "replica.gpus: must be >= 1, got %s", gpus);
    checkArgument(gpuMilli >= 1 && gpuMilli <= 1000 && (gpuMilli == 1000 || gpus == 1),
        "replica.gpuMilli: must be in [1, 1000], and 1000 unless the replica has one GPU;"
            + " got %s on %s GPUs", gpuMilli, gpus);
    checkArgument(maxBatch >= 1, "replica.maxBatch: must be >= 1, got %s", maxBatch);
    checkArgument(kvTokens >= 1, "replica.kvTokens: must be >= 1, got %s", kvTokens);
    checkArgument(prefillTokenBudget >= 1, "replica.prefillTokenBudget: must be >= 1, got %s",
        prefillTokenBudget);
    nonNegative("replica.prefillFixed", prefillFixed);
    nonNegative("replica.prefillPerToken", prefillPerToken);
    nonNegative("replica.prefillPerSquare", prefillPerSquare);
    nonNegative("replica.prefillFloor", prefillFloor);
    nonNegative("replica.decodeFixed", decodeFixed);
    nonNegative("replica.decodePerSequence", decodePerSequence);
    nonNegative("replica.decodePerContextToken", decodePerContextToken);
    nonNegative("replica.requestSeconds", requestSeconds);
    nonNegative("replica.fitError", fitError);
    checkArgument(prefillFixed + prefillPerToken + prefillPerSquare > 0,
        "replica: a prefill must take time (all prefill coefficients are 0)");
    checkArgument(decodeFixed + decodePerSequence + decodePerContextToken > 0,
        "replica: a decode step must take time (all decode coefficients are 0)");
  }

  private static void nonNegative(String field, double v) {
    checkArgument(Double.isFinite(v) && v >= 0, "%s: must be finite and >= 0, got %s", field, v);
  }

  /** Seconds of a prefill iteration over prompts of {@code tokens} tokens and Σp² {@code squares}. */
  public double prefillSeconds(long tokens, double squares) {
    return Math.max(prefillFloor, prefillFixed + prefillPerToken * tokens
        + prefillPerSquare * squares);
  }

  /** Seconds of a decode step of {@code sequences} holding {@code contextTokens} in all. */
  public double decodeSeconds(int sequences, long contextTokens) {
    return decodeFixed + decodePerSequence * sequences + decodePerContextToken * contextTokens;
  }

  /**
   * The replica of a serving request ({@code HyperFrames.serve()}'s vocabulary: model, cluster,
   * tp, pp and workload formats), its coefficients fitted by non-negative least squares to the
   * analytical estimator's prefill and decode times over prompts of 64–8 192 tokens and decode
   * batches of 1 to the workload's batch size at 256–4 096 tokens of context; the prefill
   * floor is the estimator's prefill of one token. The workload's
   * batch size is the replica's batch limit; its KV capacity is what the estimator leaves next
   * to the weights; the prefill budget is 8 192 tokens.
   *
   * @throws IllegalArgumentException if the request's replica is infeasible (the weights do not
   *     fit, for example)
   */
  public static ReplicaModel fromServing(InferenceRequest request) {
    return fromServing(request, InferenceEstimator.analytical());
  }

  /** As {@link #fromServing(InferenceRequest)} with a user's estimator. */
  public static ReplicaModel fromServing(InferenceRequest request,
      InferenceEstimator estimator) {
    return fromServing(request, estimator, 1000);
  }

  /**
   * As {@link #fromServing(InferenceRequest)}, the replica on {@code gpuMilli} thousandths of
   * one GPU: a slice with that share of the GPU's peak, memory bandwidth, memory and cache, as
   * NVIDIA's Multi-Instance GPU partitions streaming multiprocessors and memory slices
   * (NVIDIA MIG User Guide, "Partitioning"); fixed per-kernel costs do not shrink. Placed as a
   * shared-GPU task, beside other slices.
   *
   * @throws IllegalArgumentException if {@code gpuMilli} is outside [1, 1000], the request's
   *     replica has more than one GPU while {@code gpuMilli < 1000}, or it does not fit
   */
  public static ReplicaModel fromServing(InferenceRequest request, InferenceEstimator estimator,
      int gpuMilli) {
    checkArgument(request != null && estimator != null, "serving: request and estimator must be"
        + " given");
    int tp = request.tp();
    int pp = request.pp();
    checkArgument(gpuMilli >= 1 && gpuMilli <= 1000, "replica.gpuMilli: must be in [1, 1000],"
        + " got %s", gpuMilli);
    checkArgument(gpuMilli == 1000 || tp * pp == 1, "replica.gpuMilli: a slice of one GPU"
        + " needs tp = pp = 1, got tp %s, pp %s", tp, pp);
    var replica = request.cluster().withDevices(tp * pp);
    if (gpuMilli < 1000) {
      replica = replica.withAccelerator(slice(replica.accelerator(), gpuMilli / 1000.0));
    }
    InferenceWorkload w = request.workload();
    InferenceEstimate one = estimator.estimate(request.model(), replica, w.withBatchSize(1), tp,
        pp, 1);
    checkArgument(one.feasible(), "serving: the replica (tp %s, pp %s) is infeasible: %s", tp,
        pp, one.reasons());
    long kv = (long) Math.floor(one.maxBatchSize() * one.kvCacheBytesPerSequence()
        / Math.max(1e-9, one.kvCacheBytesPerToken()));
    checkArgument(kv >= 1, "serving: no room for a KV cache next to the weights (tp %s, pp %s)",
        tp, pp);
    int budget = 8192;
    List<double[]> prefill = new ArrayList<>();
    for (int p : new int[] {64, 256, 1024, 4096, 8192}) {
      for (int b : new int[] {1, 2, 4, 8}) {
        if ((long) b * p > budget) {
          continue;
        }
        InferenceEstimate e = estimator.estimate(request.model(), replica,
            workload(w, b, p, 1), tp, pp, 1);
        prefill.add(new double[] {1, (double) b * p, (double) b * p * p, e.prefillSeconds()});
      }
    }
    List<double[]> decode = new ArrayList<>();
    int limit = w.batchSize();
    for (int n : new int[] {1, 4, 16, 64, 256, limit}) {
      if (n > limit) {
        continue;
      }
      for (int c : new int[] {256, 1024, 4096}) {
        InferenceEstimate e = estimator.estimate(request.model(), replica, workload(w, n, c, 2),
            tp, pp, 1);
        // The estimator decodes at the prompt plus half the output: c + 1 here.
        decode.add(new double[] {1, n, (double) n * (c + 1), e.decodeSecondsPerToken()});
      }
    }
    double floor = estimator.estimate(request.model(), replica, workload(w, 1, 1, 1), tp, pp, 1)
        .prefillSeconds();
    double[] pc = nonNegativeLeastSquares(prefill);
    double[] dc = nonNegativeLeastSquares(decode);
    double err = Math.max(maxRelativeError(prefill, pc, floor),
        maxRelativeError(decode, dc, 0));
    return new ReplicaModel(tp * pp, gpuMilli, limit, kv, budget, pc[0], pc[1], pc[2], floor, dc[0],
        dc[1], dc[2], one.requestSeconds(), err);
  }

  /** The accelerator's {@code share}: peak, bandwidth, memory and cache scaled alike. */
  private static io.hyperframes.hardware.Accelerator slice(
      io.hyperframes.hardware.Accelerator a, double share) {
    java.util.Map<io.hyperframes.precision.NumberFormat, Double> peak =
        new java.util.EnumMap<>(io.hyperframes.precision.NumberFormat.class);
    a.peakFlopsPerSecond().forEach((f, v) -> peak.put(f, v * share));
    return new io.hyperframes.hardware.Accelerator(a.id() + "@" + Math.round(share * 1000),
        a.name() + " (" + Math.round(share * 1000) + "/1000 slice)", peak,
        a.memoryBytes() * share, a.memoryBandwidthBytesPerSecond() * share, a.l2Bytes() * share,
        a.matmulEfficiency(), a.matmulHalfDim(), a.matmulHalfRows(), a.memoryEfficiency(),
        a.powerWatts() * share, a.intraNode(), a.defaultNode(), a.fusedAttention(),
        a.generation(), a.kernels(), a.intervals(), a.source() + "; sliced to "
            + Math.round(share * 1000) + "/1000");
  }

  private static InferenceWorkload workload(InferenceWorkload w, int batch, int prompt,
      int output) {
    return new InferenceWorkload(w.weights(), w.kvCache(), batch, prompt, output, 0, 0, 0,
        w.sloPercentile(), w.blockTokens(), w.decodeAttention(), w.attention(), w.speculative(),
        w.prefixCacheHitRate(), w.moeLoadImbalance());
  }

  /**
   * Least squares of rows {x0, x1, x2, y}, in relative error, with coefficients ≥ 0: the best
   * of the ordinary solutions (Commons Math's QR least squares) over every subset of the three
   * features whose solution is non-negative (exact for three unknowns, Lawson and Hanson 1974,
   * ch. 23).
   */
  static double[] nonNegativeLeastSquares(List<double[]> rows) {
    double[] best = null;
    double bestSse = Double.POSITIVE_INFINITY;
    for (int mask = 1; mask < 8; mask++) {
      int[] cols = new int[Integer.bitCount(mask)];
      for (int i = 0, k = 0; i < 3; i++) {
        if ((mask >> i & 1) == 1) {
          cols[k++] = i;
        }
      }
      // Relative errors: each row divided by its y, so the target is 1.
      double[][] a = new double[rows.size()][cols.length];
      double[] ones = new double[rows.size()];
      for (int r = 0; r < rows.size(); r++) {
        double[] row = rows.get(r);
        for (int j = 0; j < cols.length; j++) {
          a[r][j] = row[cols[j]] / row[3];
        }
        ones[r] = 1;
      }
      double[] x;
      try {
        x = new org.apache.commons.math3.linear.QRDecomposition(
            new org.apache.commons.math3.linear.Array2DRowRealMatrix(a, false), 1e-12)
            .getSolver().solve(new org.apache.commons.math3.linear.ArrayRealVector(ones, false))
            .toArray();
      } catch (org.apache.commons.math3.linear.SingularMatrixException e) {
        continue;
      }
      double[] c = new double[3];
      boolean ok = true;
      for (int j = 0; j < cols.length; j++) {
        ok &= x[j] >= 0;
        c[cols[j]] = x[j];
      }
      if (!ok) {
        continue;
      }
      double sse = 0;
      for (double[] r : rows) {
        double e = (c[0] * r[0] + c[1] * r[1] + c[2] * r[2] - r[3]) / r[3];
        sse += e * e;
      }
      if (sse < bestSse) {
        bestSse = sse;
        best = c;
      }
    }
    checkArgument(best != null, "serving: the estimator's times admit no non-negative fit");
    return best;
  }

  private static double maxRelativeError(List<double[]> rows, double[] c, double floor) {
    double worst = 0;
    for (double[] r : rows) {
      double fit = Math.max(floor, c[0] * r[0] + c[1] * r[1] + c[2] * r[2]);
      worst = Math.max(worst, Math.abs((fit - r[3]) / r[3]));
    }
    return worst;
  }
}
