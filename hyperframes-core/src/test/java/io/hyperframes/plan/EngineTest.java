package io.hyperframes.plan;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.hyperframes.HyperFrames;
import io.hyperframes.parallel.Engine;
import org.junit.jupiter.api.Test;

/** What each engine changes: pipeline schedule, overlap, default kernels, sharding fields. */
class EngineTest {

  private static TrainingEstimate estimate(String layout) {
    return HyperFrames.estimate("""
        {"model": {"catalog": "gpt3-175b"},
         "cluster": {"accelerator": "a100-sxm-80gb", "devices": 384},
         "workload": {"type": "training", "precision": "bf16-mixed", "globalBatchSize": 1536},
         "layout": %s}
        """.formatted(layout));
  }

  @Test
  void deepSpeedPipelinesAreNotInterleavedAndReduceGradientsAfterTheLastBackward() {
    String fixed = "\"tp\": 8, \"pp\": 12, \"dp\": 4, \"microBatch\": 1, \"recompute\": \"full\","
        + " \"sequenceParallel\": false, \"zeroStage\": 0, \"virtualStages\": 1";
    TrainingEstimate megatron = estimate("{" + fixed + "}");
    TrainingEstimate deepspeed = estimate("{" + fixed + ", \"engine\": \"deepspeed\"}");
    assertEquals(Engine.DEEPSPEED, deepspeed.layout().engine());
    assertEquals(megatron.time().computeSeconds(), deepspeed.time().computeSeconds(), 1e-9);
    assertTrue(deepspeed.time().dataParallelCommSeconds()
        > megatron.time().dataParallelCommSeconds(), "no overlap of the gradient reduction");
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> estimate("{\"tp\": 8, \"pp\": 12, \"dp\": 4, \"virtualStages\": 2,"
            + " \"engine\": \"deepspeed\"}"));
    assertTrue(e.getMessage().startsWith("layout.virtualStages: 2"), e.getMessage());
    TrainingEstimate searched = estimate("{\"tp\": 8, \"pp\": 12, \"dp\": 4,"
        + " \"engine\": \"deepspeed\"}");
    assertEquals(1, searched.layout().virtualStages());
    assertTrue(searched.layout().zeroStage() <= 1, "DeepSpeed pipelines run ZeRO 0 or 1");
  }

  @Test
  void fsdpDefaultsToFusedAttentionOnAmpere() {
    String fixed = "\"tp\": 1, \"pp\": 1, \"dp\": 384, \"microBatch\": 4, \"recompute\": \"none\","
        + " \"zeroStage\": 3";
    TrainingEstimate megatron = estimate("{" + fixed + "}");
    TrainingEstimate fsdp = estimate("{" + fixed + ", \"engine\": \"fsdp\"}");
    assertTrue(fsdp.memory().activationsBytes() < megatron.memory().activationsBytes(),
        "fused attention keeps no s x s scores");
  }

  @Test
  void hybridShardingGathersInsideTheNodeAndReshardingCostsABackwardGather() {
    String fixed = "\"tp\": 1, \"pp\": 1, \"dp\": 384, \"microBatch\": 4, \"recompute\": \"full\","
        + " \"zeroStage\": 3, \"engine\": \"fsdp\"";
    TrainingEstimate full = estimate("{" + fixed + "}");
    TrainingEstimate hybrid = estimate("{" + fixed + ", \"shardGroupSize\": 8}");
    TrainingEstimate kept = estimate("{" + fixed + ", \"reshardAfterForward\": false}");
    assertEquals(8, hybrid.layout().shardRanks());
    assertTrue(hybrid.time().dataParallelCommSeconds() <= full.time().dataParallelCommSeconds());
    assertTrue(kept.time().dataParallelCommSeconds() <= full.time().dataParallelCommSeconds());
    // Shards over 8 ranks instead of 384: 48 times the optimizer state per device.
    assertEquals(48.0, hybrid.memory().optimizerBytes() / full.memory().optimizerBytes(), 1e-9);
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> estimate("{" + fixed + ", \"shardGroupSize\": 7}"));
    assertTrue(e.getMessage().contains("shardGroupSize: 7"), e.getMessage());
    IllegalArgumentException z = assertThrows(IllegalArgumentException.class,
        () -> estimate("{\"zeroStage\": 2, \"shardGroupSize\": 8}"));
    assertTrue(z.getMessage().startsWith("layout.shardGroupSize: 8 needs zeroStage 1 or 3"),
        z.getMessage());
    IllegalArgumentException u = assertThrows(IllegalArgumentException.class,
        () -> estimate("{\"engine\": \"colossal\"}"));
    assertEquals("layout.engine: unknown engine 'colossal' (expected megatron, deepspeed, fsdp"
        + " or maxtext)", u.getMessage());
  }
}
