package io.hyperframes.model;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.hyperframes.catalog.Catalog;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Models read from real {@code config.json} files (src/test/resources/hf-configs, each with its
 * repository, path and commit in SOURCES.md there) have their published parameter counts, equal
 * the catalog entries made from them, and configurations not modelled yet are rejected naming
 * the field that says why.
 */
class HuggingFaceConfigTest {

  static JsonNode config(String file) throws IOException {
    try (InputStream in = HuggingFaceConfigTest.class.getResourceAsStream("/hf-configs/"
        + file)) {
      return new ObjectMapper().readTree(new String(in.readAllBytes(), StandardCharsets.UTF_8));
    }
  }

  /** Published totals, as SOURCES.md quotes them (model cards). */
  @ParameterizedTest
  @CsvSource({
      "meta-llama__Llama-3.1-8B.json, 8e9",
      "meta-llama__Llama-3.1-405B.json, 405e9",
      "Qwen__Qwen3-32B.json, 32.8e9"})
  void denseConfigsGiveTheirPublishedTotalWithinTwoPercent(String file, double published)
      throws IOException {
    TransformerSpec m = ModelSpecs.fromHuggingFace("model.huggingFace", config(file), null,
        4096);
    assertEquals(published, m.parameters(), 0.02 * published, file);
  }

  @Test
  void qwen3HasItsOwnHeadSize() throws IOException {
    TransformerSpec m = ModelSpecs.fromHuggingFace("model.huggingFace",
        config("Qwen__Qwen3-32B.json"), "qwen3-32b", 4096);
    assertEquals(128, m.headDim());
    assertEquals(8192, m.qDim(), "64 heads of 128: wider than hidden 5120");
    // Non-embedding parameters: the card's 31.2 B.
    assertEquals(31.2e9, m.parameters() - m.embeddingParameters(), 0.01 * 31.2e9);
  }

  @ParameterizedTest
  @CsvSource({
      "meta-llama__Llama-3.1-8B.json, llama3.1-8b, 8192",
      "meta-llama__Llama-3.1-405B.json, llama3.1-405b, 8192",
      "Qwen__Qwen3-32B.json, qwen3-32b, 4096",
      "mistralai__Mixtral-8x7B-v0.1.json, mixtral-8x7b, 32768",
      "mistralai__Mixtral-8x22B-v0.1.json, mixtral-8x22b, 65536",
      "Qwen__Qwen3-30B-A3B.json, qwen3-30b-a3b, 4096",
      "Qwen__Qwen3-235B-A22B.json, qwen3-235b-a22b, 4096",
      "deepseek-ai__DeepSeek-V3.json, deepseek-v3, 4096",
      "deepseek-ai__DeepSeek-R1.json, deepseek-v3, 4096",
      "openai__gpt-oss-120b.json, gpt-oss-120b, 4096",
      "openai__gpt-oss-20b.json, gpt-oss-20b, 4096"})
  void aConfigEqualsTheCatalogEntryMadeFromIt(String file, String id, int seqLen)
      throws IOException {
    assertEquals(Catalog.builtIn().model("model.catalog", id),
        ModelSpecs.fromHuggingFace("model.huggingFace", config(file), id, seqLen));
  }

  /**
   * Published totals and active counts, as SOURCES.md quotes them: Mixtral's announcements
   * (46.7 B / 12.9 B; 141 B / 39 B), Qwen3's cards (235 B / 22 B; 30.5 B / 3.3 B). Totals within
   * 1 %, active within 3 % (embedding and output layer counted as active, the cards' and
   * Mistral's convention).
   */
  @ParameterizedTest
  @CsvSource({
      "mistralai__Mixtral-8x7B-v0.1.json, 46.7e9, 12.9e9",
      "mistralai__Mixtral-8x22B-v0.1.json, 141e9, 39e9",
      "Qwen__Qwen3-235B-A22B.json, 235e9, 22e9",
      "Qwen__Qwen3-30B-A3B.json, 30.5e9, 3.3e9"})
  void mixturesOfExpertsGiveTheirPublishedTotalAndActiveCounts(String file, double total,
      double active) throws IOException {
    TransformerSpec m = ModelSpecs.fromHuggingFace("model.huggingFace", config(file), null,
        4096);
    assertTrue(m.isMoe(), file);
    assertEquals(total, m.parameters(), 0.01 * total, file + " total");
    assertEquals(active, m.activeParameters(), 0.03 * active, file + " active");
  }

  /**
   * DeepSeek-V3 (deepseek-ai/DeepSeek-V3 README.md @ 06dbd30b: "671B total parameters with 37B
   * activated for each token", the main model without the 14 B multi-token-prediction module;
   * README_WEIGHTS.md @ 0b39205a: 36.7 B active including the 0.9 B embedding and 0.9 B output
   * head): total within 1 %, active within 3 %, and its latent KV cache of 61 · (512 + 64)
   * elements per token, 2 bytes each in BF16, on every tensor-parallel rank.
   */
  @Test
  void deepSeekV3HasItsPublishedCountsAndALatentKvCache() throws IOException {
    TransformerSpec m = ModelSpecs.fromHuggingFace("model.huggingFace",
        config("deepseek-ai__DeepSeek-V3.json"), null, 4096);
    assertEquals(671e9, m.parameters(), 0.01 * 671e9);
    assertEquals(37e9, m.activeParameters(), 0.03 * 37e9);
    assertEquals(36.7e9, m.activeParameters(), 0.03 * 36.7e9);
    assertEquals(58, m.moeLayers());
    for (int tp : new int[] {1, 8, 16}) {
      assertEquals(61.0 * (512 + 64) * 2, m.layers() * m.kvCacheElementsPerTokenPerLayer(tp) * 2,
          "tp " + tp);
    }
    assertEquals(192, m.headDim());
    assertEquals(128L * 128, m.valueDim());
    // README_WEIGHTS.md @ 0b39205a: the MTP module has "11.5B unique parameters, excluding the
    // shared 0.9B Embedding and 0.9B output Head"; it is trained but not in the 671 B.
    assertEquals(1, m.mtpLayers());
    assertEquals(11.5e9, m.mtpParameters(), 0.03 * 11.5e9);
    TransformerSpec without = new TransformerSpec(m.name(), m.layers(), m.hidden(), m.heads(),
        m.kvHeads(), m.ffnHidden(), m.gatedMlp(), m.vocab(), m.seqLen(), m.tiedEmbeddings(),
        m.headDim(), m.moe(), m.mla(), m.slidingWindow(), 0);
    assertEquals(without.parameters(), m.parameters(), 0.0);
    assertTrue(m.trainingFlopsPerToken() > without.trainingFlopsPerToken() * 1.01);
  }

  /**
   * gpt-oss (openai/gpt-oss README.md @ 0492bd3e: "117B parameters with 5.1B active parameters",
   * "21B parameters with 3.6B active parameters"): totals within 1 % and 2 %. The published
   * active counts leave out the input embedding table (a lookup of one row per token): with it
   * the 120b model is 5.7 B, without it 5.1 B, within 3 %. Alternate layers attend to a
   * 128-token window, starting with the first.
   */
  @ParameterizedTest
  @CsvSource({
      "openai__gpt-oss-120b.json, 117e9, 5.1e9, 0.01",
      "openai__gpt-oss-20b.json, 21e9, 3.6e9, 0.02"})
  void gptOssGivesItsPublishedCountsAndAlternatesWindows(String file, double total,
      double active, double tolerance) throws IOException {
    TransformerSpec m = ModelSpecs.fromHuggingFace("model.huggingFace", config(file), null,
        4096);
    assertEquals(total, m.parameters(), tolerance * total, file);
    double withoutInputEmbedding = m.activeParameters() - (double) m.vocab() * m.hidden();
    assertEquals(active, withoutInputEmbedding, 0.03 * active, file);
    assertEquals(128, m.slidingWindow().tokens());
    assertTrue(m.slidingWindow().windowed(0) && !m.slidingWindow().windowed(1));
    assertEquals(m.layers() / 2, m.windowedLayers());
  }

  @Test
  void aLayerPatternThatIsNotPeriodicIsNamed() throws IOException {
    ObjectNode c = (ObjectNode) config("openai__gpt-oss-20b.json");
    ((com.fasterxml.jackson.databind.node.ArrayNode) c.get("layer_types")).set(2,
        new com.fasterxml.jackson.databind.node.TextNode("full_attention"));
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> ModelSpecs.fromHuggingFace("model.huggingFace", c, null, 4096));
    assertTrue(e.getMessage().startsWith("model.huggingFace.layer_types[2]: 'full_attention'"),
        e.getMessage());
  }

  @Test
  void aMissingFieldOrAnUnknownArchitectureIsNamed() throws IOException {
    ObjectNode c = (ObjectNode) config("meta-llama__Llama-3.1-8B.json");
    c.remove("intermediate_size");
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> ModelSpecs.fromHuggingFace("model.huggingFace", c, null, 4096));
    assertEquals("model.huggingFace.intermediate_size: missing required field", e.getMessage());
    ObjectNode d = (ObjectNode) config("meta-llama__Llama-3.1-8B.json");
    d.putArray("architectures").add("FalconForCausalLM");
    assertTrue(assertThrows(IllegalArgumentException.class,
        () -> ModelSpecs.fromHuggingFace("model.huggingFace", d, null, 4096)).getMessage()
        .startsWith("model.huggingFace.architectures: 'FalconForCausalLM' is not read"));
    ObjectNode w = (ObjectNode) config("meta-llama__Llama-3.1-8B.json");
    w.put("sliding_window", 4096);
    assertTrue(assertThrows(IllegalArgumentException.class,
        () -> ModelSpecs.fromHuggingFace("model.huggingFace", w, null, 8192)).getMessage()
        .startsWith("model.huggingFace.sliding_window: 4096"));
    assertThrows(IllegalArgumentException.class, () -> ModelSpecs.fromHuggingFace("{"));
  }

  @Test
  void theOneArgumentFormReadsTheContextLength() throws IOException {
    TransformerSpec m = ModelSpecs.fromHuggingFace(config("meta-llama__Llama-3.1-8B.json")
        .toString());
    assertEquals(131072, m.seqLen());
  }
}
