package io.hyperframes.model;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.hyperframes.hardware.Catalog;
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
      "Qwen__Qwen3-32B.json, qwen3-32b, 4096"})
  void aConfigEqualsTheCatalogEntryMadeFromIt(String file, String id, int seqLen)
      throws IOException {
    assertEquals(Catalog.builtIn().model("model.catalog", id),
        ModelSpecs.fromHuggingFace("model.huggingFace", config(file), id, seqLen));
  }

  @ParameterizedTest
  @CsvSource({
      "mistralai__Mixtral-8x7B-v0.1.json, model.huggingFace.num_local_experts",
      "mistralai__Mixtral-8x22B-v0.1.json, model.huggingFace.num_local_experts",
      "Qwen__Qwen3-30B-A3B.json, model.huggingFace.num_experts",
      "Qwen__Qwen3-235B-A22B.json, model.huggingFace.num_experts",
      "deepseek-ai__DeepSeek-V3.json, model.huggingFace.n_routed_experts",
      "deepseek-ai__DeepSeek-R1.json, model.huggingFace.n_routed_experts",
      "openai__gpt-oss-20b.json, model.huggingFace.num_local_experts",
      "openai__gpt-oss-120b.json, model.huggingFace.num_local_experts"})
  void configsNotModelledYetAreRejectedNamingTheField(String file, String field)
      throws IOException {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> ModelSpecs.fromHuggingFace("model.huggingFace", config(file), null, 4096));
    assertTrue(e.getMessage().startsWith(field + ": "), e.getMessage());
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
