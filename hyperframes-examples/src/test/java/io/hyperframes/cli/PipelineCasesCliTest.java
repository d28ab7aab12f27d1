package io.hyperframes.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The Megatron-Turing NLG 530B runs on the DeepSpeed pipeline engine (tp 8, pp 35, 2240-3360
 * A100): docs/validation.md prints what {@code validate} says of them. Not met (±15 %): the
 * estimate is about 20 % too fast on each. The bound below only guards against regressions, and
 * the sign records which way the estimate is wrong.
 */
class PipelineCasesCliTest {

  private static final Pattern STEP = Pattern.compile(
      "(?m)^\\| (mtnlg2022-530b-\\d+a100-dspipe-tp8pp35) \\| stepSeconds \\| [0-9.]+ \\|"
          + " [0-9.]+ \\| ([-+][0-9.]+) % \\|");

  @Test
  void theReportPrintsTheRunsAndTheirKnownMiss() throws IOException {
    String out = CliTest.validatedInDocs("pipeline-cases.json");
    Matcher m = STEP.matcher(out);
    int rows = 0;
    while (m.find()) {
      rows++;
      double error = Double.parseDouble(m.group(2));
      assertTrue(error < 0 && error > -25.0, m.group(1) + ": " + error + " %");
    }
    assertEquals(3, rows, out);
  }
}
