package io.hyperframes.cli;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * docs/validation.md, "FP4 rows, held out": the report of
 * {@code validate --cases docs/validation/capacity-checks-fp4.json} is printed there, with the
 * summary the text quotes (22 rows, every one too fast).
 */
class Fp4ChecksCliTest {

  @Test
  void theHeldOutReportIsPrinted() throws Exception {
    String out = CliTest.validatedInDocs("capacity-checks-fp4.json");
    assertTrue(out.contains("Mean |error| 70.63 %"), out);
    Matcher m = Pattern.compile("(?m)^\\| trtllmdev-\\S+-fp4-\\S+ \\|"
        + " capacityOutputTokensPerSecondPerDevice \\| [0-9.]+ \\| [0-9.e+]+ \\|"
        + " ([-+][0-9.]+) % \\|").matcher(out);
    int rows = 0;
    int fast = 0;
    while (m.find()) {
      rows++;
      fast += Double.parseDouble(m.group(1)) > 0 ? 1 : 0;
    }
    assertTrue(rows == 22 && fast == 22, rows + " " + fast);
  }
}
