package io.hyperframes;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.hyperframes.catalog.Catalog;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** {@code "model": {"huggingFace": {…config.json…}, "seqLen": N}} in a request. */
class HuggingFaceRequestTest {

  private static String qwen3() throws IOException {
    try (InputStream in = HuggingFaceRequestTest.class.getResourceAsStream(
        "/hf-configs/Qwen__Qwen3-32B.json")) {
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    }
  }

  private static String request(String model) {
    return "{\"model\": " + model + ", \"cluster\": {\"accelerator\": \"h100-sxm-80gb\","
        + " \"devices\": 64}, \"workload\": {\"type\": \"training\", \"precision\":"
        + " \"bf16-mixed\", \"globalBatchSize\": 256}}";
  }

  @Test
  void aRequestCarriesTheConfigAndPlansTheCatalogsModel() throws IOException {
    PlanRequestsView view = new PlanRequestsView(request("{\"name\": \"qwen3-32b\","
        + " \"seqLen\": 4096, \"huggingFace\": " + qwen3() + "}"));
    assertEquals(Catalog.builtIn().model("model.catalog", "qwen3-32b"), view.model());
  }

  @Test
  void theSequenceIsRequiredAndTheConfigStandsAlone() throws IOException {
    assertEquals("model.seqLen: missing required field beside model.huggingFace (the sequence"
        + " length you train or serve at; a config's max_position_embeddings is the model's"
        + " limit, not that length)", assertThrows(IllegalArgumentException.class,
            () -> new PlanRequestsView(request("{\"huggingFace\": " + qwen3() + "}")))
            .getMessage());
    // A path where the object belongs names the value and the command-line way to read a file.
    assertEquals("model.huggingFace: must be a config.json object, got the string"
        + " \"config.json\": put the file's JSON object here, or give the file to the command"
        + " line (plan --model-config FILE --seq-len N)", assertThrows(
            IllegalArgumentException.class, () -> new PlanRequestsView(request(
                "{\"seqLen\": 4096, \"huggingFace\": \"config.json\"}"))).getMessage());
    assertEquals("model.catalog: give either a catalog id or an architecture, not both"
        + " (model.seqLen may go beside it: the catalog model at that sequence length)",
        assertThrows(IllegalArgumentException.class, () -> new PlanRequestsView(request(
            "{\"catalog\": \"qwen3-32b\", \"huggingFace\": " + qwen3() + "}"))).getMessage());
    assertThrows(IllegalArgumentException.class, () -> new PlanRequestsView(request(
        "{\"seqLen\": 4096, \"layers\": 4, \"huggingFace\": " + qwen3() + "}")));
  }

  /** The model a plan request reads. */
  private record PlanRequestsView(io.hyperframes.model.ModelSpec model) {
    PlanRequestsView(String json) {
      this(PlanRequests.parse(json).model());
    }
  }
}
