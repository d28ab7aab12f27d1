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
 * @param tokens window length W in tokens
 * @param fullAttentionEvery every {@code fullAttentionEvery}-th layer (layers n−1, 2n−1, …,
 *     counting from 0) attends to the whole context; 0 for every layer windowed
 */
public record SlidingWindowSpec(int tokens, int fullAttentionEvery) {

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
   * diagonal, s·W − W²/2 pairs, over s²/2), 1 when the window covers the sequence.
   */
  public double pairShare(double s) {
    double w = tokens;
    return w >= s ? 1.0 : (2 * s * w - w * w) / (s * s);
  }
}
