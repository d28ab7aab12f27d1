package io.hyperframes.validate;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.hyperframes.request.Requests;
import io.hyperframes.catalog.Catalog;
import io.hyperframes.hardware.StepInterval;
import io.hyperframes.json.Json;
import io.hyperframes.plan.TrainingEstimate;
import io.hyperframes.plan.TrainingEstimator;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/**
 * A step whose exposed communication is half of it or more is communication-bound, whatever its
 * layout, and its interval is that regime's: the Table 2 ZeRO-3 rows at 1 and 2 sequences per
 * GPU rest on the four runs of Ampere communication-bound; at 4 sequences per GPU the step is
 * compute-bound and keeps Ampere fully-sharded.
 */
class CommunicationBoundIntervalTest {

  private static TrainingEstimate estimate(String id) throws IOException {
    JsonNode cases = Json.parseObject("cases", Files.readString(
        Path.of("..", "docs", "validation", "comm-bound-cases.json"), StandardCharsets.UTF_8))
        .get("cases");
    for (JsonNode c : cases) {
      if (c.get("id").asText().equals(id)) {
        return TrainingEstimator.analytical().estimate(Requests.fromJson(c.get("request"),
            Catalog.builtIn()));
      }
    }
    throw new AssertionError(id);
  }

  @Test
  void theRegimeFollowsTheExposedShare() {
    assertEquals("communication-bound", StepInterval.regime(1, 1, 1, 3, 0.5));
    assertEquals("fully-sharded", StepInterval.regime(1, 1, 1, 3, 0.49));
    assertEquals("model-parallel", StepInterval.regime(8, 1, 1, 0, 0.2));
    assertEquals("communication-bound", StepInterval.regime(8, 8, 1, 1, 0.8));
    // Expert parallelism splits the model as tensor and pipeline parallelism do (2026-12-08).
    assertEquals("model-parallel", StepInterval.regime(1, 1, 16, 1, 0.2));
    assertEquals("data-parallel", StepInterval.regime(1, 1, 1, 1, 0.2));
    assertEquals("fully-sharded", StepInterval.regime(1, 1, 8, 3, 0.2));
  }

  @Test
  void communicationBoundStepsRestOnTheirOwnRunsAndGetAWiderBand() throws IOException {
    TrainingEstimate bound = estimate("megatron2021-table2-zero3-175b-1536a100-mb1");
    assertTrue(bound.time().exposedCommSeconds() >= 0.5 * bound.time().stepSeconds());
    assertEquals("ampere communication-bound", bound.interval().regime());
    assertEquals(4, bound.interval().cases());
    TrainingEstimate compute = estimate("megatron2021-table2-zero3-175b-384a100-mb4");
    assertEquals("ampere fully-sharded", compute.interval().regime());
    // Its four runs took 0.90-1.00 of the predicted step: the band reaches below the
    // fully-sharded one (thin evidence: the pooled band, widened to them).
    assertTrue(bound.interval().low() < compute.interval().low(), bound.interval() + " vs "
        + compute.interval());
    assertTrue(bound.interval().source().startsWith("thin evidence: 4"),
        bound.interval().source());
  }
}
