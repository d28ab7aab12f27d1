package io.hyperframes.workload;

import java.util.Locale;

/**
 * How the element-wise work of a transformer layer (norms, rotary embedding, MLP activation,
 * residual adds, layout copies) reaches the device: as fused kernels or one kernel per operator.
 *
 * <p>{@link #FUSED} is what Megatron-LM / Transformer Engine run (fused layer norm, fused
 * bias-GeLU and bias-dropout-add, fused rotary embedding) and what {@code torch.compile} makes of
 * an eager model: each element-wise stage reads its inputs once and writes its output once.
 * {@link #EAGER} is a PyTorch model run without compilation, where every operator is its own
 * kernel with its own round trip through device memory. For the LLaMA block (gated MLP) that is
 * RMSNorm as {@code x.float()}, {@code pow}, {@code mean}, {@code x * rsqrt}, {@code type_as},
 * {@code * weight} (torchtitan {@code torchtitan/models/norms.py} {@code RMSNorm}, commit
 * 6a6f755), rotary embedding through complex FP32 views ({@code apply_rotary_emb} in
 * {@code torchtitan/models/llama/model.py}), SiLU and the gate product as two kernels, the
 * grouped-query {@code repeat_kv} copy and the {@code contiguous()} copy of the attention output.
 * The bytes of each are counted in docs/model-reference.md ("Element-wise kernels").
 */
public enum Kernels {
  FUSED,
  EAGER;

  /** The JSON name. */
  public String id() {
    return name().toLowerCase(Locale.ROOT);
  }

  /**
   * Parses "fused" or "eager".
   *
   * @throws IllegalArgumentException naming {@code field} and the value otherwise
   */
  public static Kernels fromId(String field, String id) {
    for (Kernels k : values()) {
      if (k.id().equalsIgnoreCase(id == null ? "" : id.trim())) {
        return k;
      }
    }
    throw new IllegalArgumentException(field + ": unknown kernels '" + id
        + "' (expected fused or eager)");
  }
}
