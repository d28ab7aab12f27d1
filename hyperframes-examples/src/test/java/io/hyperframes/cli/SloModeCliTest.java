package io.hyperframes.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.hyperframes.json.Json;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/**
 * docs/inference.md's SLO-mode example: {@code estimate} of examples/serve-llama3-70b-slo-mode.json
 * prints what the guide quotes, and its JSON carries the {@code slo} section.
 */
class SloModeCliTest {

  static final Path EXAMPLE = Path.of("..", "examples", "serve-llama3-70b-slo-mode.json");

  @Test
  void theGuidePrintsTheExample() throws Exception {
    CliTest.Result r = CliTest.run("estimate", "--request", EXAMPLE.toString());
    assertEquals(0, r.status(), r.err());
    String out = r.out();
    String block = out.substring(out.indexOf("under the SLO"));
    CliTest.assertPrints(Path.of("..", "docs", "inference.md"), block);
    CliTest.Result json = CliTest.run("estimate", "--request", EXAMPLE.toString(), "--format",
        "json");
    assertEquals(0, json.status(), json.err());
    JsonNode slo = Json.parseObject("output", json.out()).get("slo");
    assertTrue(slo.get("feasible").asBoolean(), slo::toString);
    assertEquals("tpot", slo.get("limitedBy").asText());
    assertEquals(slo.get("requestsPerSecond").asDouble() * 250,
        slo.get("outputTokensPerSecond").asDouble(), 1e-6);
  }
}
