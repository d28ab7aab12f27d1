package io.hyperframes.request;

import static com.google.common.base.Preconditions.checkArgument;

import io.hyperframes.hardware.Cluster;
import io.hyperframes.model.ModelSpec;
import io.hyperframes.parallel.PartialLayout;
import io.hyperframes.workload.TrainingWorkload;

/**
 * A training estimate request: what model, on which cluster, trained how, and which layout fields
 * are fixed. Parse one from JSON with {@link Requests#parse(String)}.
 */
public record EstimateRequest(ModelSpec model, Cluster cluster, TrainingWorkload workload,
    PartialLayout layout) {
  public EstimateRequest {
    checkArgument(model != null, "model: must be given");
    checkArgument(cluster != null, "cluster: must be given");
    checkArgument(workload != null, "workload: must be given");
    checkArgument(layout != null, "layout: must be given (PartialLayout.OPEN for none)");
  }
}
