package io.hyperframes.validate;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import org.junit.jupiter.api.Test;

/**
 * The DeepSpeed-pipeline cases are what their source prints: each iteration time and its
 * teraFLOP/s per GPU agree through Narayanan et al. 2021 Eq. (3), the convention the
 * Megatron-Turing NLG paper reports in, and every case is a check on a whole number of
 * 280-GPU model replicas.
 */
class PipelineCasesTest {

  @Test
  void iterationTimesAndThroughputAgree() throws IOException {
    JsonNode cases = PublishedCases.read("pipeline-cases.json");
    assertEquals(3, cases.size());
    for (JsonNode c : cases) {
      String id = c.get("id").asText();
      assertEquals("check", c.get("role").asText(), id);
      int gpus = c.at("/request/cluster/devices").asInt();
      assertEquals(0, gpus % 280, id);
      assertEquals(gpus / 280, c.at("/request/layout/dp").asInt(), id);
      double tflops = PublishedCases.eq3FlopsPerStep(c)
          / (gpus * c.at("/expected/stepSeconds").asDouble()) / 1e12;
      // The paper rounds to whole teraFLOP/s (and its vocabulary padding is not published).
      assertEquals(c.at("/expected/tflopsPerDevice").asDouble(), tflops, 1.0, id);
    }
  }
}
