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
}
