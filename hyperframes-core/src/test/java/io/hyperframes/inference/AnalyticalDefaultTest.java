package io.hyperframes.inference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.hyperframes.catalog.Catalog;
import org.junit.jupiter.api.Test;

/**
 * Serving estimates take their percentiles from the analytical cluster model inside its
 * validated domain and from the simulation outside it, and say which.
 */
class AnalyticalDefaultTest {

  private static final double AGREEMENT = 0.05;

  private static InferenceRequest request(double rate) {
    return Serving.parse("""
        {"model": {"catalog": "llama2-7b"},
         "cluster": {"accelerator": "h100-sxm-80gb", "devices": 1},
         "workload": {"type": "inference", "precision": "fp16", "batchSize": 1,
                      "promptTokens": 512, "outputTokens": 128, "arrivalRatePerSecond": %s}}
        """.formatted(rate), Catalog.builtIn());
  }

  @Test
  void insideTheDomainTheAnalyticalModelAnswersAndAgreesWithTheSimulation() {
    InferenceRequest probe = request(1.0);
    ServingLoad load = ServingLoads.load(InferenceEstimator.analytical(), probe.model(),
        probe.cluster(), probe.workload(), 1, 1);
    double inside = 0.3 * load.capacityPerSecond();
    assertTrue(load.analyticalCovers(inside), "30 % of capacity is inside the domain");
    InferenceResult r = Serving.evaluate(request(inside));
    assertEquals("analytical", r.latencyModel());
    ServingLoad.Percentiles sim = load.simulate(inside, 20_000, Serving.SEED);
    assertEquals(sim.p99(), r.p99LatencySeconds(), AGREEMENT * sim.p99());
    assertEquals(sim.p50(), r.p50LatencySeconds(), AGREEMENT * sim.p50());

    double outside = 0.99 * load.capacityPerSecond();
    if (!load.analyticalCovers(outside)) {
      assertEquals("simulation", Serving.evaluate(request(outside)).latencyModel());
    }
    assertEquals("unloaded", Serving.evaluate(Serving.parse("""
        {"model": {"catalog": "llama2-7b"},
         "cluster": {"accelerator": "h100-sxm-80gb", "devices": 1},
         "workload": {"type": "inference", "precision": "fp16", "batchSize": 1,
                      "promptTokens": 512, "outputTokens": 128}}
        """, Catalog.builtIn())).latencyModel());
  }

  /**
   * The unloaded time to first token is the prefill plus the catalog's request path: a fixed
   * part and a part per layer.
   */
  @Test
  void timeToFirstTokenIsThePrefillAndTheRequestPath() {
    InferenceRequest r = Serving.parse("""
        {"model": {"catalog": "llama2-70b"},
         "cluster": {"accelerator": "h100-sxm-80gb", "devices": 4},
         "workload": {"type": "inference", "precision": "fp8", "kvCachePrecision": "fp8",
                      "batchSize": 1, "promptTokens": 128, "outputTokens": 1},
         "layout": {"tp": 4}}
        """, Catalog.builtIn());
    InferenceEstimate e = Serving.evaluate(r).estimate();
    var kernel = r.cluster().accelerator()
        .kernel(io.hyperframes.precision.NumberFormat.FP8_E4M3);
    assertTrue(kernel.servingRequestSeconds() > 0, "the Hopper FP8 request path is fitted");
    assertTrue(kernel.servingFirstTokenLayerSeconds() > 0, "and its part per layer");
    double request = kernel.servingRequestSeconds() + 80 * kernel.servingFirstTokenLayerSeconds();
    assertEquals(e.prefillSeconds() + request, e.ttftSeconds(), 1e-12);
    assertEquals(e.ttftSeconds() + e.decodeSecondsPerToken(), e.totalSeconds(), 1e-15);
  }
}
