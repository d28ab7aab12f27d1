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
 * @param moeLoadImbalance the routed token copies the busiest expert-parallel rank computes in a
 *     dropless mixture-of-experts layer, over the mean (≥ 1; 1 for a balanced router, as
 *     Megatron-Core's {@code --moe-router-force-load-balancing} benchmarks run): see
 *     {@link #DEFAULT_MOE_LOAD_IMBALANCE}. It has no effect on a dense model, without expert
 *     parallelism (every rank then computes every expert over its own tokens) or with a capacity
 *     factor (every rank computes its padded capacity)
 */
public record TrainingWorkload(PrecisionRecipe precision, Optimizer optimizer, int globalBatchSize,
    double trainingTokens, Attention attention, Kernels kernels,
    GradientCompression gradientCompression, double moeLoadImbalance) {

  /**
   * The load imbalance a request that names none trains with: 1, balanced routing, as every
   * published Megatron-Core MoE benchmark recorded in docs/validation/moe-cases.json with its
   * routing stated runs it ({@code --moe-router-force-load-balancing}), and as the estimate
   * assumed before this input existed. It is not a measurement of a trained router: no
   * published per-rank load measurement has been verified yet (docs/model-reference.md,
   * "Dropless load imbalance"), so a user who knows the run's imbalance gives it
   */
  public static final double DEFAULT_MOE_LOAD_IMBALANCE = 1.0;

  /**
   * The load imbalance measured on dropless routing with an auxiliary loss: 1.54, fitted on the
   * four dropless/forced-balance pairs of Megatron-Core's Qwen3-235B-A22B long-context runs on
   * H100 (ep 8 of 128 experts, top-8; yanring/Megatron-MoE-ModelZoo
   * {@code best_practice/qwen3/readme.md} @ e8650517, docs/validation/moe-imbalance.json): for
   * each pair, the imbalance at which the estimate is slower than balanced by the published
   * ratio (1.54, 1.56, 1.54 and 1.50 at 16K-128K tokens, mean 1.535; refitted 2026-12-04 when
   * the token permutation was counted, 1.58 before, and in the 24th session when the expert
   * gradients moved to the expert data-parallel group, 1.53 before). Not the default: NVIDIA's
   * DGX Cloud Grok-1 runs, dropless too, come out 60 % (BF16) and 21 % (FP8) too slow with it,
   * where they are +18 % and −9 % at 1 (docs/model-reference.md, "Dropless load imbalance"). The planner's
   * {@code moe-balance-assumed} finding names it for dropless layouts planned at 1.
   */
  public static final double MEASURED_DROPLESS_MOE_LOAD_IMBALANCE = 1.54;

  /** A job with the default load imbalance ({@link #DEFAULT_MOE_LOAD_IMBALANCE}). */
  public TrainingWorkload(PrecisionRecipe precision, Optimizer optimizer, int globalBatchSize,
      double trainingTokens, Attention attention, Kernels kernels,
      GradientCompression gradientCompression) {
    this(precision, optimizer, globalBatchSize, trainingTokens, attention, kernels,
        gradientCompression, DEFAULT_MOE_LOAD_IMBALANCE);
  }

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
        kernels, codec, moeLoadImbalance);
  }

  /** The same job with another mixture-of-experts load imbalance. */
  public TrainingWorkload withMoeLoadImbalance(double imbalance) {
    return new TrainingWorkload(precision, optimizer, globalBatchSize, trainingTokens, attention,
        kernels, gradientCompression, imbalance);
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
    Checks.finite("workload.moeLoadImbalance", moeLoadImbalance);
    checkArgument(moeLoadImbalance >= 1 && moeLoadImbalance <= 64,
        "workload.moeLoadImbalance: must be in [1, 64] (the busiest rank's routed tokens over the"
            + " mean), got %s", moeLoadImbalance);
  }

  /** The same job with another global batch size. */
  public TrainingWorkload withGlobalBatchSize(int sequences) {
    return new TrainingWorkload(precision, optimizer, sequences, trainingTokens, attention,
        kernels, gradientCompression, moeLoadImbalance);
  }
}
