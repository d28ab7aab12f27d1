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
 * (the sign is asserted, so that a change that turns it is seen).
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
  }
}
