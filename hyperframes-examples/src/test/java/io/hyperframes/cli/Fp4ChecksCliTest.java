package io.hyperframes.cli;

import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/**
 * docs/validation.md, "FP4 rows, held out": the report of
 * {@code validate --cases docs/validation/capacity-checks-fp4.json} is printed there, with the
 * summary the text quotes (22 rows, every one too fast).
 */
class Fp4ChecksCliTest {

  @Test
  void theHeldOutReportIsPrinted() throws Exception {
    java.util.List<Double> errors = CliTest.reportErrors("capacity-checks-fp4.json", "70.63",
        "trtllmdev-\\S+-fp4-\\S+", "capacityOutputTokensPerSecondPerDevice");
    assertTrue(errors.size() == 22 && errors.stream().allMatch(e -> e > 0), errors.toString());
  }
}
