package io.hyperframes.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.util.HashMap;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The communication-bound ZeRO-3 rows of Narayanan et al. 2021 Table 2: docs/validation.md prints
 * what {@code validate} says of them, the rows at micro-batch 1 and 2 are within ±15 %, and the
 * estimated step does not fall when the data-parallel size doubles at the fixed global batch, as
 * the published step does not.
 */
class CommBoundCasesCliTest {

  private static final Pattern STEP = Pattern.compile(
      "(?m)^\\| (megatron2021-table2-zero3-(\\d+b)-(\\d+)a100-mb(\\d)) \\| stepSeconds \\|"
          + " [0-9.]+ \\| ([0-9.]+) \\| ([-+][0-9.]+) % \\|");

  @Test
  void theReportPrintsTheRowsAndTheStepStaysFlatOverDp() throws IOException {
    String out = CliTest.validatedInDocs("comm-bound-cases.json");

    Map<String, Double> step = new HashMap<>();
    Matcher m = STEP.matcher(out);
    int rows = 0;
    while (m.find()) {
      rows++;
      double error = Double.parseDouble(m.group(6));
      int microBatch = Integer.parseInt(m.group(4));
      step.put(m.group(2) + "@" + m.group(3), Double.parseDouble(m.group(5)));
      if (microBatch <= 2) {
        assertTrue(Math.abs(error) <= 15.0, m.group(1) + ": " + error + " %");
      } else {
        // Not met at micro-batch 4 (docs/validation.md); this only guards against regressions.
        assertTrue(Math.abs(error) <= 25.0, m.group(1) + ": " + error + " %");
      }
    }
    assertEquals(6, rows, out);
    assertTrue(step.get("175b@1536") >= step.get("175b@768"), step.toString());
    assertTrue(step.get("530b@2240") >= step.get("530b@1120"), step.toString());
  }
}
