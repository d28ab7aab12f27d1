package io.hyperframes.workload;

import java.util.Locale;

/**
 * How the attention core (scores, softmax, weighted values) is computed.
 *
 * <p>{@link #STANDARD} materialises the s×s scores in device memory, as Megatron-LM did in the
 * runs of Narayanan et al. 2021 and Korthikanti et al. 2022: the softmax (and dropout) are
 * memory-bound passes over them and, without recomputation, they are stored for the backward
 * pass. {@link #FLASH} is the fused, tiled kernel of FlashAttention (Dao et al. 2022, arXiv
 * 2205.14135; FlashAttention-2, Dao 2023, arXiv 2307.08691): the scores never reach device
 * memory, causal blocks above the diagonal are skipped (half the work), and the backward pass
 * recomputes the scores (five matmuls against the forward's two).
 */
public enum Attention {
  STANDARD,
  FLASH;

  /** The JSON name. */
  public String id() {
    return name().toLowerCase(Locale.ROOT);
  }

  /**
   * Parses "standard" or "flash".
   *
   * @throws IllegalArgumentException naming {@code field} and the value otherwise
   */
  public static Attention fromId(String field, String id) {
    for (Attention a : values()) {
      if (a.id().equalsIgnoreCase(id)) {
        return a;
      }
    }
    throw new IllegalArgumentException(field + ": unknown attention '" + id
        + "' (standard, flash)");
  }
}
