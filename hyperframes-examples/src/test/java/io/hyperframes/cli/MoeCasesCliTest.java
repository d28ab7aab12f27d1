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
 * on the all-to-all dispatcher, the cross-node DeepEP one with and without the EP A2A overlap and
 * the Megatron-FSDP one are within ±15 %.
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
    // The 4096-token rows: the all-to-all dispatcher's, the cross-node DeepEP one (ep 32 over
    // four nodes, layout.moeDispatcher deepep), the same with the EP A2A overlap
    // (layout.overlapMoeComm) and the Megatron-FSDP one within ±15 %; the tp-4 DeepEP row is too
    // fast (reported, sign asserted).
    assertEquals(9, errors.size(), out);
    for (String id : new String[] {"a2a-tp2-ep8-pp32", "deepep-tp2-ep32-pp8",
        "deepep-tp2-ep32-pp8-overlap", "deepep-tp2-ep8-fsdp"}) {
      double e = errors.get("mcoremoe-qwen3-235b-256h100-4k-" + id);
      assertTrue(Math.abs(e) <= 15.0, id + ": " + e + " %");
    }
    double tp4 = errors.get("mcoremoe-qwen3-235b-256h100-4k-deepep-tp4-ep8-pp8");
    assertTrue(tp4 < 0 && tp4 > -50.0, tp4 + " %");
  }
}
