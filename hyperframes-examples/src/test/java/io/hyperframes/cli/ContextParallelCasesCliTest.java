package io.hyperframes.cli;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The dgxc-benchmarking Llama 3.1 runs with context parallelism 2 on H100: docs/validation.md
 * prints what {@code validate} says of their step times. Every estimate is within ±10 % and the
 * mean under 7 % (10.14 % before the Hopper attention and element-wise constants of 2026-12-04);
 * every BF16 estimate is too slow (the sign is asserted, so that a change that turns it is seen).
 */
class ContextParallelCasesCliTest {

  @Test
  void theReportPrintsTheRows() throws IOException {
    Map<String, Double> errors = CliTest.stepErrorsInDocs("context-parallel-cases.json", 7);
    double sum = 0;
    for (Map.Entry<String, Double> row : errors.entrySet()) {
      assertTrue(Math.abs(row.getValue()) < 10.0, row.getKey() + ": " + row.getValue() + " %");
      if (row.getKey().contains("-bf16-")) {
        assertTrue(row.getValue() > 0, row.getKey() + ": " + row.getValue() + " %");
      }
      sum += Math.abs(row.getValue());
    }
    assertTrue(sum / errors.size() < 7.0, "mean " + sum / errors.size() + " %");
  }
}
