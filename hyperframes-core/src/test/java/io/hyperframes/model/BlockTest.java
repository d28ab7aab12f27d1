package io.hyperframes.model;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.hyperframes.catalog.Catalog;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The blocks of catalog models, with the published conventions they carry. */
class BlockTest {

  private static List<String> kinds(List<Block> blocks) {
    return blocks.stream().map(Block::kind).toList();
  }

  /**
   * GPT style with f = 4h: the block sum is Narayanan et al. 2021 (arXiv 2104.04473) §5.1's
   * P = 12lh²(1 + 13/(12h) + (V + s)/(12lh)) and the final LayerNorm, and the training FLOPs per token their
   * 72lh²(1 + s/(6h) + V/(12lh)) per token of the 3× convention (§5.1: 96Bslh² per batch with
   * recomputation, 4× instead of 3×).
   */
  @Test
  void gptStyleIsNarayanansClosedForm() {
    int l = 96;
    int h = 12288;
    int v = 51200;
    int s = 2048;
    TransformerSpec gpt3 = new TransformerSpec("gpt3", l, h, 96, 96, 4 * h, false, v, s, true);
    double hh = h;
    // plus the final LayerNorm's gain and bias, 2h, which the closed form leaves out
    double p = 12.0 * l * hh * hh * (1 + 13.0 / (12 * hh) + (v + s) / (12.0 * l * hh)) + 2 * hh;
    assertEquals(p, gpt3.parameters(), 1e-12 * p);
    double flops = 72.0 * l * hh * hh * (1 + s / (6.0 * hh) + v / (12.0 * l * hh));
    assertEquals(flops, gpt3.trainingFlopsPerToken(), 1e-12 * flops);
    assertEquals(List.of("embedding", "attention", "norms", "mlp", "output"),
        kinds(gpt3.blocks()));
  }

  /**
   * DeepSeek-V3: 3 dense layers then 58 MoE layers, latent attention, one multi-token-prediction
   * module that the published 671 B leaves out (its README @06dbd30b: 671 B main model, 14 B
   * MTP module; ../shared/models/hf-configs/SOURCES.md) and that the training FLOPs count.
   */
  @Test
  void deepSeekV3IsDenseLayersMoeLayersAndAnMtpModuleOutsideTheTotal() {
    TransformerSpec m = Catalog.builtIn().models().get("deepseek-v3");
    List<Block> blocks = m.blocks();
    assertEquals(List.of("embedding", "attention", "norms", "mlp", "moe", "output", "mtp"),
        kinds(blocks));
    assertEquals(3, blocks.get(3).count());
    assertEquals(58, blocks.get(4).count());
    Block mtp = blocks.get(6);
    assertFalse(mtp.inPublishedTotal());
    double published = 0.0;
    double all = 0.0;
    for (Block b : blocks) {
      all += b.count() * b.parameters();
      published += b.inPublishedTotal() ? b.count() * b.parameters() : 0.0;
    }
    assertEquals(published, m.parameters(), 1e-12 * published);
    assertEquals(all - published, m.mtpParameters(), 1e-6 * all);
    assertTrue(Math.abs(m.parameters() / 671e9 - 1) < 0.01, "671 B within 1 %");
    assertTrue(Math.abs(m.activeParameters() / 37e9 - 1) < 0.03, "37 B within 3 %");
  }

  /** Windowed and full layers are apart; a window never adds score FLOPs. */
  @Test
  void windowedAttentionIsItsOwnBlock() {
    TransformerSpec m = new TransformerSpec("w", 12, 1024, 16, 4, 2816, true, 32000, 32768,
        false, 0, null, null, new SlidingWindowSpec(4096, 6));
    List<Block> blocks = m.blocks();
    assertEquals(List.of("embedding", "attention", "windowed-attention", "norms", "mlp",
        "output"), kinds(blocks));
    Block.Attention full = (Block.Attention) blocks.get(1);
    Block.Attention windowed = (Block.Attention) blocks.get(2);
    assertEquals(2, full.count());
    assertEquals(10, windowed.count());
    assertEquals(full.parameters(), windowed.parameters());
    assertTrue(windowed.forwardFlopsPerToken() < full.forwardFlopsPerToken());
    assertEquals((2.0 * 32768 * 4096 - 4096.0 * 4096) / (32768.0 * 32768),
        windowed.pairShare(), 1e-15);
  }

  @Test
  void aDenseStackIsItsLayers() {
    DenseStackSpec d = new DenseStackSpec("mlp", List.of(784, 512, 10));
    assertEquals(List.of(new Block.Dense(784, 512), new Block.Dense(512, 10)), d.blocks());
    assertEquals(785.0 * 512 + 513.0 * 10, d.parameters());
    assertEquals(6.0 * (784 * 512 + 512 * 10), d.trainingFlopsPerSample());
  }

  @Test
  void aBlockBuiltWithABadSizeNamesItself() {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> new Block.Mlp(0, 1024, 4096, true));
    assertEquals("mlp: sizes must be > 0 and weights >= 0, got [0, 1024, 4096]",
        e.getMessage());
    e = assertThrows(IllegalArgumentException.class, () -> new Block.Dense(3, -1));
    assertTrue(e.getMessage().startsWith("dense: "), e.getMessage());
  }
}
