package io.hyperframes.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.hyperframes.json.Json;
import java.nio.file.Path;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * docs/inference.md's disaggregated example and docs/validation.md's "Disaggregated serving":
 * both are printed by the commands they quote.
 */
class DisaggregatedCliTest {

  static final Path EXAMPLE = Path.of("..", "examples", "serve-deepseek-v3-disaggregated.json");

  @Test
  void theGuidePrintsTheExample() throws Exception {
    CliTest.Result r = CliTest.run("estimate", "--request", EXAMPLE.toString());
    assertEquals(0, r.status(), r.err());
    String out = r.out();
    String block = out.substring(out.indexOf("disaggregated ("), out.indexOf("[info]"));
    CliTest.assertPrints(Path.of("..", "docs", "inference.md"), block);
    CliTest.Result json = CliTest.run("estimate", "--request", EXAMPLE.toString(), "--format",
        "json");
    assertEquals(0, json.status(), json.err());
    JsonNode d = Json.parseObject("output", json.out()).get("disaggregated");
    assertTrue(d.get("feasible").asBoolean(), d::toString);
    assertEquals("prefill", d.get("limitedBy").asText());
    assertEquals(d.get("requestsPerSecond").asDouble() * 500,
        d.get("outputTokensPerSecond").asDouble(), 1e-6);
  }

  @Test
  void theValidationReportIsPrinted() throws Exception {
    String out = CliTest.validatedInDocs("disaggregated-cases.json");
    assertTrue(out.contains("Mean |error| 66.18 %"), out);
    Matcher m = Pattern.compile("(?m)^\\| \\S+ \\| (prefillInput|decodeOutput)TokensPerSecondPerNode"
        + " \\| [0-9.]+ \\| [0-9.e+]+ \\| ([-+][0-9.]+) % \\|").matcher(out);
    int rows = 0;
    int fast = 0;
    while (m.find()) {
      rows++;
      fast += Double.parseDouble(m.group(2)) > 0 ? 1 : 0;
    }
    assertTrue(rows == 6 && fast == 6, rows + " " + fast);
  }
}
