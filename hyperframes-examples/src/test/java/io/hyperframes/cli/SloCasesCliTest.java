package io.hyperframes.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * docs/validation.md's "SLO mode: MLPerf server runs": the report is printed by the command it
 * quotes, with the figures the text states (the throughput within 10 %, every latency too short).
 */
class SloCasesCliTest {

  @Test
  void theValidationReportIsPrinted() throws Exception {
    String report = CliTest.validatedInDocs("slo-cases.json");
    assertTrue(report.contains("Mean |error| 33.90 %"), report);
    List<Double> throughput = CliTest.errors(report, "\\S+", "sloOutputTokensPerSecond");
    assertEquals(List.of(7.23, 8.34), throughput);
    List<Double> latencies = CliTest.errors(report, "\\S+", "slo(?:Ttft|Tpot)Seconds");
    assertEquals(4, latencies.size(), report);
    assertTrue(latencies.stream().allMatch(e -> e < 0), latencies.toString());
  }
}
