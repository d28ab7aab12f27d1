package io.hyperframes.inference;

import io.hyperframes.hardware.Cluster;
import io.hyperframes.model.TransformerSpec;

/**
 * The load model of one replica ({@link ServingLoad}) tabulated from the estimator: its prefill
 * and decode times at batches 1 to its limit; where the experts span replicas (ep &gt; tp), the
 * step times of its expert-parallel group with every replica at the same batch.
 */
final class ServingLoads {
  private ServingLoads() {}

  /**
   * The load model of one replica: prefill and decode times for batches 1 to the batch limit
   * (the memory bound, at most the workload's {@code maxNumSeqs}, by default
   * {@value Serving#MAX_SIMULATED_BATCH}).
   */
  static ServingLoad load(InferenceEstimator estimator, TransformerSpec m, Cluster replica,
      InferenceWorkload w, int tp, int pp) {
    return loadToFit(estimator, m, replica, w, tp, 1, pp);
  }

  /** As {@link #load(InferenceEstimator, TransformerSpec, Cluster, InferenceWorkload, int, int)}
   * with the routed experts split over {@code ep} of the {@code tp} ranks. */
  static ServingLoad loadToFit(InferenceEstimator estimator, TransformerSpec m, Cluster replica,
      InferenceWorkload w, int tp, int ep, int pp) {
    return loadToFit(estimator, m, replica, w, tp, ep, pp, false);
  }

  /**
   * As {@link #loadToFit(InferenceEstimator, TransformerSpec, Cluster, InferenceWorkload, int,
   * int, int)}; where the experts span replicas (ep &gt; tp), {@code group} is the cluster of
   * their expert-parallel group (ep/tp replicas) and {@code twoBatchOverlap} as in the
   * estimator. With pp &gt; 1 it is the load of one of the pp batches a pipeline keeps in
   * flight (one a stage, as vLLM's executors run pipeline parallelism:
   * {@code max_concurrent_batches} = pp, vllm/v1/executor/ray_executor.py of vllm-project/vllm
   * @ ff583b3c), each stepping at the whole pipeline's times and holding 1/pp of the KV-cache
   * memory.
   */
  static ServingLoad loadToFit(InferenceEstimator estimator, TransformerSpec m, Cluster group,
      InferenceWorkload w, int tp, int ep, int pp, boolean twoBatchOverlap) {
    InferenceWorkload one = w.withBatchSize(1);
    long fit = estimator.estimate(m, group, one, tp, ep, pp,
        Disaggregation.replicasPerGroup(tp, ep), twoBatchOverlap).maxBatchSize() / pp;
    return load(estimator, m, group, w, tp, ep, pp,
        (int) Math.max(1, Math.min(batchLimit(w), fit)), twoBatchOverlap);
  }

  /** The most sequences a simulated server runs: {@code workload.maxNumSeqs}, else 256. */
  static int batchLimit(InferenceWorkload w) {
    return w.maxNumSeqs() > 0 ? w.maxNumSeqs() : Serving.MAX_SIMULATED_BATCH;
  }

  /**
   * The load model of one replica with an explicit batch limit; where the experts span replicas
   * (ep &gt; tp), {@code group} is the cluster of their expert-parallel group and each step's
   * time is the group's with every replica at the same batch.
   */
  static ServingLoad load(InferenceEstimator estimator, TransformerSpec m, Cluster group,
      InferenceWorkload w, int tp, int ep, int pp, int limit, boolean twoBatchOverlap) {
    int replicas = Disaggregation.replicasPerGroup(tp, ep);
    double[] prefill = new double[limit + 1];
    double[] decode = new double[limit + 1];
    double request = 0;
    for (int b = 1; b <= limit; b++) {
      InferenceEstimate e = estimator.estimate(m, group, w.withBatchSize(b), tp, ep, pp,
          replicas, twoBatchOverlap);
      prefill[b] = e.prefillSeconds();
      decode[b] = e.decodeSecondsPerToken();
      request = e.requestSeconds();
    }
    return new ServingLoad(prefill, decode, w.outputTokens(), request);
  }
}
