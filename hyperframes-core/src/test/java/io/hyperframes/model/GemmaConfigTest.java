package io.hyperframes.model;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import org.junit.jupiter.api.Test;

/**
 * Gemma 2 and 3 read from their config.json files (hf-configs/SOURCES.md). Published counts:
 * Gemma 2 technical report (arXiv 2408.00118v3) Table 2, 9B: 917,962,752 embedding and
 * 8,324,201,984 non-embedding parameters; Gemma 3 technical report (arXiv 2503.19786v1)
 * Table 1, 27B: 1,416M embedding and 25,600M non-embedding parameters, besides the 417M of the
 * vision encoder not read here. Within 1 % each (the tables' embeddings count a 256128-entry
 * vocabulary for Gemma 2 where the config has 256000).
 */
class GemmaConfigTest {

  @Test
  void gemma2AlternatesWindowsAndHasItsPublishedCounts() throws IOException {
    TransformerSpec m = ModelSpecs.fromHuggingFace("model.huggingFace",
        HuggingFaceConfigTest.config("google__gemma-2-9b-it.json"), null, 8192);
    assertEquals(917_962_752.0, m.embeddingParameters(), 0.01 * 917_962_752.0);
    assertEquals(8_324_201_984.0, m.parameters() - m.embeddingParameters(),
        0.01 * 8_324_201_984.0);
    assertTrue(m.tiedEmbeddings(), "Gemma2Config ties the embeddings by default");
    assertEquals(256, m.headDim());
    assertEquals(4096, m.qDim(), "16 heads of 256, wider than hidden 3584");
    assertTrue(m.gatedMlp());
    assertEquals(4096, m.slidingWindow().tokens());
    assertTrue(m.slidingWindow().windowed(0) && !m.slidingWindow().windowed(1));
    assertEquals(21, m.windowedLayers());
  }

  @Test
  void gemma3HasFiveWindowedLayersInSixAndItsPublishedCounts() throws IOException {
    TransformerSpec m = ModelSpecs.fromHuggingFace("model.huggingFace",
        HuggingFaceConfigTest.config("google__gemma-3-27b-it.json"), null, 8192);
    assertEquals(1_416e6, m.embeddingParameters(), 0.01 * 1_416e6);
    assertEquals(25_600e6, m.parameters() - m.embeddingParameters(), 0.01 * 25_600e6);
    assertEquals(262_208, m.vocab(), "Gemma3TextConfig's vocab_size");
    assertEquals(1024, m.slidingWindow().tokens());
    assertEquals(6, m.slidingWindow().fullAttentionEvery());
    assertEquals(62 - 10, m.windowedLayers(), "layers 5, 11, ..., 59 attend fully");
    assertEquals(131072, ModelSpecs.fromHuggingFace(HuggingFaceConfigTest.config(
        "google__gemma-3-27b-it.json").toString()).seqLen(), "the class's context length");
  }

  @Test
  void anotherActivationOrAMissingSizeIsNamed() throws IOException {
    ObjectNode c = (ObjectNode) HuggingFaceConfigTest.config("google__gemma-2-9b-it.json");
    c.put("hidden_activation", "relu");
    assertTrue(assertThrows(IllegalArgumentException.class,
        () -> ModelSpecs.fromHuggingFace("model.huggingFace", c, null, 8192)).getMessage()
        .startsWith("model.huggingFace.hidden_activation: 'relu'"));
    ObjectNode g = (ObjectNode) HuggingFaceConfigTest.config("google__gemma-3-27b-it.json");
    ((ObjectNode) g.get("text_config")).remove("num_attention_heads");
    assertEquals("model.huggingFace.text_config.num_attention_heads: missing required field",
        assertThrows(IllegalArgumentException.class,
            () -> ModelSpecs.fromHuggingFace("model.huggingFace", g, null, 8192)).getMessage());
  }
}
