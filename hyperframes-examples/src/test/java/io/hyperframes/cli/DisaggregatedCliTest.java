package io.hyperframes.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/**
 * docs/inference.md's disaggregated example and docs/validation.md's "Disaggregated serving":
 * both are printed by the commands they quote.
 */
class DisaggregatedCliTest {

  static final Path EXAMPLE = Path.of("..", "examples", "serve-deepseek-v3-disaggregated.json");

  @Test
  void theGuidePrintsTheExample() throws Exception {
    CliTest.estimateInGuide(EXAMPLE, "disaggregated (", "[info]");
    JsonNode d = CliTest.estimateJson(EXAMPLE).get("disaggregated");
    assertTrue(d.get("feasible").asBoolean(), d::toString);
    assertEquals("prefill", d.get("limitedBy").asText());
    assertEquals(d.get("requestsPerSecond").asDouble() * 500,
        d.get("outputTokensPerSecond").asDouble(), 1e-6);
  }

  @Test
  void theValidationReportIsPrinted() throws Exception {
    java.util.List<Double> errors = CliTest.reportErrors("disaggregated-cases.json", "48.29",
        "\\S+", "(?:prefillInput|decodeOutput)TokensPerSecondPerNode");
    assertTrue(errors.size() == 6 && errors.stream().allMatch(e -> e > 0), errors.toString());
  }
}
