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
    List<Double> throughput = CliTest.errors(report, "\\S+", "sloOutputTokensPerSecond");
    assertMean(16, 26.66, 6, throughput);
    assertMean(16, 31.44, 7, CliTest.errors(report, "\\S+", "sloTtftSeconds"));
    assertMean(16, 17.13, 7, CliTest.errors(report, "\\S+", "sloTpotSeconds"));
    // Every throughput too high: the predictions sit at capacity mode's full-load rate.
    assertTrue(throughput.stream().allMatch(e -> e > 0), throughput.toString());
  }

  /**
   * MLPerf v5.1's eight H200 runs, recorded before any prediction for them and computed once
   * with the model unchanged: throughput and p99 TPOT within ±20 % on every run, p99 TTFT on none.
   */
  @Test
  void theSecondHeldOutSetIsReported() throws Exception {
    String report = CliTest.validatedInDocs("slo-checks-mlperf51.json");
    assertTrue(report.contains("Mean |error| 15.71 %"), report);
    List<Double> throughput = CliTest.errors(report, "\\S+", "sloOutputTokensPerSecond");
    List<Double> ttft = CliTest.errors(report, "\\S+", "sloTtftSeconds");
    List<Double> tpot = CliTest.errors(report, "\\S+", "sloTpotSeconds");
    assertMean(8, 3.19, 8, throughput);
    assertMean(8, 38.22, 0, ttft);
    assertMean(8, 5.72, 8, tpot);
    // The signs the text states: throughput too high, both latencies too short, on every run.
    assertTrue(throughput.stream().allMatch(e -> e > 0), throughput.toString());
    assertTrue(ttft.stream().allMatch(e -> e < 0), ttft.toString());
    assertTrue(tpot.stream().allMatch(e -> e < 0), tpot.toString());
  }

  /**
   * {@code rows} errors, their mean |error| the text states (to its two decimals, half a unit of
   * the last either way) and the rows within ±20 %.
   */
  private static void assertMean(int rows, double mean, int within, List<Double> errors) {
    assertEquals(rows, errors.size(), errors.toString());
    assertEquals(mean, errors.stream().mapToDouble(Math::abs).average().orElseThrow(), 0.0051,
        errors.toString());
    assertEquals(within, errors.stream().filter(e -> Math.abs(e) <= 20).count(),
        errors.toString());
  }
}
