package io.hyperframes.plan;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.hyperframes.HyperFrames;
import io.hyperframes.LayoutSpec;
import io.hyperframes.hardware.Accelerator;
import io.hyperframes.catalog.Catalog;
import io.hyperframes.memory.MemoryHierarchyModel;
import io.hyperframes.model.TransformerSpec;
import io.hyperframes.parallel.Layout;
import io.hyperframes.precision.NumberFormat;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.Test;

/**
 * The bytes a routed MoE layer's token permutation moves, counted kernel by kernel from
 * Megatron-Core's dispatchers (LayerTime#moePermutationBytesPerToken), recomputed here
 * by hand for Qwen3-30B-A3B (48 MoE layers, hidden 2048, 128 experts, top 8) in BF16.
 */
class MoePermutationTest {

  private static final double ROW = 2048 * 2.0; // one token's hidden state in BF16

  private static TrainingEstimate estimate(String model, int devices,
      UnaryOperator<LayoutSpec> layout) {
    return HyperFrames.estimate().model(model).accelerator("h100-sxm-80gb").devices(devices)
        .training(t -> t.precision("bf16-mixed").globalBatchSize(devices).tokens(1e11))
        .layout(l -> layout.apply(l.pp(1).microBatch(1).zeroStage(1)))
        .run();
  }

  private static double bytes(String model, Layout layout) {
    TransformerSpec m = Catalog.builtIn().model("model", model);
    return LayerTime.moePermutationBytesPerToken(m, layout, 2.0);
  }

  @Test
  void allToAllPermutesUnpermutesAndSortsByLocalExpert() {
    Layout ep16 = estimate("qwen3-30b-a3b", 16, l -> l.tp(1).dp(16).ep(16)).layout();
    // permute (1 + 8 rows), unpermute (8 + 1), and 8 local experts: the 8 received copies
    // sorted by expert and back, each read and written (4 · 8).
    assertEquals((9 + 9 + 32) * ROW, bytes("qwen3-30b-a3b", ep16), 1e-9);
    Layout ep128 = estimate("qwen3-30b-a3b", 128, l -> l.tp(1).dp(128).ep(128)).layout();
    // One local expert: no sort.
    assertEquals((9 + 9) * ROW, bytes("qwen3-30b-a3b", ep128), 1e-9);
  }

  @Test
  void sequenceParallelismSplitsTheSourceRowsAndTheExpertGroupTheReceivedOnes() {
    Layout l = estimate("qwen3-30b-a3b", 16,
        s -> s.tp(2).dp(8).ep(8).etp(1).sequenceParallel(true)).layout();
    // The rank holds half the tokens (sp 2); its experts receive k · etp/tp = 4 copies of each.
    assertEquals((9 * 0.5 + 9 * 0.5 + 4 * 4) * ROW, bytes("qwen3-30b-a3b", l), 1e-9);
  }

  @Test
  void deepEpPermutesOneRowPerDestinationRankIntoTheExpertsRows() {
    Layout l = estimate("qwen3-30b-a3b", 16,
        s -> s.tp(1).dp(16).ep(16).moeDispatcher("deepep")).layout();
    // A rank holds 8 of the 128 experts: missed by a token's 8 picks with C(120,8)/C(128,8).
    double miss = 1.0;
    for (int i = 0; i < 8; i++) {
      miss *= (120.0 - i) / (128.0 - i);
    }
    double ranks = 16 * (1 - miss);
    assertTrue(ranks > 6 && ranks < 8, "ranks reached " + ranks);
    assertEquals(2 * (ranks + 8) * ROW, bytes("qwen3-30b-a3b", l), 1e-6 * ROW);
  }

  @Test
  void aDenseModelPermutesNothing() {
    Layout dense = estimate("llama3-8b", 8, l -> l.tp(1).dp(8)).layout();
    assertEquals(0.0, bytes("llama3-8b", dense));
  }

  @Test
  void theDispatchersDifferInComputeByThePermutationAloneForwardAndBackward() {
    // Inside one node the two dispatchers move the same exchange bytes and run the same
    // experts; their compute differs by the permutation, forward and backward, at the BF16
    // element-wise bandwidth: one micro-batch of 4096 tokens through 48 MoE layers.
    TrainingEstimate a2a = estimate("qwen3-30b-a3b", 8, l -> l.tp(1).dp(8).ep(8));
    TrainingEstimate deepEp = estimate("qwen3-30b-a3b", 8,
        l -> l.tp(1).dp(8).ep(8).moeDispatcher("deepep"));
    Accelerator h100 = Catalog.builtIn().accelerator("accelerator", "h100-sxm-80gb");
    double bandwidth = MemoryHierarchyModel.analytical().streamingBytesPerSecond(h100)
        * h100.kernel(NumberFormat.BF16).elementwiseBandwidthFraction();
    double moved = bytes("qwen3-30b-a3b", a2a.layout()) - bytes("qwen3-30b-a3b",
        deepEp.layout());
    assertTrue(moved > 0, "the all-to-all's sort costs more than DeepEP's row expansion");
    double expected = 48 * 2 * moved * 4096 / bandwidth;
    assertEquals(expected, a2a.time().computeSeconds() - deepEp.time().computeSeconds(),
        1e-9 * expected);
  }
}
