package io.hyperframes.plan;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.hyperframes.EstimateBuilder;
import io.hyperframes.HyperFrames;

import io.hyperframes.parallel.Recompute;
import org.junit.jupiter.api.Test;

/**
 * {@code layout.firstStageLayers} and {@code lastStageLayers}: an explicit split at the even
 * shares is the even layout; DeepSeek-V3's 61 layers as dgxc-benchmarking 25.08 split them over
 * 8 ranks (8, 6 × 8, 5) put the pace on a middle rank, not on 8 layers beside the logits and the
 * multi-token prediction; every impossible split is named.
 */
class UnevenPipelineTest {

  private static EstimateBuilder llama() {
    return HyperFrames.estimate().model("llama3-70b").accelerator("h100-sxm-80gb").devices(64)
        .training(t -> t.precision("bf16-mixed").globalBatchSize(256).tokens(1e11));
  }

  private static EstimateBuilder deepSeek() {
    return HyperFrames.estimate().model("deepseek-v3").accelerator("h100-sxm-80gb").devices(1024)
        .training(t -> t.precision("bf16-mixed").globalBatchSize(8192).tokens(1e11)
            .moeLoadImbalance(1.0));
  }

  @Test
  void theEvenSharesWrittenOutAreTheEvenLayout() {
    TrainingEstimate even = llama().layout(l -> l.tp(4).pp(8).dp(2).microBatch(1)
        .sequenceParallel(true).zeroStage(1).recompute(Recompute.SELECTIVE)).run();
    TrainingEstimate split = llama().layout(l -> l.tp(4).pp(8).dp(2).microBatch(1)
        .sequenceParallel(true).zeroStage(1).recompute(Recompute.SELECTIVE).stageLayers(10, 10))
        .run();
    assertEquals(even.stepSeconds(), split.stepSeconds(), 1e-12 * even.stepSeconds());
    assertEquals(even.memory().totalBytes(), split.memory().totalBytes(),
        1e-12 * even.memory().totalBytes());
    assertEquals(10, split.layout().firstStageLayers());
    EstimateJson.EstimateLayout written = EstimateJson.Estimate.of(split).layout();
    assertEquals(10, written.lastStageLayers());
  }

  @Test
  void deepSeekV3sSplitPutsThePaceOnAMiddleRank() {
    TrainingEstimate even = deepSeek().layout(l -> l.tp(1).pp(8).virtualStages(2).dp(128).ep(64)
        .etp(1).microBatch(1).zeroStage(1).moeDispatcher("deepep")).run();
    TrainingEstimate split = deepSeek().layout(l -> l.tp(1).pp(8).virtualStages(2).dp(128).ep(64)
        .etp(1).microBatch(1).zeroStage(1).moeDispatcher("deepep").stageLayers(8, 5)).run();
    assertArrayEquals(new int[] {8, 8, 5}, split.layout().stageLayers(61));
    assertArrayEquals(new int[] {8, 8, 8}, even.layout().stageLayers(61));
    // The even count holds 8 layers, the logits and the module on the last rank; the split, 8
    // layers on a middle rank (and 5 beside the extras on the last).
    assertTrue(split.time().computeSeconds() < 0.8 * even.time().computeSeconds(),
        split.time().computeSeconds() + " vs " + even.time().computeSeconds());
    assertTrue(split.stepSeconds() < even.stepSeconds());
  }

  @Test
  void impossibleSplitsAreNamed() {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> deepSeek()
        .layout(l -> l.tp(2).pp(16).dp(32).ep(64).etp(1).microBatch(1).stageLayers(4, 4)).run());
    assertTrue(e.getMessage().startsWith("layout.firstStageLayers: 4 leaves 53 of model.layers 61,"
        + " which the other 14"), e.getMessage());
    e = assertThrows(IllegalArgumentException.class, () -> deepSeek()
        .layout(l -> l.tp(2).pp(16).dp(32).ep(64).etp(1).microBatch(1).stageLayers(40, 20)).run());
    assertTrue(e.getMessage().startsWith("layout.firstStageLayers: 40 leaves 1 of model.layers 61"),
        e.getMessage());
    e = assertThrows(IllegalArgumentException.class, () -> llama()
        .layout(l -> l.tp(8).pp(1).dp(8).microBatch(1).stageLayers(10, 10)).run());
    assertTrue(e.getMessage().contains("needs pipeline parallelism (pp > 1)"), e.getMessage());
    e = assertThrows(IllegalArgumentException.class, () -> llama()
        .layout(l -> l.tp(4).pp(8).dp(2).microBatch(1).stageLayers(-1, 10)).run());
    assertTrue(e.getMessage().startsWith("layout.firstStageLayers: must be > 0, got -1"),
        e.getMessage());
  }
}
