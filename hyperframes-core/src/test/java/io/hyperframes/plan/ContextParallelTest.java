package io.hyperframes.plan;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.hyperframes.HyperFrames;
import io.hyperframes.json.Json;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;
import org.junit.jupiter.api.Test;

/**
 * Context parallelism: a 128K-token Llama 3.1 8B is planned with cp > 1, a fixed cp divides the
 * activations per device, the JSON says layout.cp, layout.cpCommType and
 * time.exposedCommByKind.contextParallelSeconds, and bad values are named.
 */
class ContextParallelTest {

  private static final String MODEL = "{\"name\": \"llama3.1-8b-128k\", \"layers\": 32,"
      + " \"hidden\": 4096, \"heads\": 32, \"kvHeads\": 8, \"ffnHidden\": 14336,"
      + " \"gatedMlp\": true, \"vocab\": 128256, \"seqLen\": 131072, \"tiedEmbeddings\": false}";

  private static String request(int devices, String layout) {
    return "{\"model\": " + MODEL + ", \"cluster\": {\"accelerator\": \"h100-sxm-80gb\","
        + " \"devices\": " + devices + "}, \"workload\": {\"type\": \"training\", \"precision\":"
        + " \"bf16-mixed\", \"globalBatchSize\": 8, \"trainingTokens\": 1e10}, \"layout\": "
        + layout + "}";
  }

  private static TrainingEstimate estimate(int devices, String layout) {
    return TrainingEstimator.analytical().estimate(io.hyperframes.request.Requests.parse(
        request(devices, layout)));
  }

  @Test
  void aLongSequenceIsPlannedWithContextParallelism() throws IOException {
    Plan p = HyperFrames.plan().model(new io.hyperframes.model.TransformerSpec(
            "llama3.1-8b-128k", 32, 4096, 32, 8, 14336, true, 128256, 131072, false))
        .accelerator("h100-sxm-80gb").devices(64)
        .training(t -> t.precision("bf16-mixed").tokens(1e10)).run();
    assertTrue(p.feasible(), p.reasons().toString());
    TrainingEstimate e = p.best().estimate();
    assertTrue(e.layout().cp() > 1, e.layout().toString());
    String guide = Files.readString(Path.of("..", "docs", "planning.md"),
        StandardCharsets.UTF_8).replaceAll("\\s+", " ");
    String quoted = String.format(Locale.ROOT, "**cp %d** (%s), tp %d, dp %d",
        e.layout().cp(), e.layout().cpCommType().id(), e.layout().tp(), e.layout().dp());
    assertTrue(guide.contains(quoted), "docs/planning.md does not quote: " + quoted);
    // The catalog's Llama 3.1 8B at the same length ({"catalog": "llama3-8b", "seqLen": 131072},
    // plan --model llama3-8b --seq-len 131072) is the same architecture: the same plan.
    Plan catalog = HyperFrames.plan().model("llama3-8b").seqLen(131072)
        .accelerator("h100-sxm-80gb").devices(64)
        .training(t -> t.precision("bf16-mixed").tokens(1e10)).run();
    assertEquals(e.layout(), catalog.best().estimate().layout());
    assertEquals(e.stepSeconds(), catalog.best().estimate().stepSeconds(), 0.0);
    assertEquals(p.best().workload().globalBatchSize(),
        catalog.best().workload().globalBatchSize());
  }

  @Test
  void aFixedCpDividesTheActivationsAndIsReported() {
    TrainingEstimate one = estimate(8, "{\"tp\": 8, \"pp\": 1, \"microBatch\": 1,"
        + " \"recompute\": \"full\", \"zeroStage\": 1}");
    TrainingEstimate four = estimate(32, "{\"tp\": 8, \"pp\": 1, \"cp\": 4, \"microBatch\": 1,"
        + " \"recompute\": \"full\", \"zeroStage\": 1}");
    assertEquals(one.memory().activationsBytes() / 4, four.memory().activationsBytes(),
        1e-9 * one.memory().activationsBytes());
    assertEquals(4, four.layout().cp());
    assertTrue(four.stepSeconds() < one.stepSeconds(), four.stepSeconds() + " vs "
        + one.stepSeconds());
    JsonNode json = Json.mapper().valueToTree(EstimateJson.Estimate.of(four));
    assertEquals(4, json.at("/layout/cp").asInt());
    assertEquals("p2p", json.at("/layout/cpCommType").asText());
    assertTrue(json.at("/time/exposedCommByKind/contextParallelSeconds").isNumber());
    TrainingEstimate gathered = estimate(32, "{\"tp\": 8, \"pp\": 1, \"cp\": 4,"
        + " \"cpCommType\": \"allgather\", \"microBatch\": 1, \"recompute\": \"full\","
        + " \"zeroStage\": 1}");
    assertTrue(gathered.time().contextParallelSeconds() > 0);
    assertEquals("all_gather", gathered.layout().cpCommType().id());
  }

  @Test
  void badValuesAreNamed() {
    assertTrue(assertThrows(IllegalArgumentException.class, () -> estimate(24,
        "{\"tp\": 8, \"cp\": 16}")).getMessage().startsWith("layout.cp: 16 does not divide"));
    assertTrue(assertThrows(IllegalArgumentException.class, () -> estimate(32,
        "{\"tp\": 8, \"cp\": 4, \"cpCommType\": \"ring\"}")).getMessage()
        .startsWith("layout.cpCommType: 'ring'"));
    assertTrue(assertThrows(IllegalArgumentException.class, () -> estimate(32,
        "{\"tp\": 8, \"cp\": 4, \"engine\": \"fsdp\"}")).getMessage()
        .startsWith("layout.cp: 4 is run by megatron"));
    assertTrue(assertThrows(IllegalArgumentException.class, () -> estimate(64,
        "{\"tp\": 1, \"pp\": 1, \"cp\": 64, \"cpCommType\": \"a2a\"}")).getMessage()
        .startsWith("layout.cpCommType: a2a splits the 32 heads"));
  }
}
