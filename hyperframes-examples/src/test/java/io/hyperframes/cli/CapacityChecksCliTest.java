package io.hyperframes.cli;

import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/**
 * docs/validation.md, "A later table, held out": the report of
 * {@code validate --cases docs/validation/capacity-checks-devguide.json} is printed there, with
 * the summary the text quotes (mean, rows within ±15 %, all too slow).
 */
class CapacityChecksCliTest {

  @Test
  void theHeldOutReportIsPrinted() throws Exception {
    java.util.List<Double> errors = CliTest.reportErrors("capacity-checks-devguide.json",
        "13.93", "trtllmdev-\\S+", "capacityOutputTokensPerSecondPerDevice");
    long within = errors.stream().filter(e -> Math.abs(e) <= 15).count();
    long slow = errors.stream().filter(e -> e < 0).count();
    assertTrue(errors.size() == 7 && within == 4 && slow == 7, errors.toString());
  }
}
