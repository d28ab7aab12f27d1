package io.hyperframes.plan;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.hyperframes.EstimateBuilder;
import io.hyperframes.HyperFrames;
import io.hyperframes.LayoutSpec;
import io.hyperframes.parallel.Recompute;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.Test;

/**
 * {@code layout.etp}, Megatron-Core's expert tensor-parallel degree: at tp it is the estimate
 * without it; at 1 the experts' matmuls are whole (same FLOPs), the expert-parallel ranks are
 * adjacent (an ep-8 group inside a node at tp 4), and each rank holds tp times the expert
 * weights; bad values are named.
 */
class ExpertTensorParallelTest {

  private static EstimateBuilder qwen(UnaryOperator<LayoutSpec> experts) {
    return HyperFrames.estimate().model("qwen3-235b-a22b").accelerator("h100-sxm-80gb")
        .devices(256)
        .training(t -> t.precision("bf16-mixed").globalBatchSize(2048).tokens(1e11))
        .layout(l -> experts.apply(l.tp(4).pp(8).dp(8).virtualStages(4).ep(8).microBatch(1)
            .sequenceParallel(true).zeroStage(1).recompute(Recompute.SELECTIVE)));
  }

  @Test
  void etpAtTpIsTheDefault() {
    TrainingEstimate open = qwen(l -> l).run();
    TrainingEstimate atTp = qwen(l -> l.etp(4)).run();
    assertEquals(open.stepSeconds(), atTp.stepSeconds(), 0.0);
    assertEquals(open.memory().totalBytes(), atTp.memory().totalBytes(), 0.0);
    assertEquals(4, open.layout().etp());
  }

  @Test
  void wholeExpertsMoveTheAllToAllInsideTheNodeAndHoldMoreWeights() {
    TrainingEstimate split = qwen(l -> l).run();
    TrainingEstimate whole = qwen(l -> l.etp(1)).run();
    assertEquals(1, whole.layout().etp());
    assertEquals(split.modelFlopsPerStep(), whole.modelFlopsPerStep(),
        1e-9 * split.modelFlopsPerStep());
    // ep 8 ranks 4 apart span four nodes; 1 apart they are one node's eight GPUs.
    assertTrue(whole.time().allToAllSeconds() < 0.25 * split.time().allToAllSeconds(),
        whole.time().allToAllSeconds() + " vs " + split.time().allToAllSeconds());
    // Whole experts: wider matmuls, a faster step.
    assertTrue(whole.stepSeconds() < split.stepSeconds());
    // Each rank holds 1/etp of its experts: tp times the weights and gradients, while the
    // distributed optimizer's states spread over tp times the expert data-parallel ranks.
    double ratio = whole.memory().expertStatesBytes() / split.memory().expertStatesBytes();
    assertTrue(ratio > 1.5 && ratio < 4,
        whole.memory().expertStatesBytes() + " vs " + split.memory().expertStatesBytes());
    assertEquals(8 * 4 * 1 / 8, whole.layout().expertDataParallel());
  }

  /**
   * The model zoo's cross-node layout (tp 2, pp 8, dp 16, ep 32 with whole experts): ep exceeds
   * dp·cp, which only etp < tp allows (ep·etp = 32 divides tp·cp·dp = 32).
   */
  @Test
  void expertParallelismBeyondDataParallelismNeedsWholeExperts() {
    EstimateBuilder zoo = HyperFrames.estimate().model("qwen3-235b-a22b")
        .accelerator("h100-sxm-80gb").devices(256)
        .training(t -> t.precision("bf16-mixed").globalBatchSize(2048).tokens(1e11));
    TrainingEstimate e = zoo.layout(l -> l.tp(2).pp(8).dp(16).virtualStages(4).ep(32).etp(1)
        .microBatch(1).sequenceParallel(true).zeroStage(1)).run();
    assertEquals(32, e.layout().ep());
    assertEquals(1, e.layout().expertDataParallel());
    IllegalArgumentException split = assertThrows(IllegalArgumentException.class,
        () -> zoo.layout(l -> l.tp(2).pp(8).dp(16).virtualStages(4).ep(32).microBatch(1)
            .sequenceParallel(true).zeroStage(1)).run());
    assertTrue(split.getMessage().contains("layout.ep"), split.getMessage());
  }

  @Test
  void badDegreesAreNamed() {
    IllegalArgumentException grid = assertThrows(IllegalArgumentException.class,
        () -> qwen(l -> l.etp(3)).run());
    assertTrue(grid.getMessage().contains("layout.etp"), grid.getMessage());
    IllegalArgumentException dense = assertThrows(IllegalArgumentException.class,
        () -> HyperFrames.estimate().model("llama2-7b").accelerator("h100-sxm-80gb").devices(8)
            .training(t -> t.precision("bf16-mixed").globalBatchSize(64).tokens(1e9))
            .layout(l -> l.tp(2).dp(4).etp(1)).run());
    assertTrue(dense.getMessage().contains("layout.etp"), dense.getMessage());
  }
}
