package io.hyperframes.inference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.hyperframes.HyperFrames;
import io.hyperframes.ServeBuilder;
import io.hyperframes.catalog.Catalog;
import io.hyperframes.hardware.Cluster;
import io.hyperframes.model.SlidingWindowSpec;
import io.hyperframes.model.TransformerSpec;
import io.hyperframes.precision.NumberFormat;
import io.hyperframes.workload.Attention;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import org.junit.jupiter.api.Test;

/**
 * {@code workload.prefixCacheHitRate}: prefill computes only the prompt tokens the prefix cache
 * does not hold, in whole KV blocks and never the last token (vLLM's rule), attending to the
 * cached ones; decode and memory are unchanged.
 */
class PrefixCacheTest {

  private static ServeBuilder llama(double hit) {
    ServeBuilder b = HyperFrames.serve().model("llama3-70b").accelerator("h100-sxm-80gb")
        .devices(4).precision("bf16").batch(8).prompt(4000).output(256);
    return hit > 0 ? b.prefixCacheHitRate(hit) : b;
  }

  @Test
  void cachedTokensAreWholeBlocksAndNeverTheLastToken() {
    InferenceWorkload w = new InferenceWorkload(NumberFormat.BF16, NumberFormat.BF16, 1, 1000,
        10, 0, 0, 0, 99, 16);
    assertEquals(0, w.cachedPromptTokens());
    assertEquals(496, w.withPrefixCacheHitRate(0.5).cachedPromptTokens());
    // At most 999 of 1000, rounded down to 62 blocks of 16.
    assertEquals(992, w.withPrefixCacheHitRate(0.9999).cachedPromptTokens());
  }

  @Test
  void aHitShortensPrefillAndLeavesDecodeAndMemory() {
    InferenceEstimate none = llama(0).run().estimate();
    InferenceEstimate zero = HyperFrames.serve().model("llama3-70b").accelerator("h100-sxm-80gb")
        .devices(4).precision("bf16").batch(8).prompt(4000).output(256).prefixCacheHitRate(0.0)
        .run().estimate();
    assertEquals(none, zero);
    InferenceEstimate half = llama(0.5).run().estimate();
    InferenceEstimate most = llama(0.9).run().estimate();
    assertTrue(half.prefillSeconds() < none.prefillSeconds());
    assertTrue(most.prefillSeconds() < half.prefillSeconds());
    // 400 of 4000 tokens computed: the matmuls a tenth, the attention more (each new token
    // attends to the whole prompt), so between a tenth and a fifth of the prefill.
    double share = most.prefillSeconds() / none.prefillSeconds();
    assertTrue(share > 0.1 && share < 0.2, "share " + share);
    assertEquals(none.decodeSecondsPerToken(), most.decodeSecondsPerToken(), 0.0);
    assertEquals(none.kvCacheBytes(), most.kvCacheBytes(), 0.0);
  }

  @Test
  void aBadRateIsNamed() {
    for (double bad : new double[] {1.0, -0.1, Double.NaN}) {
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
          () -> llama(0).prefixCacheHitRate(bad).run());
      assertTrue(e.getMessage().contains("workload.prefixCacheHitRate"), e.getMessage());
    }
  }

  @Property(tries = 1000)
  void prefillNeverGrowsWithTheHitRate(@ForAll @IntRange(min = 0, max = 3) int model,
      @ForAll @IntRange(min = 1, max = 64) int batch,
      @ForAll @IntRange(min = 2, max = 32768) int prompt,
      @ForAll @IntRange(min = 0, max = 98) int low, @ForAll @IntRange(min = 0, max = 98) int up,
      @ForAll boolean standard) {
    String[] models = {"llama3-8b", "gpt-oss-20b", "mixtral-8x7b", "deepseek-v3"};
    TransformerSpec m = Catalog.builtIn().models().get(models[model]);
    var acc = Catalog.builtIn().accelerators().get("h200-sxm-141gb");
    var node = Catalog.builtIn().nodes().get(acc.defaultNode());
    Cluster c = new Cluster(acc, 8, node.devicesPerNode(), acc.intraNode(), node.interNode());
    InferenceWorkload w = new InferenceWorkload(NumberFormat.FP8_E4M3, NumberFormat.FP8_E4M3,
        batch, prompt, 16, 0, 0, 0, 99, 16, DecodeAttention.GROUPED,
        standard ? Attention.STANDARD : Attention.FLASH);
    double a = low / 100.0;
    double b = Math.min(0.99, a + up / 100.0);
    InferenceEstimate lo = InferenceEstimator.analytical().estimate(m, c,
        w.withPrefixCacheHitRate(a), 8, 1, 1);
    InferenceEstimate hi = InferenceEstimator.analytical().estimate(m, c,
        w.withPrefixCacheHitRate(b), 8, 1, 1);
    assertTrue(hi.prefillSeconds() <= lo.prefillSeconds() * (1 + 1e-12),
        a + " -> " + b + ": " + lo.prefillSeconds() + " -> " + hi.prefillSeconds());
    assertTrue(hi.prefillSeconds() > 0 && Double.isFinite(hi.prefillSeconds()));
  }

  @Property(tries = 1000)
  void aWindowsShareOfAPromptsTailMatchesItsShareOfTheWhole(
      @ForAll @IntRange(min = 1, max = 8192) int window, @ForAll boolean chunked,
      @ForAll @IntRange(min = 1, max = 65536) int tokens,
      @ForAll @IntRange(min = 0, max = 65536) int cached) {
    SlidingWindowSpec s = new SlidingWindowSpec(window, 2, chunked);
    assertEquals(s.pairShare(tokens), s.pairShare(0, tokens), 1e-9);
    double tail = s.pairShare(cached, cached + tokens);
    assertTrue(tail >= 0 && tail <= 1, "share " + tail);
    // A sliding window keeps min(W, p) of a query's p keys, a share that falls with p: later
    // queries can only lose pairs to it (a chunked window's share rises and falls by chunk).
    if (!chunked) {
      assertTrue(s.pairShare(cached + tokens, cached + 2.0 * tokens) <= tail + 1e-9);
    }
  }
}
