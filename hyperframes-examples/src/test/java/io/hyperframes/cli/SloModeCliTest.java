package io.hyperframes.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
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
    CliTest.estimateInGuide(EXAMPLE, "under the SLO", null);
    JsonNode slo = CliTest.estimateJson(EXAMPLE).get("slo");
    assertTrue(slo.get("feasible").asBoolean(), slo::toString);
    assertEquals("tpot", slo.get("limitedBy").asText());
    assertEquals(slo.get("requestsPerSecond").asDouble() * 250,
        slo.get("outputTokensPerSecond").asDouble(), 1e-6);
  }

  @Test
  void theGuidePrintsTheEngineExample() throws Exception {
    Path example = Path.of("..", "examples", "serve-llama2-70b-mlperf-slo.json");
    String block = CliTest.estimateInGuide(example, "under the SLO", null);
    // The fixed batch's advice (batch more requests per step) is not printed beside the answer.
    assertFalse(block.contains("bandwidth"), block);
    JsonNode slo = CliTest.estimateJson(example).get("slo");
    assertEquals("trtllm", slo.get("scheduler").asText());
    assertEquals("capacity", slo.get("limitedBy").asText());
    assertEquals(99, slo.get("tpotPercentile").asDouble());
    assertTrue(slo.get("batchLimit").asInt() < 1024, slo::toString);
  }

  /** An SLO no layout meets says so, not that it needs no devices. */
  @Test
  void anUnreachableSloNeedsNoneOfTheLayoutsTried(@org.junit.jupiter.api.io.TempDir Path dir)
      throws Exception {
    Path request = dir.resolve("tight.json");
    java.nio.file.Files.writeString(request, "{\"model\": {\"catalog\": \"llama3-70b\"},"
        + " \"cluster\": {\"accelerator\": \"h100-sxm-80gb\", \"devices\": 8},"
        + " \"workload\": {\"type\": \"inference\", \"mode\": \"slo\", \"precision\":"
        + " \"fp8\", \"promptTokens\": 2000, \"outputTokens\": 200, \"latencySlo\":"
        + " {\"ttftSeconds\": 0.001, \"tpotSeconds\": 0.0001}}, \"layout\": {\"tp\": 8}}");
    CliTest.Result table = CliTest.run("estimate", "--request", request.toString());
    assertEquals(0, table.status(), table.err());
    assertTrue(table.out().matches("(?s).*devices needed +none of the layouts tried meets the"
        + " SLO \\(devicesNeeded 0\\).*"), table.out());
    JsonNode json = CliTest.estimateJson(request);
    assertEquals(0, json.get("inference").get("devicesNeeded").asInt());
    assertFalse(json.get("slo").get("feasible").asBoolean());
  }
}
