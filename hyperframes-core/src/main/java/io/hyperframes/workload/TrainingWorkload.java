package io.hyperframes.workload;

import static com.google.common.base.Preconditions.checkArgument;

import io.hyperframes.hardware.Checks;
import io.hyperframes.precision.Optimizer;
import io.hyperframes.precision.PrecisionRecipe;

/**
 * A training job: precision recipe, optimizer, global batch and token budget.
 *
 * @param precision mixed-precision recipe (gradient format already applied)
 * @param optimizer optimizer, by the state it keeps
 * @param globalBatchSize sequences per optimizer step; 0 when not given (parameters-only models)
 * @param trainingTokens token budget for time-to-train; 0 when not given
 */
public record TrainingWorkload(PrecisionRecipe precision, Optimizer optimizer, int globalBatchSize,
    double trainingTokens) {

  public TrainingWorkload {
    checkArgument(precision != null, "workload.precision: must be given");
    checkArgument(optimizer != null, "workload.optimizer: must be given");
    checkArgument(globalBatchSize >= 0, "workload.globalBatchSize: must be > 0, got %s",
        globalBatchSize);
    Checks.nonNegative("workload.trainingTokens", trainingTokens);
  }
}
