package io.hyperframes.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The Megatron-Core mixture-of-experts runs with context parallelism: docs/validation.md prints
 * what {@code validate} says of them, and the rows without context parallelism or at cp 2 stay
 * within ±10 % (the others are reported as not met).
 */
class MoeCasesCliTest {

  private static final Pattern ROW = Pattern.compile(
      "(?m)^\\| (mcoremoe-qwen3-235b-256h100-\\d+k-cp(\\d)) \\| tflopsPerDevice \\| [0-9.]+ \\|"
          + " [0-9.]+ \\| ([-+][0-9.]+) % \\|");

  @Test
  void theReportPrintsTheRows() throws IOException {
    String out = CliTest.validatedInDocs("moe-cases.json");
    Matcher m = ROW.matcher(out);
    int rows = 0;
    while (m.find()) {
      rows++;
      if (Integer.parseInt(m.group(2)) <= 2) {
        assertTrue(Math.abs(Double.parseDouble(m.group(3))) <= 10.0, m.group(1));
      }
    }
    assertEquals(4, rows, out);
  }
}
