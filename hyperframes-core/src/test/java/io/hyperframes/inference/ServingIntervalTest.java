package io.hyperframes.inference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.hyperframes.catalog.Catalog;
import io.hyperframes.hardware.StepInterval;
import io.hyperframes.json.Json;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A serving plan's front carries the serving band of its accelerator's generation: each
 * throughput divided by the band's ends, in the plan and in its JSON; a user's catalog may
 * replace the band, and a regime the catalog does not know is named.
 */
class ServingIntervalTest {

  private static final String HOPPER = InferencePlannerTest.REQUEST
      .replace("a100-sxm-80gb", "h100-sxm-80gb").replace("\"fp16\", \"int8\"", "\"fp8\"")
      .replace("\"kvFormats\": [\"fp16\"]", "\"kvFormats\": [\"fp8\"]");

  @Test
  void theFrontCarriesItsGenerationsBand() {
    var result = ServingPlans.plan(Json.parseObject("r", HOPPER), Catalog.builtIn());
    InferencePlanner.ServingPlan plan = result.plan();
    StepInterval iv = plan.interval();
    assertEquals("hopper serving", iv.regime());
    assertEquals(Catalog.builtIn().accelerator("a", "h100-sxm-80gb").interval(StepInterval.SERVING),
        iv);
    assertTrue(iv.cases() > 0 && iv.low() < 1 && iv.high() > 1, iv::toString);
    JsonNode json = ServingPlans.toJson(result);
    assertEquals(iv.low(), json.get("interval").get("low").asDouble(), 0);
    assertEquals(iv.high(), json.get("interval").get("high").asDouble(), 0);
    assertEquals("hopper serving", json.get("interval").get("regime").asText());
    JsonNode points = json.get("pareto");
    assertEquals(plan.pareto().size(), points.size());
    for (int i = 0; i < points.size(); i++) {
      InferencePlanner.FrontPoint p = plan.pareto().get(i);
      JsonNode o = points.get(i);
      assertEquals(p.tokensPerSecondPerGpu() / iv.high(),
          o.get("outputTokensPerSecondPerGpuLow").asDouble(), 1e-9);
      assertEquals(p.tokensPerSecondPerGpu() / iv.low(),
          o.get("outputTokensPerSecondPerGpuHigh").asDouble(), 1e-9);
      assertEquals(p.tokensPerSecondPerUser() / iv.high(),
          o.get("outputTokensPerSecondPerUserLow").asDouble(), 1e-9);
      assertEquals(p.tokensPerSecondPerUser() / iv.low(),
          o.get("outputTokensPerSecondPerUserHigh").asDouble(), 1e-9);
      assertTrue(o.get("outputTokensPerSecondPerGpuLow").asDouble()
          < o.get("outputTokensPerSecondPerGpu").asDouble());
    }
  }

  @Test
  void aUsersCatalogReplacesTheBandAndUnknownRegimesAreNamed(@TempDir Path dir)
      throws IOException {
    Path own = Files.writeString(dir.resolve("own.json"), """
        {"intervals": [{"generation": "hopper", "regime": "serving", "low": 0.9, "high": 1.2,
          "cases": 12, "source": "our own vLLM runs"}]}
        """);
    StepInterval iv = Catalog.builtIn().withOverrides(own).accelerator("a", "h200-sxm-141gb")
        .interval(StepInterval.SERVING);
    assertEquals(new StepInterval(0.9, 1.2, 12, "our own vLLM runs", "hopper serving"), iv);
    Path bad = Files.writeString(dir.resolve("bad.json"), """
        {"intervals": [{"generation": "hopper", "regime": "decode", "low": 0.9, "high": 1.2,
          "cases": 1, "source": "x"}]}
        """);
    var e = assertThrows(IllegalArgumentException.class,
        () -> Catalog.builtIn().withOverrides(bad));
    assertTrue(e.getMessage().contains("intervals.regime: unknown regime 'decode' (expected *,"
        + " data-parallel, model-parallel, fully-sharded, communication-bound or serving)"),
        e.getMessage());
  }
}
