package io.hyperframes;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.hyperframes.catalog.Catalog;
import io.hyperframes.model.ModelSpec;
import io.hyperframes.model.TransformerSpec;
import io.hyperframes.plan.TrainingEstimate;
import org.junit.jupiter.api.Test;

/**
 * {@code "model": {"catalog": ID, "seqLen": N}}: a catalog model at another sequence length, the
 * way a long-context run is asked for, in JSON, from the builders and as the CLI's
 * {@code plan --model ID --seq-len N} writes it.
 */
class CatalogSeqLenTest {

  private static String request(String model) {
    return "{\"model\": " + model + ", \"cluster\": {\"accelerator\": \"h100-sxm-80gb\","
        + " \"devices\": 64}, \"workload\": {\"type\": \"training\", \"precision\":"
        + " \"bf16-mixed\", \"globalBatchSize\": 64}, \"layout\": {\"tp\": 8, \"cp\": 8,"
        + " \"dp\": 1}}";
  }

  private static ModelSpec model(String json) {
    return PlanRequests.parse(request(json)).model();
  }

  @Test
  void theCatalogModelAtAnotherLengthDiffersInTheLengthOnly() {
    TransformerSpec own = Catalog.builtIn().model("model", "llama3-8b");
    ModelSpec longer = model("{\"catalog\": \"llama3-8b\", \"seqLen\": 131072}");
    assertEquals(own.withSeqLen(131072), longer);
    assertEquals(131072, ((TransformerSpec) longer).seqLen());
    assertEquals(own, ((TransformerSpec) longer).withSeqLen(own.seqLen()));
    assertEquals(own.parameters(), longer.parameters(), 0.0);
    // Latent attention, experts and prediction modules carry over.
    TransformerSpec v3 = Catalog.builtIn().model("model", "deepseek-v3");
    TransformerSpec v3Long = v3.withSeqLen(32768);
    assertEquals(v3.mla(), v3Long.mla());
    assertEquals(v3.moe(), v3Long.moe());
    assertEquals(v3.mtpLayers(), v3Long.mtpLayers());
    assertEquals(v3.headDim(), v3Long.headDim());
  }

  @Test
  void theEstimateRunsAtTheGivenLength() {
    TrainingEstimate own = HyperFrames.estimate().model("llama3-8b")
        .accelerator("h100-sxm-80gb").devices(64)
        .training(t -> t.precision("bf16-mixed").globalBatchSize(64))
        .layout(l -> l.tp(8).cp(8).dp(1)).run();
    TrainingEstimate longer = HyperFrames.estimate().model("llama3-8b").seqLen(131072)
        .accelerator("h100-sxm-80gb").devices(64)
        .training(t -> t.precision("bf16-mixed").globalBatchSize(64))
        .layout(l -> l.tp(8).cp(8).dp(1)).run();
    assertEquals(64.0 * 131072, longer.tokensPerStep(), 0.0);
    assertEquals(64.0 * Catalog.builtIn().model("model", "llama3-8b").seqLen(),
        own.tokensPerStep(), 0.0);
    // Sixteen times the tokens a sequence, attention quadratic in them: more than 16 times the
    // step.
    assertTrue(longer.stepSeconds() > 16 * own.stepSeconds(),
        longer.stepSeconds() + " s against " + own.stepSeconds() + " s");
  }

  @Test
  void badValuesNameTheField() {
    assertEquals("model.seqLen: must be > 0, got 0", assertThrows(
        IllegalArgumentException.class,
        () -> model("{\"catalog\": \"llama3-8b\", \"seqLen\": 0}")).getMessage());
    assertEquals("model.catalog: give either a catalog id or an architecture, not both"
        + " (model.seqLen may go beside it: the catalog model at that sequence length)",
        assertThrows(IllegalArgumentException.class,
            () -> model("{\"catalog\": \"llama3-8b\", \"layers\": 4}")).getMessage());
  }
}
