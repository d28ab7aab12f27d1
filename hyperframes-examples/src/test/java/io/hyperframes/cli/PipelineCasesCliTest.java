package io.hyperframes.cli;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The Megatron-Turing NLG 530B runs on the DeepSpeed pipeline engine (tp 8, pp 35, 2240-3360
 * A100): docs/validation.md prints what {@code validate} says of them. Not met (±15 %): the
 * estimate is about 20 % too fast on each. The bound below only guards against regressions, and
 * the sign records which way the estimate is wrong.
 */
class PipelineCasesCliTest {

  @Test
  void theReportPrintsTheRunsAndTheirKnownMiss() throws IOException {
    Map<String, Double> errors = CliTest.stepErrorsInDocs("pipeline-cases.json", 3);
    errors.forEach((id, error) -> {
      assertTrue(id.startsWith("mtnlg2022-530b-"), id);
      assertTrue(error < 0 && error > -25.0, id + ": " + error + " %");
    });
  }
}
