package io.hyperframes.inference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.hyperframes.catalog.Catalog;
import org.junit.jupiter.api.Test;

/**
 * A serving replica of pipeline stages (layout.pp) under load: pp batches in flight, one a
 * stage, each a server at the whole pipeline's step times with 1/pp of the KV memory, the same
 * in workload.mode fixed (a rate) and slo (docs/inference.md, "A dense model no node holds").
 */
class PipelineServingTest {

  /** Llama 3.1 405B in BF16 on two nodes of H100, tp 8 pp 2, in the given mode. */
  private static String request(String mode) {
    return "{\"model\": {\"catalog\": \"llama3.1-405b\"},"
        + " \"cluster\": {\"accelerator\": \"h100-sxm-80gb\", \"devices\": 16},"
        + " \"workload\": {\"type\": \"inference\", \"precision\": \"bf16\", \"batchSize\": 1,"
        + " \"promptTokens\": 2000, \"outputTokens\": 500, " + mode + ","
        + " \"latencySlo\": {\"ttftSeconds\": 5, \"tpotSeconds\": 0.1}},"
        + " \"layout\": {\"tp\": 8, \"pp\": 2, \"dp\": 1}}";
  }

  @Test
  void aPipelineIsPpServersInFixedAndSloMode() {
    InferenceRequest fixed = Serving.parse(request("\"arrivalRatePerSecond\": 0.5"),
        Catalog.builtIn());
    InferenceResult loaded = Serving.evaluate(fixed);
    // One server: the load of one batch in flight, with half the replica's KV memory.
    ServingLoad one = ServingLoads.loadToFit(InferenceEstimator.analytical(), fixed.model(),
        fixed.cluster(), fixed.workload(), 8, 1, 2, false);
    assertEquals(2 * one.capacityPerSecond(), loaded.capacityPerSecond(),
        1e-9 * loaded.capacityPerSecond());
    InferenceResult slo = Serving.evaluate(Serving.parse(request("\"mode\": \"slo\""),
        Catalog.builtIn()));
    assertTrue(slo.slo().feasible(), slo.slo()::toString);
    assertEquals(loaded.capacityPerSecond(), slo.slo().capacityRequestsPerSecond(),
        1e-9 * loaded.capacityPerSecond());
    // The rate found is that of both batches in flight: at most their capacity, above one's.
    assertTrue(slo.slo().requestsPerSecond() <= loaded.capacityPerSecond()
        && slo.slo().requestsPerSecond() > 0, slo.slo()::toString);
  }
}
