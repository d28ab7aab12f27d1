package io.hyperframes.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * docs/validation.md's "SLO mode: MLPerf server runs": both reports are printed by the commands
 * they quote, with the figures the text states.
 */
class SloCasesCliTest {

  @Test
  void theFittingRowsAreReported() throws Exception {
    String report = CliTest.validatedInDocs("slo-cases.json");
    assertTrue(report.contains("Mean |error| 18.54 %"), report);
    assertEquals(List.of(26.77, 18.08),
        CliTest.errors(report, "\\S+", "sloOutputTokensPerSecond"));
  }

  @Test
  void theHeldOutRowsAreReported() throws Exception {
    String report = CliTest.validatedInDocs("slo-checks-mlperf41.json");
    assertTrue(report.contains("Mean |error| 25.08 %"), report);
    assertMean(26.66, 6, CliTest.errors(report, "\\S+", "sloOutputTokensPerSecond"));
    assertMean(31.44, 7, CliTest.errors(report, "\\S+", "sloTtftSeconds"));
    assertMean(17.13, 7, CliTest.errors(report, "\\S+", "sloTpotSeconds"));
    // Every throughput too high: the predictions sit at capacity mode's full-load rate.
    assertTrue(CliTest.errors(report, "\\S+", "sloOutputTokensPerSecond").stream()
        .allMatch(e -> e > 0));
  }

  /** The mean |error| the text states (to its two decimals) and the rows within ±20 %. */
  private static void assertMean(double mean, int within, List<Double> errors) {
    assertEquals(16, errors.size(), errors.toString());
    assertEquals(mean, errors.stream().mapToDouble(Math::abs).average().orElseThrow(), 0.005,
        errors.toString());
    assertEquals(within, errors.stream().filter(e -> Math.abs(e) <= 20).count(),
        errors.toString());
  }
}
