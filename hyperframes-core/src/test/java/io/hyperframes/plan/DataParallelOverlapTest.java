package io.hyperframes.plan;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.hyperframes.HyperFrames;
import io.hyperframes.diagnose.Finding;
import io.hyperframes.PlanRequests;
import io.hyperframes.launch.LaunchConfigs;
import io.hyperframes.model.TransformerSpec;
import io.hyperframes.parallel.Engine;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * {@code layout.overlapGradReduce} and {@code layout.overlapParamGather}: by default the engine's
 * own overlap (what HyperFrames launches), turned off as Megatron-LM runs without
 * {@code --overlap-grad-reduce} and {@code --overlap-param-gather} (and ran before them:
 * NVIDIA/Megatron-LM 2d5220a4 and f048bf8c, 2023), refused where the engine cannot overlap.
 */
class DataParallelOverlapTest {

  private static final String REQUEST = """
      {"model": {"catalog": "gpt3-175b"},
       "cluster": {"accelerator": "a100-sxm-80gb", "devices": 1024},
       "workload": {"type": "training", "precision": "bf16-mixed", "globalBatchSize": 768,
                    "trainingTokens": 1e10},
       "layout": {"tp": 8, "pp": 8, "dp": 16, "virtualStages": 6, "microBatch": 1,
                  "sequenceParallel": true, "recompute": "selective", "zeroStage": 1%s}}
      """;

  private static TrainingEstimate estimate(String extra) {
    return HyperFrames.estimate(REQUEST.formatted(extra));
  }

  /** The findings of the estimate of the request with {@code extra} layout fields and batch. */
  private static List<String> findings(String extra, int batch) {
    String json = REQUEST.formatted(extra).replace("\"globalBatchSize\": 768",
        "\"globalBatchSize\": " + batch);
    PlanRequest r = PlanRequests.parse(json);
    TrainingEstimate e = HyperFrames.estimate(json);
    return TrainingFindings.of(e, r.model(), r.cluster(), r.workload()).stream()
        .map(Finding::id).toList();
  }

  @Test
  void theDefaultIsTheEnginesOverlap() {
    TrainingEstimate megatron = estimate("");
    assertTrue(megatron.layout().overlapGradReduce());
    assertTrue(megatron.layout().overlapParamGather());
    TrainingEstimate fixed = estimate(", \"overlapGradReduce\": true,"
        + " \"overlapParamGather\": true");
    assertEquals(megatron.stepSeconds(), fixed.stepSeconds(), 0.0);
    TrainingEstimate deepspeed = HyperFrames.estimate(REQUEST.formatted("")
        .replace("\"virtualStages\": 6", "\"virtualStages\": 1, \"engine\": \"deepspeed\""));
    assertEquals(Engine.DEEPSPEED, deepspeed.layout().engine());
    assertFalse(deepspeed.layout().overlapGradReduce(), "DeepSpeed's pipeline engine");
    assertFalse(deepspeed.layout().overlapParamGather());
  }

  /**
   * Off, each collective is exposed whole: the step grows by exactly the data-parallel time it
   * no longer hides, and nothing else changes.
   */
  @Test
  void offExposesTheCollectivesAndNothingElse() {
    TrainingEstimate on = estimate("");
    TrainingEstimate gradOff = estimate(", \"overlapGradReduce\": false");
    TrainingEstimate bothOff = estimate(", \"overlapGradReduce\": false,"
        + " \"overlapParamGather\": false");
    assertFalse(gradOff.layout().overlapGradReduce());
    assertTrue(gradOff.layout().overlapParamGather());
    double dpOn = on.time().dataParallelCommSeconds();
    double dpGrad = gradOff.time().dataParallelCommSeconds();
    double dpBoth = bothOff.time().dataParallelCommSeconds();
    assertTrue(dpOn < dpGrad && dpGrad < dpBoth, dpOn + " < " + dpGrad + " < " + dpBoth);
    for (TrainingEstimate off : new TrainingEstimate[] {gradOff, bothOff}) {
      assertEquals(on.time().computeSeconds(), off.time().computeSeconds(), 1e-12);
      assertEquals(on.time().bubbleSeconds(), off.time().bubbleSeconds(), 1e-12);
      assertEquals(off.time().dataParallelCommSeconds() - dpOn,
          off.stepSeconds() - on.stepSeconds(), 1e-9);
    }
    // With both off the two collectives add up: the reduce-scatter of the gradient-off layout
    // is exposed whole, and so is the gather once it is off too.
    TrainingEstimate gatherOff = estimate(", \"overlapParamGather\": false");
    assertEquals(dpBoth - dpOn, (dpGrad - dpOn) + (gatherOff.time().dataParallelCommSeconds()
        - dpOn), 1e-9);
    // Here the two collectives off cost 0.17 s of a 10.91 s step (docs/validation.md, MegaScale):
    // under the finding's twentieth.
    assertEquals(0.17, dpBoth - dpOn, 0.005);
    assertEquals(10.91, bothOff.stepSeconds(), 0.005);
    assertTrue(dpBoth / bothOff.stepSeconds() < TrainingFindings.OVERLAP_OFF_LIMIT);
    assertFalse(findings(", \"overlapGradReduce\": false, \"overlapParamGather\": false", 768)
        .contains("data-parallel-overlap-off"));
    // A third of the batch: the same collectives in a step a third as long.
    String off = ", \"overlapGradReduce\": false, \"overlapParamGather\": false";
    assertTrue(findings(off, 256).contains("data-parallel-overlap-off"));
    assertFalse(findings("", 256).contains("data-parallel-overlap-off"));
  }

  /**
   * Off where the engine can run it off: DeepSpeed's {@code overlap_comm} false at ZeRO-2 and
   * ZeRO-3 reduces on the compute stream (ZeRO-3 gathers there too), so the step grows by the
   * time it no longer hides, and no less than the serialised reduce-scatters. PyTorch FSDP has no
   * switch, and Megatron-FSDP forces the overlap at ZeRO-2/3: a request that turns it off there
   * is refused naming the field (Engine#overlapUnsupported).
   */
  @Test
  void theOverlapIsOffOnlyWhereTheEngineCanTurnItOff() {
    String request = "{\"model\": {\"catalog\": \"llama2-7b\"}, \"cluster\": {\"accelerator\":"
        + " \"a100-sxm-80gb\", \"devices\": 64}, \"workload\": {\"type\": \"training\","
        + " \"precision\": \"bf16-mixed\", \"globalBatchSize\": 128}, \"layout\": {\"tp\": 1,"
        + " \"pp\": 1, \"dp\": 64, \"microBatch\": 2, \"recompute\": \"none\"%s}}";
    for (int zero : new int[] {2, 3}) {
      String ds = ", \"zeroStage\": " + zero + ", \"engine\": \"deepspeed\"";
      TrainingEstimate on = HyperFrames.estimate(request.formatted(ds));
      TrainingEstimate off = HyperFrames.estimate(request.formatted(ds
          + ", \"overlapGradReduce\": false"));
      assertFalse(off.layout().overlapGradReduce());
      assertTrue(off.time().dataParallelCommSeconds() > on.time().dataParallelCommSeconds(),
          "ZeRO-" + zero + ": " + off.time().dataParallelCommSeconds() + " > "
              + on.time().dataParallelCommSeconds());
      assertEquals(on.stepSeconds() - on.time().dataParallelCommSeconds(),
          off.stepSeconds() - off.time().dataParallelCommSeconds(), 1e-9 * on.stepSeconds(),
          "only the data-parallel time changes");
    }
    for (String refused : new String[] {", \"zeroStage\": 3, \"engine\": \"fsdp\"",
        ", \"zeroStage\": 3, \"engine\": \"fsdp\", \"shardGroupSize\": 8",
        ", \"zeroStage\": 0, \"engine\": \"fsdp\"",
        ", \"zeroStage\": 2, \"engine\": \"megatron\"",
        ", \"zeroStage\": 3, \"engine\": \"megatron\""}) {
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
          () -> HyperFrames.estimate(request.formatted(refused
              + ", \"overlapGradReduce\": false")), refused);
      assertTrue(e.getMessage().startsWith("layout.overlapGradReduce: false is not run by"),
          e.getMessage());
    }
    // Megatron-LM at ZeRO-1 runs it off (its distributed optimizer's default).
    TrainingEstimate megatron = HyperFrames.estimate(request.formatted(", \"zeroStage\": 1,"
        + " \"engine\": \"megatron\", \"overlapGradReduce\": false"));
    assertFalse(megatron.layout().overlapGradReduce());
    // With the engine and the stage open, a plan that fixes it off is searched where it runs.
    Plan p = Planner.analytical().plan(PlanRequests.parse("{\"model\": {\"catalog\":"
        + " \"llama2-7b\"}, \"cluster\": {\"accelerator\": \"a100-sxm-80gb\", \"devices\": 64},"
        + " \"workload\": {\"type\": \"training\", \"precision\": \"bf16-mixed\","
        + " \"globalBatchSize\": 128, \"trainingTokens\": 1e10}, \"layout\":"
        + " {\"overlapGradReduce\": false}}"));
    io.hyperframes.parallel.Layout best = p.best().estimate().layout();
    assertFalse(best.overlapGradReduce(), best.toString());
    assertTrue(best.engine() == Engine.DEEPSPEED
        || best.engine() == Engine.MEGATRON && best.zeroStage() <= 1, best.toString());
  }

  @Test
  void anEngineThatCannotOverlapIsRefusedNamingTheField() {
    assertRefusedOnDeepSpeed("overlapGradReduce",
        "layout.overlapGradReduce: true is not run by deepspeed with pp 8");
    assertRefusedOnDeepSpeed("overlapParamGather",
        "layout.overlapParamGather: true is not run by deepspeed");
    // With the engine open, a fixed overlap that DeepSpeed's pipeline cannot run leaves
    // Megatron-LM, which can.
    TrainingEstimate open = estimate(", \"overlapGradReduce\": true");
    assertEquals(Engine.MEGATRON, open.layout().engine());
  }

  /** DeepSpeed's pipeline layout with {@code field} true is refused by a message that starts so. */
  private static void assertRefusedOnDeepSpeed(String field, String start) {
    String json = REQUEST.formatted("").replace("\"virtualStages\": 6",
        "\"virtualStages\": 1, \"engine\": \"deepspeed\", \"" + field + "\": true");
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> HyperFrames.estimate(json));
    assertTrue(e.getMessage().startsWith(start), e.getMessage());
  }

  @Test
  void theLaunchSaysWhatTheEstimateModelled() {
    for (boolean overlap : new boolean[] {true, false}) {
      String json = REQUEST.formatted(", \"engine\": \"megatron\", \"overlapGradReduce\": "
          + overlap + ", \"overlapParamGather\": " + overlap);
      PlanRequest r = PlanRequests.parse(json);
      Plan p = Planner.analytical().plan(r);
      assertEquals(overlap, p.best().estimate().layout().overlapGradReduce());
      String text = LaunchConfigs.megatron(p.best(), (TransformerSpec) r.model(),
          p.goldenParameters()).text();
      assertEquals(overlap, text.contains("--overlap-grad-reduce"), text);
      assertEquals(overlap, text.contains("--overlap-param-gather"), text);
      assertTrue(p.goldenParameters().stream().anyMatch(g -> g.name().equals(
          "overlapGradReduce") && g.value().equals(overlap)), p.goldenParameters().toString());
    }
  }
}
