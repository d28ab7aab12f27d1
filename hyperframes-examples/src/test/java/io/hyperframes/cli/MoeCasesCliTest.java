package io.hyperframes.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The Megatron-Core mixture-of-experts runs with context parallelism: docs/validation.md prints
 * what {@code validate} says of their step times. The row without context parallelism is within
 * ±15 % (issue 32's bound); the rows with it are not met, and the estimate is too slow on each
 * (the sign is asserted, so that a change that turns it is seen). Of the 4096-token runs the one
 * on the all-to-all dispatcher, the one modelled, is within ±15 %.
 */
class MoeCasesCliTest {

  @Test
  void theReportPrintsTheRows() throws IOException {
    String out = CliTest.validatedInDocs("moe-cases.json");
    Map<String, Double> errors = CliTest.stepErrors(out);
    int longContext = 0;
    for (Map.Entry<String, Double> row : errors.entrySet()) {
      String id = row.getKey();
      double error = row.getValue();
      if (id.matches("mcoremoe-qwen3-235b-256h100-\\d+k-cp\\d")) {
        longContext++;
        if (id.endsWith("-cp1")) {
          assertTrue(Math.abs(error) <= 15.0, id + ": " + error + " %");
        } else {
          assertTrue(error > 0 && error < 80.0, id + ": " + error + " %");
        }
      }
    }
    assertEquals(4, longContext, out);
    // The 4096-token rows: the one on the dispatcher modelled (Megatron-Core's all-to-all)
    // within ±15 %; the DeepEP rows are reported.
    assertEquals(8, errors.size(), out);
    double a2a = errors.get("mcoremoe-qwen3-235b-256h100-4k-a2a-tp2-ep8-pp32");
    assertTrue(Math.abs(a2a) <= 15.0, a2a + " %");
  }
}
