package io.hyperframes.inference;

import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.hyperframes.catalog.Catalog;
import io.hyperframes.json.Json;
import org.junit.jupiter.api.Test;

/** The serving planner meets the SLO with the fewest devices, or says none does. */
class InferencePlannerTest {

  static final String REQUEST = """
      {"model": {"catalog": "llama2-7b"}, "cluster": {"accelerator": "a100-sxm-80gb",
       "devices": 1}, "workload": {"type": "inference", "precision": "fp16", "batchSize": 1,
       "promptTokens": 512, "outputTokens": 128, "arrivalRatePerSecond": 30,
       "latencySlo": {"ttftSeconds": 0.3, "tpotSeconds": 0.04, "percentile": 99}},
       "constraints": {"weightFormats": ["fp16", "int8"], "kvFormats": ["fp16"]}}
      """;

  @Test
  void bestMeetsTheSloWithTheFewestDevices() {
    var result = ServingPlans.plan(Json.parseObject("r", REQUEST), Catalog.builtIn());
    InferencePlanner.Config best = result.plan().best();
    assertNotNull(best);
    InferenceWorkload w = result.request().workload();
    assertTrue(Serving.meets(best.load(), w), "best does not meet the SLO");
    for (InferencePlanner.Config c : result.plan().alternatives()) {
      assertTrue(c.devices() >= best.devices());
    }
    var json = ServingPlans.toJson(result);
    assertTrue(json.get("feasible").asBoolean());
    assertTrue(json.has("inference") && json.has("best") && json.has("alternatives"));
    assertTrue(json.get("best").get("usdPerMillionTokens").asDouble() > 0);
  }

  @Test
  void anUnreachableSloIsReportedNotThrown() {
    var result = ServingPlans.plan(Json.parseObject("r", REQUEST.replace(
        "\"ttftSeconds\": 0.3", "\"ttftSeconds\": 0.0001")), Catalog.builtIn());
    assertNull(result.plan().best());
    assertTrue(result.plan().findings().stream().anyMatch(f -> f.id().equals("slo-unreachable")));
    var json = ServingPlans.toJson(result);
    assertTrue(!json.get("feasible").asBoolean());
  }

  @Test
  void planningNeedsARateAndAnSlo() {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> ServingPlans.plan(Json.parseObject("r", REQUEST.replace(
            "\"arrivalRatePerSecond\": 30,", "")), Catalog.builtIn()));
    assertTrue(e.getMessage().startsWith("workload.arrivalRatePerSecond"), e.getMessage());
  }
}
