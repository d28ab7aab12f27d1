package io.hyperframes.plan;

import io.hyperframes.PlanRequests;
import io.hyperframes.launch.Launch;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.hyperframes.HyperFrames;
import io.hyperframes.launch.Target;
import io.hyperframes.parallel.Recompute;
import io.hyperframes.parallel.RecomputeModule;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * {@code layout.recomputeModules}, Megatron-Core's {@code --recompute-modules}: the default
 * ({@code core_attn}) is today's selective recomputation bit for bit; recomputing the
 * normalisations and the MoE layer stores less and reruns their forward (the MoE layer's
 * all-to-all too); a module the model lacks, an unknown name or a policy other than selective
 * is named.
 */
class RecomputeModulesTest {

  /** The model zoo's Qwen3-235B-A22B long-context layout at 16K tokens (docs/validation). */
  private static final String QWEN_16K = "{\"name\": \"qwen3-235b-a22b-16k\", \"layers\": 94,"
      + " \"hidden\": 4096, \"heads\": 64, \"kvHeads\": 4, \"headDim\": 128,"
      + " \"ffnHidden\": 12288, \"gatedMlp\": true, \"vocab\": 151936, \"seqLen\": 16384,"
      + " \"tiedEmbeddings\": false, \"moe\": {\"experts\": 128, \"topK\": 8,"
      + " \"expertFfnHidden\": 1536}}";

  private static String request(String recompute) {
    return "{\"model\": " + QWEN_16K + ", \"cluster\": {\"accelerator\": \"h100-sxm-80gb\","
        + " \"devices\": 256}, \"workload\": {\"type\": \"training\", \"precision\":"
        + " \"bf16-mixed\", \"globalBatchSize\": 256, \"trainingTokens\": 1e11}, \"layout\":"
        + " {\"tp\": 4, \"pp\": 8, \"virtualStages\": 4, \"ep\": 8, \"etp\": 1, \"cp\": 1,"
        + " \"microBatch\": 1, \"sequenceParallel\": true, \"zeroStage\": 1, \"engine\":"
        + " \"megatron\"" + recompute + "}}";
  }

  private static TrainingEstimate qwenLong(String recompute) {
    return TrainingEstimator.analytical().estimate(io.hyperframes.request.Requests.parse(
        request(recompute)));
  }

  @Test
  void theDefaultIsTheAttentionCore() {
    TrainingEstimate open = qwenLong(", \"recompute\": \"selective\"");
    TrainingEstimate named = qwenLong(", \"recomputeModules\": [\"core_attn\"]");
    assertEquals(RecomputeModule.DEFAULT, open.layout().recomputeModules());
    assertEquals(open.stepSeconds(), named.stepSeconds(), 0.0);
    assertEquals(open.memory().totalBytes(), named.memory().totalBytes(), 0.0);
    assertEquals(open.hardwareFlopsPerStep(), named.hardwareFlopsPerStep(), 0.0);
    TrainingEstimate none = qwenLong(", \"recompute\": \"none\"");
    assertTrue(none.layout().recomputeModules().isEmpty());
  }

  @Test
  void normsAndTheMoeLayerStoreLessAndRerunTheirForward() {
    TrainingEstimate core = qwenLong(", \"recompute\": \"selective\"");
    TrainingEstimate moe = qwenLong(", \"recomputeModules\": [\"layernorm\", \"moe\"]");
    assertEquals(Set.of(RecomputeModule.LAYERNORM, RecomputeModule.MOE),
        moe.layout().recomputeModules());
    assertEquals(Recompute.SELECTIVE, moe.layout().recompute());
    // At 16K tokens the default layout does not fit an 80 GB H100; Megatron-Core ran it with
    // these modules recomputed, and so it fits.
    assertFalse(core.feasible(), core.reasons().toString());
    assertTrue(moe.feasible(), moe.reasons().toString());
    assertTrue(moe.memory().activationsBytes() < 0.5 * core.memory().activationsBytes(),
        moe.memory().activationsBytes() + " vs " + core.memory().activationsBytes());
    assertTrue(moe.time().recomputeSeconds() > 0);
    assertEquals(0.0, core.time().recomputeSeconds(), 0.0);
    // Dispatch and combine again in the recomputed forward: 6 all-to-alls a layer, not 4.
    assertEquals(1.5, moe.time().allToAllSeconds() / core.time().allToAllSeconds(), 1e-9);
    assertTrue(moe.stepSeconds() > core.stepSeconds());
    // Hardware FLOPs count the rerun experts and router (and, for core_attn, the attention core).
    TrainingEstimate none = qwenLong(", \"recompute\": \"none\"");
    assertTrue(moe.hardwareFlopsPerStep() > none.hardwareFlopsPerStep());
    assertEquals(core.modelFlopsPerStep(), moe.modelFlopsPerStep(), 0.0);
  }

  /**
   * A routed MoE layer keeps its experts' first-matmul input, the dispatched copies
   * {@code e·sb·k·h·etp/tp}: each of etp expert tensor-parallel ranks holds the copies of the
   * tokens the group routes. Recomputing the MoE layer drops them; its activation alone does not.
   */
  @Test
  void routedExpertsKeepTheirDispatchedCopies() {
    io.hyperframes.request.EstimateRequest r = io.hyperframes.request.Requests.parse(
        request(", \"recompute\": \"selective\""));
    io.hyperframes.model.TransformerSpec m = (io.hyperframes.model.TransformerSpec) r.model();
    io.hyperframes.precision.PrecisionRecipe p = r.workload().precision();
    io.hyperframes.parallel.ParallelismModel pm = io.hyperframes.parallel.ParallelismModel
        .megatron();
    io.hyperframes.parallel.Layout one = new io.hyperframes.parallel.Layout(4, 8, 8, 4, 1, true,
        Recompute.SELECTIVE, 1, io.hyperframes.parallel.Engine.MEGATRON, 0, true, 8, 1,
        io.hyperframes.parallel.CpCommType.P2P, 1);
    io.hyperframes.parallel.Layout four = one.withExperts(8, 4);
    double copies = 2.0 * 16384 * 8 * 4096;
    assertEquals(copies * 3 / 4, pm.activationBytesPerLayer(m, four, p)
        - pm.activationBytesPerLayer(m, one, p), 1e-9 * copies);
    double act = pm.activationBytesPerLayer(m, one.withRecomputeModules(
        Set.of(RecomputeModule.MOE_ACT)), p);
    double moe = pm.activationBytesPerLayer(m, one.withRecomputeModules(
        Set.of(RecomputeModule.MOE)), p);
    // moe drops the experts' three passes (3e·sb·k·f_e, as tp-sharded) and the copies (etp 1:
    // e·sb·k·h/tp); moe_act only the activation output (e·sb·k·f_e/tp).
    double routed = 2.0 * 16384 * 8 * 1536;
    assertEquals(3 * routed / 4 + copies / 4 - routed / 4, act - moe, 1e-9 * copies);
  }

  @Test
  void theActivationAloneIsCheaperThanTheWholeMoeLayer() {
    TrainingEstimate core = qwenLong(", \"recompute\": \"selective\"");
    TrainingEstimate act = qwenLong(", \"recomputeModules\": [\"moe_act\"]");
    TrainingEstimate moe = qwenLong(", \"recomputeModules\": [\"moe\"]");
    assertTrue(act.memory().activationsBytes() < core.memory().activationsBytes());
    assertTrue(moe.memory().activationsBytes() < act.memory().activationsBytes());
    assertTrue(act.stepSeconds() < moe.stepSeconds());
    assertEquals(core.time().allToAllSeconds(), act.time().allToAllSeconds(), 0.0);
  }

  @Test
  void megatronLaunchNamesTheModules() {
    String launch = Launch.emit(Planner.analytical().plan(PlanRequests.parse(
        request(", \"recomputeModules\": [\"layernorm\", \"moe\"]"))), Target.MEGATRON);
    assertTrue(launch.contains("--recompute-granularity selective"), launch);
    assertTrue(launch.contains("--recompute-modules layernorm moe"), launch);
    String plain = Launch.emit(Planner.analytical().plan(PlanRequests.parse(
        request(", \"recompute\": \"selective\""))), Target.MEGATRON);
    assertTrue(plain.contains("--recompute-activations"), plain);
    assertFalse(plain.contains("--recompute-modules"), plain);
  }

  @Test
  void badModulesAreNamed() {
    List<String> bad = List.of(", \"recomputeModules\": [\"attention\"]",
        ", \"recomputeModules\": []",
        ", \"recomputeModules\": [\"moe\", \"moe\"]",
        ", \"recomputeModules\": [\"moe\"], \"recompute\": \"full\"",
        ", \"recomputeModules\": [\"mla_up_proj\"]",
        ", \"recomputeModules\": [\"shared_experts\"]",
        ", \"recomputeModules\": [\"mlp\"]");
    List<String> expected = List.of("unknown module 'attention'", "at least one module",
        "named twice", "needs layout.recompute selective", "needs latent attention",
        "needs shared experts", "needs a layer with a dense MLP");
    for (int i = 0; i < bad.size(); i++) {
      String layout = bad.get(i);
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
          () -> qwenLong(layout));
      assertTrue(e.getMessage().startsWith("layout.recomputeModules: "), e.getMessage());
      assertTrue(e.getMessage().contains(expected.get(i)), e.getMessage());
    }
    IllegalArgumentException dense = assertThrows(IllegalArgumentException.class,
        () -> HyperFrames.estimate().model("llama2-7b").accelerator("h100-sxm-80gb").devices(8)
            .training(t -> t.precision("bf16-mixed").globalBatchSize(64).tokens(1e9))
            .layout(l -> l.tp(1).pp(1).recomputeModules("moe")).run());
    assertTrue(dense.getMessage().contains("moe needs a mixture of experts"), dense.getMessage());
  }
}
