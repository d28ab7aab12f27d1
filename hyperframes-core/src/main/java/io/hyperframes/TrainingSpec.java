package io.hyperframes;

import io.hyperframes.precision.Optimizer;
import io.hyperframes.workload.Attention;
import io.hyperframes.workload.GradientCompression;
import io.hyperframes.workload.Kernels;

/**
 * The training workload of a request ({@code "workload"} in JSON, {@code type} "training"):
 * immutable, each field set at most once, checked when the job runs.
 *
 * <pre>{@code
 * t -> t.precision("bf16-mixed").globalBatchSize(1536).tokens(3e11)
 * }</pre>
 */
public final class TrainingSpec {

  final Tree tree;

  private TrainingSpec(Tree tree) {
    this.tree = tree;
  }

  static TrainingSpec empty() {
    return new TrainingSpec(Tree.empty().with("type", "training"));
  }

  /** {@code precision}: "fp32", "fp16-mixed", "bf16-mixed", "fp8-mixed" … */
  public TrainingSpec precision(String recipe) {
    return new TrainingSpec(tree.with("precision", recipe));
  }

  /** {@code globalBatchSize}: sequences per optimizer step. */
  public TrainingSpec globalBatchSize(int sequences) {
    return new TrainingSpec(tree.with("globalBatchSize", sequences));
  }

  /** {@code trainingTokens}: the token budget (for time to train and cost). */
  public TrainingSpec tokens(double trainingTokens) {
    return new TrainingSpec(tree.with("trainingTokens", trainingTokens));
  }

  /** {@code optimizer}. */
  public TrainingSpec optimizer(Optimizer optimizer) {
    return new TrainingSpec(tree.with("optimizer", optimizer == null ? null
        : optimizer.id()));
  }

  /** {@code attention}: fused (flash) or materialised scores. */
  public TrainingSpec attention(Attention attention) {
    return new TrainingSpec(tree.with("attention", attention == null ? null : attention.id()));
  }

  /**
   * {@code kernels}: how the element-wise work runs — {@link Kernels#FUSED} (Megatron-LM,
   * Transformer Engine, {@code torch.compile}; the default) or {@link Kernels#EAGER} (a PyTorch
   * model run without compilation, one kernel per operator).
   */
  public TrainingSpec kernels(Kernels kernels) {
    return new TrainingSpec(tree.with("kernels", kernels == null ? null : kernels.id()));
  }

  /**
   * {@code gradientCompression}: the data-parallel gradient codec (ratio, device encode and
   * decode throughput, whether its messages add up in an all-reduce); see
   * {@link GradientCompression}.
   */
  public TrainingSpec gradientCompression(GradientCompression codec) {
    if (codec == null) {
      throw new IllegalArgumentException("gradientCompression: must be given");
    }
    TrainingSpec s = this;
    s = new TrainingSpec(s.tree.with("gradientCompression.codec", codec.codec()));
    s = new TrainingSpec(s.tree.with("gradientCompression.ratio", codec.ratio()));
    s = new TrainingSpec(s.tree.with("gradientCompression.encodeGBps", codec.encodeGBps()));
    s = new TrainingSpec(s.tree.with("gradientCompression.decodeGBps", codec.decodeGBps()));
    return new TrainingSpec(s.tree.with("gradientCompression.allReduce", codec.allReduce()));
  }

  /**
   * {@code moeLoadImbalance}: the routed token copies the busiest expert-parallel rank computes
   * in a dropless mixture-of-experts layer, over the mean (1 for a balanced router, as
   * benchmarks with forced balancing run; default
   * {@link io.hyperframes.workload.TrainingWorkload#DEFAULT_MOE_LOAD_IMBALANCE}).
   */
  public TrainingSpec moeLoadImbalance(double imbalance) {
    return new TrainingSpec(tree.with("moeLoadImbalance", imbalance));
  }

  /** {@code gradientPrecision}: the format gradients are kept and reduced in ("fp32", …). */
  public TrainingSpec gradientPrecision(String format) {
    return new TrainingSpec(tree.with("gradientPrecision", format));
  }
}
