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

  /** Tile edge of the fused kernel's causal blocks (FlashAttention-2's 128 × 128 blocks). */
  static final double TILE = 128;

  /**
   * The share of the s × s (query, key) pairs a causal fused kernel computes, with blocks of 128
   * (FlashAttention-2, Dao 2023, arXiv 2307.08691, §3.1: blocks above the diagonal are skipped).
   * Each query block computes the key blocks up to its own; the last block may be partial. For
   * s = 128(n−1) + r, 1 ≤ r ≤ 128, the executed pairs are 128²·n(n−1)/2 + r·s. That is (n+1)/2n
   * of s² when s is a multiple of 128, and it never falls as s grows.
   *
   * @throws IllegalArgumentException if {@code tokens} is below 1 or not finite
   */
  public static double causalTileShare(double tokens) {
    if (!(tokens >= 1) || Double.isInfinite(tokens)) {
      throw new IllegalArgumentException("tokens: must be a finite number >= 1, got " + tokens);
    }
    double n = Math.ceil(tokens / TILE);
    double r = tokens - TILE * (n - 1);
    double pairs = TILE * TILE * n * (n - 1) / 2 + r * tokens;
    return pairs / (tokens * tokens);
  }

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
