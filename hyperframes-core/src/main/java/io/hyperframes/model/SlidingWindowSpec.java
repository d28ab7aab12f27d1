package io.hyperframes.model;

import static com.google.common.base.Preconditions.checkArgument;

/**
 * Sliding-window attention ({@code model.slidingWindow}; Beltagy et al. 2020, Longformer, arXiv
 * 2004.05150, §3.1; Jiang et al. 2023, Mistral 7B, arXiv 2310.06825, §2): in a windowed layer
 * each query attends to the {@code tokens} positions up to and including its own, so the layer's
 * attention work and KV cache stop growing at the window. Models interleave windowed and full
 * layers: gpt-oss alternates them starting with a windowed layer (Hugging Face config
 * {@code layer_types}), Gemma 3 has one full layer in six.
 *
 * <p>{@code chunked}: chunked local attention instead (Llama 4, Hugging Face
 * {@code attention_chunk_size} and {@code layer_types} "chunked_attention"): the sequence is cut
 * into chunks of {@code tokens} and each query attends to the positions of its own chunk up to
 * itself, so a query at position t sees t mod W + 1 positions, W/2 on average, and the KV cache
 * keeps at most one chunk (transformers {@code modeling_llama4.py} @ 63210d0e, the chunked
 * attention mask).
 *
 * @param tokens window (or chunk) length W in tokens
 * @param fullAttentionEvery every {@code fullAttentionEvery}-th layer (layers n−1, 2n−1, …,
 *     counting from 0) attends to the whole context; 0 for every layer windowed
 * @param chunked chunks of W tokens instead of a window sliding with the query
 */
public record SlidingWindowSpec(int tokens, int fullAttentionEvery, boolean chunked) {

  /** Sliding windows ({@code chunked} false). */
  public SlidingWindowSpec(int tokens, int fullAttentionEvery) {
    this(tokens, fullAttentionEvery, false);
  }

  /** @throws IllegalArgumentException naming the field and the value */
  public SlidingWindowSpec {
    checkArgument(tokens > 0 && tokens <= 1 << 24,
        "model.slidingWindow.tokens: must be in [1, 16777216], got %s", tokens);
    checkArgument(fullAttentionEvery >= 0 && fullAttentionEvery <= 100_000,
        "model.slidingWindow.fullAttentionEvery: must be in [0, 100000], got %s",
        fullAttentionEvery);
    checkArgument(fullAttentionEvery != 1, "model.slidingWindow.fullAttentionEvery: 1 makes"
        + " every layer full; leave slidingWindow out instead");
  }

  /** Whether layer {@code i} (from 0) is windowed. */
  public boolean windowed(int i) {
    return fullAttentionEvery == 0 || (i + 1) % fullAttentionEvery != 0;
  }

  /** Windowed layers among {@code layers}. */
  public int windowedLayers(int layers) {
    return fullAttentionEvery == 0 ? layers : layers - layers / fullAttentionEvery;
  }

  /**
   * Query-key pairs a windowed layer computes over a causal sequence of {@code s} tokens, as a
   * share of the full causal layer's: (2·s·W − W²) / s² for W < s (the band of width W under the
   * diagonal, s·W − W²/2 pairs, over s²/2), 1 when the window covers the sequence. Chunked:
   * n = ⌊s/W⌋ full chunks of W²/2 pairs and a last one of r = s − n·W tokens, (n·W² + r²) / s².
   */
  /**
   * Query-key pairs of the queries at positions {@code (from, to]} of a causal sequence (a prompt
   * whose first {@code from} tokens are already in the KV cache), as a share of full causal
   * attention's over the same queries: {@code (G(to) − G(from)) / (to²/2 − from²/2)} with
   * {@code G(s)} the pairs of the first s queries (continuous, as {@link #pairShare(double)},
   * which is {@code from = 0}).
   */
  public double pairShare(double from, double to) {
    double full = (to * to - from * from) / 2;
    return full > 0 ? Math.min(1.0, (windowPairs(to) - windowPairs(from)) / full) : 1.0;
  }

  /** Pairs the first {@code s} queries of a causal sequence compute under this window. */
  private double windowPairs(double s) {
    double w = tokens;
    if (chunked) {
      double n = Math.floor(s / w);
      double r = s - n * w;
      return (n * w * w + r * r) / 2;
    }
    return s <= w ? s * s / 2 : w * w / 2 + (s - w) * w;
  }

  public double pairShare(double s) {
    double w = tokens;
    if (w >= s) {
      return 1.0;
    }
    if (chunked) {
      double n = Math.floor(s / w);
      double r = s - n * w;
      return (n * w * w + r * r) / (s * s);
    }
    return (2 * s * w - w * w) / (s * s);
  }

  /**
   * Positions a decode step's query reads in a windowed layer at a mean context of
   * {@code context} tokens: min(context, W) for a sliding window; for chunks, the context
   * itself within the first chunk and W/2 past it (a query at position t reads t mod W + 1,
   * uniform over a chunk as generation crosses it).
   */
  public double decodeSpan(double context) {
    if (context <= tokens) {
      return context;
    }
    return chunked ? tokens / 2.0 : tokens;
  }
}
