package io.hyperframes.cli;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * docs/validation.md, "A later table, held out": the report of
 * {@code validate --cases docs/validation/capacity-checks-devguide.json} is printed there, with
 * the summary the text quotes (mean, rows within ±15 %, all too slow).
 */
class CapacityChecksCliTest {

  @Test
  void theHeldOutReportIsPrinted() throws Exception {
    String out = CliTest.validatedInDocs("capacity-checks-devguide.json");
    assertTrue(out.contains("Mean |error| 13.93 %"), out);
    Matcher m = Pattern.compile("(?m)^\\| trtllmdev-\\S+ \\| capacityOutputTokensPerSecondPerDevice"
        + " \\| [0-9.]+ \\| [0-9.]+ \\| ([-+][0-9.]+) % \\|").matcher(out);
    int rows = 0;
    int within = 0;
    int slow = 0;
    while (m.find()) {
      double e = Double.parseDouble(m.group(1));
      rows++;
      within += Math.abs(e) <= 15 ? 1 : 0;
      slow += e < 0 ? 1 : 0;
    }
    assertTrue(rows == 7 && within == 4 && slow == 7, rows + " " + within + " " + slow);
  }
}
