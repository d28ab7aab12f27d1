package io.hyperframes.model;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.hyperframes.catalog.Catalog;
import java.io.IOException;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.api.Test;

/**
 * Llama 4 read from the text configurations in hf-configs/not-hub-faithful (aiconfigurator's
 * trimmed Instruct configs; no copy of the Hub files was found, hf-configs/SOURCES.md). The
 * published totals (meta-llama/llama-models MODEL_CARD.md @ 038acb9f: "17B (Activated) 109B
 * (Total)" and "17B (Activated) 400B (Total)") include the vision encoder, which is not read:
 * the language model is within 2 % of Scout's 109 B and 1 % of Maverick's 400 B, and the active
 * count (embedding and output layer counted, the card's convention as for Mixtral) within 3 %
 * of 17 B. Every fourth layer attends fully, the others in chunks of 8192 tokens.
 */
class Llama4ConfigTest {

  private static final String SCOUT =
      "not-hub-faithful/meta-llama__Llama-4-Scout-17B-16E-Instruct.aiconfigurator-trimmed.json";
  private static final String MAVERICK =
      "not-hub-faithful/meta-llama__Llama-4-Maverick-17B-128E-Instruct.aiconfigurator-trimmed.json";

  @ParameterizedTest
  @CsvSource({
      SCOUT + ", 109e9, 0.02, 48, llama4-scout",
      MAVERICK + ", 400e9, 0.01, 24, llama4-maverick"})
  void theLanguageModelHasItsPublishedCountsAndChunkedLayers(String file, double total,
      double tolerance, int moeLayers, String catalogId) throws IOException {
    TransformerSpec m = ModelSpecs.fromHuggingFace("model.huggingFace",
        HuggingFaceConfigTest.config(file), catalogId, 8192);
    assertEquals(total, m.parameters(), tolerance * total, file);
    assertEquals(17e9, m.activeParameters(), 0.03 * 17e9, file);
    assertEquals(moeLayers, m.moeLayers());
    assertEquals(1, m.moe().sharedExperts(), "Llama4TextMoe.shared_expert");
    SlidingWindowSpec w = m.slidingWindow();
    assertTrue(w.chunked());
    assertEquals(8192, w.tokens());
    assertEquals(36, m.windowedLayers(), "three layers in four chunked");
    assertTrue(w.windowed(0) && w.windowed(2) && !w.windowed(3));
    assertEquals(Catalog.builtIn().model("model.catalog", catalogId), m,
        "the catalog entry is the config's model");
  }

  @Test
  void maverickAlternatesDenseAndMoeLayersFromLayerOne() throws IOException {
    TransformerSpec m = ModelSpecs.fromHuggingFace("model.huggingFace",
        HuggingFaceConfigTest.config(MAVERICK), null, 8192);
    assertFalse(m.moe().isMoeLayer(0));
    assertTrue(m.moe().isMoeLayer(1));
    assertFalse(m.moe().isMoeLayer(46));
    assertTrue(m.moe().isMoeLayer(47));
    assertEquals(16384, m.ffnHidden(), "intermediate_size_mlp");
  }

  @Test
  void chunkedAttentionComputesWithinChunksAndKeepsOneChunk() {
    SlidingWindowSpec chunked = new SlidingWindowSpec(8192, 4, true);
    SlidingWindowSpec sliding = new SlidingWindowSpec(8192, 4);
    assertEquals(1.0, chunked.pairShare(8192), 0.0);
    // Four full chunks of a 32K sequence: 4 · W²/2 of the s²/2 pairs, a quarter.
    assertEquals(0.25, chunked.pairShare(32768), 1e-12);
    assertTrue(chunked.pairShare(32768) < sliding.pairShare(32768),
        "a chunk sees W/2 positions on average, a window W");
    assertEquals(4096.0, chunked.decodeSpan(100_000), 0.0);
    assertEquals(5000.0, chunked.decodeSpan(5000), 0.0);
    assertEquals(8192.0, sliding.decodeSpan(100_000), 0.0);
  }

  @Test
  void aLayerPatternTheClassWouldNotMakeIsNamed() throws IOException {
    ObjectNode c = (ObjectNode) HuggingFaceConfigTest.config(SCOUT);
    ObjectNode text = (ObjectNode) c.get("text_config");
    com.fasterxml.jackson.databind.node.ArrayNode moe = text.putArray("moe_layers");
    moe.add(0).add(2);
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> ModelSpecs.fromHuggingFace("model.huggingFace", c, null, 8192));
    assertTrue(e.getMessage().startsWith("model.huggingFace.text_config.moe_layers: [0,2]"),
        e.getMessage());
    text.remove("moe_layers");
    text.remove("num_experts_per_tok");
    assertEquals("model.huggingFace.text_config.num_experts_per_tok: missing required field",
        assertThrows(IllegalArgumentException.class,
            () -> ModelSpecs.fromHuggingFace("model.huggingFace", c, null, 8192)).getMessage());
    ObjectNode noText = (ObjectNode) HuggingFaceConfigTest.config(SCOUT);
    noText.remove("text_config");
    assertTrue(assertThrows(IllegalArgumentException.class,
        () -> ModelSpecs.fromHuggingFace("model.huggingFace", noText, null, 8192)).getMessage()
        .startsWith("model.huggingFace.text_config: missing required field"));
  }

  @Test
  void theOneArgumentFormReadsTheTextContextLength() throws IOException {
    assertEquals(10485760, ModelSpecs.fromHuggingFace(HuggingFaceConfigTest.config(SCOUT)
        .toString()).seqLen());
  }
}
