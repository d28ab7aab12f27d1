package io.hyperframes.inference;

import static com.google.common.base.Preconditions.checkArgument;

import io.hyperframes.hardware.Cluster;
import io.hyperframes.model.TransformerSpec;

/**
 * A serving estimate request: model, cluster, workload and the replica layout ({@code ep}: the
 * routed experts split over ep of the tp ranks, {@link InferenceEstimator#estimate(TransformerSpec,
 * Cluster, InferenceWorkload, int, int, int, int)}).
 */
public record InferenceRequest(TransformerSpec model, Cluster cluster, InferenceWorkload workload,
    int tp, int ep, int pp, int replicas) {
  public InferenceRequest {
    checkArgument(model != null, "model: an architecture is needed for inference");
    checkArgument(cluster != null, "cluster: must be given");
    checkArgument(workload != null, "workload: must be given");
  }

  /** A request without expert parallelism ({@code ep = 1}). */
  public InferenceRequest(TransformerSpec model, Cluster cluster, InferenceWorkload workload,
      int tp, int pp, int replicas) {
    this(model, cluster, workload, tp, 1, pp, replicas);
  }
}
