package io.hyperframes.precision;

import static com.google.common.base.Preconditions.checkArgument;

import com.google.common.collect.ImmutableSet;
import java.util.Locale;
import java.util.Set;

/**
 * A mixed-precision training recipe: the format of each kind of tensor, which format the matrix
 * multiplications run in, and which operations stay in FP32.
 *
 * <p>The byte counts follow Micikevicius et al. 2018, "Mixed Precision Training" (arXiv
 * 1710.03740), §3, and Rajbhandari et al. 2020, "ZeRO" (arXiv 1910.02054), §3.1: FP16/BF16 weights
 * and gradients with an FP32 master copy and FP32 Adam moments give 2 + 2 + 12 = 16 bytes per
 * parameter; Megatron-LM keeps FP32 main gradients, 2 + 4 + 12 = 18 (Korthikanti et al. 2022,
 * arXiv 2205.05198, §5 and Figure 1).
 *
 * @param name recipe identifier as in requests ("bf16-mixed")
 * @param compute format the matrix multiplications run in (selects the peak FLOP/s)
 * @param weights format of the working weights used in forward and backward
 * @param master format of the master weights kept by the optimizer, or {@code null} if the working
 *     weights are the master
 * @param gradients format gradients are accumulated and reduced in
 * @param activations format of stored activations
 * @param fp32Ops operations that stay in FP32 (documentation of the recipe)
 */
public record PrecisionRecipe(
    String name,
    NumberFormat compute,
    NumberFormat weights,
    NumberFormat master,
    NumberFormat gradients,
    NumberFormat activations,
    Set<String> fp32Ops) {

  public PrecisionRecipe {
    checkArgument(name != null && !name.isBlank(), "precision: name must be given");
    checkArgument(compute != null && weights != null && gradients != null && activations != null,
        "precision %s: compute, weights, gradients and activations formats must be given", name);
    fp32Ops = ImmutableSet.copyOf(fp32Ops);
  }

  private static final Set<String> MIXED_FP32_OPS =
      ImmutableSet.of("softmax", "layernorm", "loss", "optimizer-update", "gradient-norm");

  /** Bytes per parameter of the working weights. */
  public double weightBytes() {
    return weights.bytes();
  }

  /** Bytes per parameter of the gradients. */
  public double gradientBytes() {
    return gradients.bytes();
  }

  /** Bytes per parameter of the master copy (0 when the working weights are the master). */
  public double masterBytes() {
    return master == null ? 0.0 : master.bytes();
  }

  /**
   * The format attention's matmuls run in: the activation format for an FP8 recipe where the
   * device has it (Transformer Engine's {@code DotProductAttention} computes in the activation
   * format unless FP8 attention is enabled explicitly; NVIDIA Transformer Engine documentation,
   * "Using FP8 with Transformer Engine"), else the compute format.
   *
   * @param supported whether the device computes in a format
   * @throws IllegalArgumentException if {@code supported} is missing
   */
  public NumberFormat attentionFormat(java.util.function.Predicate<NumberFormat> supported) {
    checkArgument(supported != null, "supported: must be given");
    return compute.isFp8() && supported.test(activations) ? activations : compute;
  }

  /**
   * The format the element-wise kernels (norms, residual adds, activation functions) run in: the
   * activation format where the device has it, else the compute format. An FP8 recipe's
   * element-wise work is on its BF16 activations (Transformer Engine casts to FP8 only at a linear
   * layer's input).
   *
   * @param supported whether the device computes in a format
   * @throws IllegalArgumentException if {@code supported} is missing
   */
  public NumberFormat elementwiseFormat(java.util.function.Predicate<NumberFormat> supported) {
    checkArgument(supported != null, "supported: must be given");
    return supported.test(activations) ? activations : compute;
  }

  /** Bytes per element of stored activations. */
  public double activationBytes() {
    return activations.bytes();
  }

  /** The same recipe with gradients kept in another format. */
  public PrecisionRecipe withGradients(NumberFormat format) {
    return new PrecisionRecipe(name, compute, weights, master, format, activations, fp32Ops);
  }

  /**
   * The named recipe: "fp32", "fp16-mixed", "bf16-mixed" or "fp8-mixed" (FP8 matmuls with BF16
   * weights as in NVIDIA Transformer Engine; gradients default to the weight format).
   *
   * @throws IllegalArgumentException naming the field and the value when the name is unknown
   */
  public static PrecisionRecipe named(String field, String value) {
    String v = value == null ? "" : value.trim().toLowerCase(Locale.ROOT);
    switch (v) {
      case "fp32":
        return new PrecisionRecipe("fp32", NumberFormat.FP32, NumberFormat.FP32, null,
            NumberFormat.FP32, NumberFormat.FP32, ImmutableSet.of("all"));
      case "tf32":
        return new PrecisionRecipe("tf32", NumberFormat.TF32, NumberFormat.FP32, null,
            NumberFormat.FP32, NumberFormat.FP32, ImmutableSet.of("all except matmul"));
      case "fp16-mixed":
        return new PrecisionRecipe("fp16-mixed", NumberFormat.FP16, NumberFormat.FP16,
            NumberFormat.FP32, NumberFormat.FP16, NumberFormat.FP16, MIXED_FP32_OPS);
      case "bf16-mixed":
        return new PrecisionRecipe("bf16-mixed", NumberFormat.BF16, NumberFormat.BF16,
            NumberFormat.FP32, NumberFormat.BF16, NumberFormat.BF16, MIXED_FP32_OPS);
      case "fp8-mixed":
        return new PrecisionRecipe("fp8-mixed", NumberFormat.FP8_E4M3, NumberFormat.BF16,
            NumberFormat.FP32, NumberFormat.BF16, NumberFormat.BF16, MIXED_FP32_OPS);
      default:
        throw new IllegalArgumentException(field + ": unknown precision '" + value
            + "' (expected fp32, tf32, fp16-mixed, bf16-mixed or fp8-mixed)");
    }
  }
}
