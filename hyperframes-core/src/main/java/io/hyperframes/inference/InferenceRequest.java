package io.hyperframes.inference;

import static com.google.common.base.Preconditions.checkArgument;

import io.hyperframes.hardware.Cluster;
import io.hyperframes.model.TransformerSpec;

/** A serving estimate request: model, cluster, workload and the replica layout. */
public record InferenceRequest(TransformerSpec model, Cluster cluster, InferenceWorkload workload,
    int tp, int pp, int replicas) {
  public InferenceRequest {
    checkArgument(model != null, "model: an architecture is needed for inference");
    checkArgument(cluster != null, "cluster: must be given");
    checkArgument(workload != null, "workload: must be given");
  }
}
