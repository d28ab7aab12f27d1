package io.hyperframes.plan;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.hyperframes.EstimateBuilder;
import io.hyperframes.HyperFrames;
import io.hyperframes.LayoutSpec;
import io.hyperframes.parallel.Engine;
import io.hyperframes.parallel.MoeDispatcher;
import io.hyperframes.parallel.Recompute;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.Test;

/**
 * PyTorch FSDP2 with expert parallelism as torchtitan runs it (parallel_dims.py at b5bcd76c6):
 * expert parallelism borrows ranks from dp_shard, cp and tp, each expert stays whole (etp 1) and
 * FSDP shards the experts over the remaining {@code dp_shard · cp · tp / ep} ranks; Megatron-Core's
 * EP A2A overlap is Megatron's own.
 */
class FsdpExpertParallelTest {

  private static EstimateBuilder qwen(int devices, UnaryOperator<LayoutSpec> layout) {
    return HyperFrames.estimate().model("qwen3-30b-a3b").accelerator("h100-sxm-80gb")
        .devices(devices)
        .training(t -> t.precision("bf16-mixed").globalBatchSize(256).tokens(1e10))
        .layout(l -> layout.apply(l.engine(Engine.FSDP).pp(1).microBatch(1).zeroStage(3)
            .recompute(Recompute.FULL)));
  }

  @Test
  void fsdpRunsExpertParallelismWithWholeExperts() {
    TrainingEstimate e = qwen(8, l -> l.tp(2).dp(4).ep(8)).run();
    assertTrue(e.feasible(), e.reasons().toString());
    assertEquals(Engine.FSDP, e.layout().engine());
    // ep 8 takes the two tensor-parallel ranks too: whole experts, no expert data parallelism.
    assertEquals(1, e.layout().etp());
    assertEquals(1, e.layout().expertDataParallel());
    assertTrue(e.time().allToAllSeconds() > 0, e.time().toString());
    assertTrue(Double.isFinite(e.stepSeconds()) && e.stepSeconds() > 0);
  }

  @Test
  void fsdpShardsTheExpertsOverTheRanksExpertParallelismLeaves() {
    // torchtitan: efsdp = dp_shard · cp · tp / ep = 8 · 2 / 4 = 4.
    TrainingEstimate e = qwen(16, l -> l.tp(2).dp(8).ep(4)).run();
    assertEquals(4, e.layout().expertDataParallel());
    TrainingEstimate wide = qwen(16, l -> l.tp(2).dp(8).ep(16)).run();
    assertEquals(1, wide.layout().expertDataParallel());
    // Four times the experts a rank, each expert group sharded four ways: the same expert bytes
    // a rank holds at rest under ZeRO-3.
    assertEquals(e.memory().expertStatesBytes(), wide.memory().expertStatesBytes(),
        1e-6 * e.memory().expertStatesBytes());
  }

  @Test
  void splitExpertsAndTheMegatronOverlapAreNamed() {
    IllegalArgumentException etp = assertThrows(IllegalArgumentException.class,
        () -> qwen(8, l -> l.tp(2).dp(4).ep(4).etp(2)).run());
    assertTrue(etp.getMessage().contains("layout.etp") && etp.getMessage().contains("fsdp"),
        etp.getMessage());
    IllegalArgumentException overlap = assertThrows(IllegalArgumentException.class,
        () -> HyperFrames.estimate().model("qwen3-30b-a3b").accelerator("h100-sxm-80gb")
            .devices(8).training(t -> t.precision("bf16-mixed").globalBatchSize(256))
            .layout(l -> l.engine(Engine.FSDP).tp(1).pp(1).dp(8).ep(8).microBatch(1)
                .zeroStage(3).overlapMoeComm(true)).run());
    assertTrue(overlap.getMessage().contains("layout.overlapMoeComm"), overlap.getMessage());
    IllegalArgumentException deepspeed = assertThrows(IllegalArgumentException.class,
        () -> HyperFrames.estimate().model("qwen3-30b-a3b").accelerator("h100-sxm-80gb")
            .devices(8).training(t -> t.precision("bf16-mixed").globalBatchSize(256))
            .layout(l -> l.engine(Engine.DEEPSPEED).tp(1).pp(1).dp(8).ep(8)).run());
    assertTrue(deepspeed.getMessage().contains("layout.ep")
        && deepspeed.getMessage().contains("fsdp"), deepspeed.getMessage());
  }

  @Test
  void deepEpRunsOnFsdp() {
    // NeMo Automodel runs FSDP2 with expert parallelism over DeepEP.
    TrainingEstimate e = qwen(16, l -> l.tp(1).dp(16).ep(16).moeDispatcher("deepep")).run();
    assertEquals(MoeDispatcher.DEEPEP, e.layout().moeDispatcher());
    TrainingEstimate a2a = qwen(16, l -> l.tp(1).dp(16).ep(16)).run();
    // Across two nodes DeepEP sends a token over the network once per destination node.
    assertTrue(e.time().allToAllSeconds() < a2a.time().allToAllSeconds(),
        e.time().allToAllSeconds() + " vs " + a2a.time().allToAllSeconds());
  }

  @Test
  void thePlannerSearchesExpertParallelismOnFsdp() {
    Plan p = HyperFrames.plan().model("qwen3-30b-a3b").accelerator("h100-sxm-80gb")
        .devices(8, 16).training(t -> t.precision("bf16-mixed").tokens(1e10))
        .layout(l -> l.engine(Engine.FSDP)).run();
    assertTrue(p.feasible(), p.reasons().toString());
    boolean anyEp = p.best().estimate().layout().ep() > 1;
    for (var c : p.alternatives()) {
      assertEquals(Engine.FSDP, c.estimate().layout().engine());
      anyEp |= c.estimate().layout().ep() > 1;
      assertTrue(c.estimate().layout().ep() == 1 || c.estimate().layout().etp() == 1,
          c.estimate().layout().toString());
    }
    assertTrue(anyEp, p.best().estimate().layout().toString());
  }
}
