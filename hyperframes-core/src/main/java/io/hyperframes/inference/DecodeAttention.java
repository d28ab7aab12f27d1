package io.hyperframes.inference;

import io.hyperframes.json.Ids;

/**
 * How a serving engine's decode-attention kernel reads the KV cache of a grouped-query (GQA) or
 * multi-query model, where several query heads share one KV head.
 *
 * <ul>
 *   <li>{@link #GROUPED} (the default): the kernel processes the query heads of a group together
 *       and reads each KV head's cache once per step. TensorRT-LLM's XQA kernel does this (its
 *       documentation, "XQA Optimization": a kernel for MQA/GQA in the generation phase), as do
 *       FlashInfer's and FlashAttention's decode kernels.
 *   <li>{@link #PER_HEAD}: one thread block per query head, each reading the cache of its KV
 *       head, so a KV head's cache is read once for every query head that shares it:
 *       {@code heads / kvHeads} times the grouped traffic. This is the masked multi-head
 *       attention kernel of FasterTransformer and TensorRT-LLM that runs when XQA does not
 *       (TensorRT-LLM up to v0.9, where XQA was opt-in with {@code TRTLLM_ENABLE_XQA=1},
 *       docs/source/performance.md of v0.9.0, "Benchmarking per Model").
 * </ul>
 *
 * <p>A multi-head model (as many KV heads as query heads) reads the same bytes either way.
 */
public enum DecodeAttention {
  GROUPED,
  PER_HEAD;

  private final String id = Ids.hyphenated(this);

  /** The JSON name ("grouped" or "per-head"). */
  public String id() {
    return id;
  }

  /**
   * The query heads whose KV-cache reads one step of one sequence costs: the KV heads for
   * {@link #GROUPED}, every query head for {@link #PER_HEAD}.
   */
  public int headsRead(int heads, int kvHeads) {
    return this == PER_HEAD ? heads : kvHeads;
  }

  /**
   * Parses "grouped" or "per-head".
   *
   * @throws IllegalArgumentException naming {@code field} and the value otherwise
   */
  public static DecodeAttention fromId(String field, String value) {
    return Ids.byId(DecodeAttention.class, DecodeAttention::id, field, value, "decode attention");
  }
}
