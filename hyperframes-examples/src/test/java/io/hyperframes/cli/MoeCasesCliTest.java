package io.hyperframes.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The Megatron-Core mixture-of-experts runs with context parallelism: docs/validation.md prints
 * what {@code validate} says of their step times. The row without context parallelism is within
 * ±15 % (issue 32's bound); the rows with it are not met, and the estimate is too slow on each
 * (the sign is asserted, so that a change that turns it is seen). Of the 4096-token runs the one
 * on the all-to-all dispatcher, the one modelled, is within ±15 %.
 */
class MoeCasesCliTest {

  private static final Pattern ROW = Pattern.compile(
      "(?m)^\\| (mcoremoe-qwen3-235b-256h100-\\d+k-cp(\\d)) \\| stepSeconds \\| [0-9.]+ \\|"
          + " [0-9.]+ \\| ([-+][0-9.]+) % \\|");

  @Test
  void theReportPrintsTheRows() throws IOException {
    String out = CliTest.validatedInDocs("moe-cases.json");
    Matcher m = ROW.matcher(out);
    int rows = 0;
    while (m.find()) {
      rows++;
      double error = Double.parseDouble(m.group(3));
      if (Integer.parseInt(m.group(2)) == 1) {
        assertTrue(Math.abs(error) <= 15.0, m.group(1) + ": " + error + " %");
      } else {
        assertTrue(error > 0 && error < 80.0, m.group(1) + ": " + error + " %");
      }
    }
    assertEquals(4, rows, out);
    // The 4096-token rows: the one on the dispatcher modelled (Megatron-Core's all-to-all)
    // within ±15 %; the DeepEP rows are reported.
    Matcher a2a = Pattern.compile("(?m)^\\| mcoremoe-qwen3-235b-256h100-4k-a2a-tp2-ep8-pp32"
        + " \\| stepSeconds \\| [0-9.]+ \\| [0-9.]+ \\| ([-+][0-9.]+) % \\|").matcher(out);
    assertTrue(a2a.find(), out);
    assertTrue(Math.abs(Double.parseDouble(a2a.group(1))) <= 15.0, a2a.group(0));
    assertEquals(4, Pattern.compile("(?m)^\\| mcoremoe-qwen3-235b-256h100-4k-").matcher(out)
        .results().count(), out);
  }
}
