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
 * @param attention attention kernel; null for the accelerator's default
 *     ({@link io.hyperframes.hardware.Accelerator#fusedAttention})
 * @param kernels how the element-wise work runs: fused (default) or one kernel per operator
 * @param gradientCompression the data-parallel gradient codec, or null for none
 */
public record TrainingWorkload(PrecisionRecipe precision, Optimizer optimizer, int globalBatchSize,
    double trainingTokens, Attention attention, Kernels kernels,
    GradientCompression gradientCompression) {

  /** A job with fused element-wise kernels. */
  public TrainingWorkload(PrecisionRecipe precision, Optimizer optimizer, int globalBatchSize,
      double trainingTokens, Attention attention) {
    this(precision, optimizer, globalBatchSize, trainingTokens, attention, Kernels.FUSED, null);
  }

  /** A job without gradient compression. */
  public TrainingWorkload(PrecisionRecipe precision, Optimizer optimizer, int globalBatchSize,
      double trainingTokens, Attention attention, Kernels kernels) {
    this(precision, optimizer, globalBatchSize, trainingTokens, attention, kernels, null);
  }

  /** The same job with another gradient codec (null for none). */
  public TrainingWorkload withGradientCompression(GradientCompression codec) {
    return new TrainingWorkload(precision, optimizer, globalBatchSize, trainingTokens, attention,
        kernels, codec);
  }

  /** A job with the accelerator's default attention kernel. */
  public TrainingWorkload(PrecisionRecipe precision, Optimizer optimizer, int globalBatchSize,
      double trainingTokens) {
    this(precision, optimizer, globalBatchSize, trainingTokens, null);
  }

  /** The attention kernel on an accelerator: the job's, or the accelerator's default. */
  public Attention attentionOn(io.hyperframes.hardware.Accelerator accelerator) {
    if (attention != null) {
      return attention;
    }
    return accelerator.fusedAttention() ? Attention.FLASH : Attention.STANDARD;
  }

  /**
   * The attention kernel a job runs under an engine: the job's, else fused where the engine's
   * default kernel is fused ({@link io.hyperframes.parallel.Engine#fusedAttentionByDefault()},
   * tensor-core generations), else the accelerator's framework default.
   */
  public Attention attentionOn(io.hyperframes.hardware.Accelerator accelerator,
      io.hyperframes.parallel.Engine engine) {
    if (attention == null && engine.fusedAttentionByDefault()
        && (accelerator.supports(io.hyperframes.precision.NumberFormat.BF16)
            || accelerator.supports(io.hyperframes.precision.NumberFormat.FP16))) {
      return Attention.FLASH;
    }
    return attentionOn(accelerator);
  }

  public TrainingWorkload {
    checkArgument(precision != null, "workload.precision: must be given");
    checkArgument(optimizer != null, "workload.optimizer: must be given");
    checkArgument(globalBatchSize >= 0, "workload.globalBatchSize: must be > 0, got %s",
        globalBatchSize);
    Checks.nonNegative("workload.trainingTokens", trainingTokens);
    checkArgument(kernels != null, "workload.kernels: must be given");
  }

  /** The same job with another global batch size. */
  public TrainingWorkload withGlobalBatchSize(int sequences) {
    return new TrainingWorkload(precision, optimizer, sequences, trainingTokens, attention,
        kernels, gradientCompression);
  }
}
