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
 * what {@code validate} says of them, every row is within ±15 %, and the
 * estimated step does not fall, beyond the table's rounding, when the data-parallel size doubles
 * at the fixed global batch, as the published step does not.
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
      // Issue 33's acceptance: every row, at 1, 2 and 4 sequences per GPU, within ±15 %.
      assertTrue(Math.abs(error) <= 15.0, m.group(1) + " (micro-batch " + microBatch + "): "
          + error + " %");
    }
    assertEquals(6, rows, out);
    // Flat as DP doubles, to the published precision: the table's whole teraFLOP/s (44 and 48
    // at the larger size) fix each step to ±0.5/44 = 1.1 % and ±0.5/48 = 1.0 %. DeepSpeed's
    // sub-module schedule leaves a few intervals compute-bound (the QKV interval carries the
    // attention core and hides only the small output projection's gather), and that compute
    // halves with DP; the step must not follow it down.
    assertTrue(step.get("175b@1536") >= (1 - 0.5 / 44) * step.get("175b@768"), step.toString());
    assertTrue(step.get("530b@2240") >= (1 - 0.5 / 48) * step.get("530b@1120"), step.toString());
  }
}
