package io.hyperframes.workload;

import static com.google.common.base.Preconditions.checkArgument;

import io.hyperframes.hardware.Checks;
import io.hyperframes.precision.Optimizer;
import io.hyperframes.precision.PrecisionRecipe;

/**
 * A training job: precision recipe, optimizer, global batch, token budget and attention kernel.
 *
 * @param precision mixed-precision recipe (gradient format already applied)
 * @param optimizer optimizer, by the state it keeps
 * @param globalBatchSize sequences per optimizer step; 0 when not given (parameters-only models)
 * @param trainingTokens token budget for time-to-train; 0 when not given
 * @param attention attention kernel ({@link Attention#STANDARD} unless the job says otherwise)
 */
public record TrainingWorkload(PrecisionRecipe precision, Optimizer optimizer, int globalBatchSize,
    double trainingTokens, Attention attention) {

  /** A job with standard (materialised) attention, as in the validated reference runs. */
  public TrainingWorkload(PrecisionRecipe precision, Optimizer optimizer, int globalBatchSize,
      double trainingTokens) {
    this(precision, optimizer, globalBatchSize, trainingTokens, Attention.STANDARD);
  }

  public TrainingWorkload {
    checkArgument(precision != null, "workload.precision: must be given");
    checkArgument(optimizer != null, "workload.optimizer: must be given");
    checkArgument(attention != null, "workload.attention: must be given");
    checkArgument(globalBatchSize >= 0, "workload.globalBatchSize: must be > 0, got %s",
        globalBatchSize);
    Checks.nonNegative("workload.trainingTokens", trainingTokens);
  }
}
