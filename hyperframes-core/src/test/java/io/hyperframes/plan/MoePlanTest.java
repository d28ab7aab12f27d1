package io.hyperframes.plan;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.hyperframes.EstimateBuilder;
import io.hyperframes.request.EstimateRequest;
import io.hyperframes.HyperFrames;
import io.hyperframes.request.Requests;
import io.hyperframes.diagnose.Finding;
import io.hyperframes.plan.TrainingFindings;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import org.junit.jupiter.api.Test;

/** The mixture-of-experts plans of docs/planning.md are what the planner answers. */
class MoePlanTest {

  /** The BF16 plan of a catalog model on H100 over a device range, checked feasible. */
  private static Plan feasiblePlan(String model, int min, int max, double tokens) {
    Plan p = HyperFrames.plan().model(model).accelerator("h100-sxm-80gb").devices(min, max)
        .training(t -> t.precision("bf16-mixed").tokens(tokens)).run();
    assertTrue(p.feasible(), p.reasons().toString());
    return p;
  }

  @Test
  void theGuidesMixtralPlanIsThePlannersAnswer() throws IOException {
    Plan p = feasiblePlan("mixtral-8x7b", 16, 64, 1e11);
    TrainingEstimate e = p.best().estimate();
    assertEquals(46.7e9, e.parameters(), 0.01 * 46.7e9);
    assertEquals(12.9e9, e.activeParameters(), 0.03 * 12.9e9);
    String guide = Files.readString(Path.of("..", "docs", "planning.md"),
        StandardCharsets.UTF_8).replaceAll("\\s+", " ");
    String quoted = String.format(Locale.ROOT, "**%d H100, %.1f days** for 100 B tokens,"
        + " Megatron-LM with tp %d", e.devices(), e.trainingDays(), e.layout().tp());
    assertTrue(guide.contains(quoted), "docs/planning.md does not quote: " + quoted);
    assertTrue(guide.contains(String.format(Locale.ROOT, "MFU %.1f %%", 100 * e.mfu())));
  }

  /**
   * Expert parallelism spread across nodes makes the all-to-all the step's largest part, and the
   * finding says to keep it inside the NVLink domain.
   */
  @Test
  void anAllToAllAcrossNodesIsFlagged() {
    EstimateBuilder b = HyperFrames.estimate().model("qwen3-30b-a3b")
        .accelerator("h100-sxm-80gb").devices(256)
        .training(t -> t.precision("bf16-mixed").globalBatchSize(256).tokens(1e11))
        .layout(l -> l.tp(8).pp(1).dp(32).ep(32).microBatch(1).zeroStage(1));
    TrainingEstimate e = b.run();
    assertTrue(e.time().allToAllSeconds() / e.stepSeconds() > 0.30,
        e.time().allToAllSeconds() + " of " + e.stepSeconds());
    EstimateRequest r = Requests.parse(b.toJson());
    List<Finding> findings = TrainingFindings.of(e, r.model(), r.cluster(), r.workload());
    assertTrue(findings.stream().anyMatch(f -> f.id().equals("all-to-all-bound")
        && f.remedy().contains("inside the NVLink domain")
        && f.remedy().contains("layout.moeDispatcher deepep")
        && f.remedy().contains("layout.overlapMoeComm")), findings.toString());
  }

  /**
   * DeepSeek-V3 in FP8 on 256-4096 H800 for its 14.8 T tokens: a feasible plan with expert
   * parallelism, whose layout, days and GPU-hours docs/planning.md quotes beside the published
   * 2.664 M H800 GPU-hours of its pre-training.
   */
  @Test
  void deepSeekV3IsPlannedWithExpertParallelismOnH800() throws IOException {
    Plan p = HyperFrames.plan().model("deepseek-v3").accelerator("h800-sxm-80gb")
        .devices(256, 4096).training(t -> t.precision("fp8-mixed").tokens(14.8e12)).run();
    assertTrue(p.feasible(), p.reasons().toString());
    TrainingEstimate e = p.best().estimate();
    assertTrue(e.layout().ep() > 1, e.layout().toString());
    assertEquals(671e9, e.parameters(), 0.01 * 671e9);
    String guide = Files.readString(Path.of("..", "docs", "planning.md"),
        StandardCharsets.UTF_8).replaceAll("\\s+", " ");
    String quoted = String.format(Locale.ROOT, "**%d H800, %.1f days**, tp %d, pp %d, ep %d",
        e.devices(), e.trainingDays(), e.layout().tp(), e.layout().pp(), e.layout().ep());
    assertTrue(guide.contains(quoted), "docs/planning.md does not quote: " + quoted);
    assertTrue(guide.contains(String.format(Locale.ROOT, "%.2f M GPU-hours",
        e.gpuHours() / 1e6)), "GPU-hours " + e.gpuHours());
    // The request leaves the dispatcher open: across nodes the planner tried DeepEP too.
    assertTrue(guide.contains("dispatcher " + e.layout().moeDispatcher().id()),
        e.layout().toString());
    // Pruning rule 3 sets over half the layouts aside, as docs/planning.md and
    // docs/performance.md say, and the counts they quote are the search's.
    assertTrue(2 * p.candidatesBounded() > p.candidatesEvaluated(),
        p.candidatesBounded() + " of " + p.candidatesEvaluated());
    assertTrue(guide.contains(String.format(Locale.ROOT, "%.1f million considered,"
        + " `search.candidatesBounded` %.1f million", p.candidatesEvaluated() / 1e6,
        p.candidatesBounded() / 1e6)), p.candidatesBounded() + " of " + p.candidatesEvaluated());
  }

  /**
   * The EP A2A overlap is an alternative the planner tries where the request leaves it open
   * (Planner#overlapAlternative), and a request that turns it off is obeyed: no alternative
   * has it, and the best is no faster than the open request's.
   */
  @Test
  void theOverlapIsTriedWhenOpenAndKeptOffWhenTheRequestSaysSo() {
    Plan open = feasiblePlan("qwen3-235b-a22b", 512, 512, 1e12);
    Plan off = HyperFrames.plan().model("qwen3-235b-a22b").accelerator("h100-sxm-80gb")
        .devices(512, 512).training(t -> t.precision("bf16-mixed").tokens(1e12))
        .layout(l -> l.overlapMoeComm(false)).run();
    assertTrue(off.feasible(), off.reasons().toString());
    assertTrue(open.best().estimate().layout().overlapMoeComm());
    for (var c : off.alternatives()) {
      assertFalse(c.estimate().layout().overlapMoeComm(), c.estimate().layout().toString());
    }
    assertTrue(off.best().estimate().stepSeconds() > open.best().estimate().stepSeconds());
  }

  @Test
  void aFixedDispatcherIsKept() {
    Plan p = HyperFrames.plan().model("qwen3-235b-a22b").accelerator("h100-sxm-80gb")
        .devices(64, 512).training(t -> t.precision("bf16-mixed").tokens(1e12))
        .layout(l -> l.moeDispatcher("alltoall")).run();
    for (var c : p.alternatives()) {
      assertEquals(io.hyperframes.parallel.MoeDispatcher.ALL_TO_ALL,
          c.estimate().layout().moeDispatcher());
    }
  }

  /**
   * Qwen3-235B-A22B on 64-512 H100: expert parallelism, and where its group crosses nodes, the
   * dispatcher the planner tried there too (DeepEP, which sends a token across the network once
   * per destination node; Planner#deepEpAlternative).
   */
  @Test
  void qwen3MoeIsPlannedWithExpertParallelismAndDeepEpAcrossNodes() throws IOException {
    Plan p = feasiblePlan("qwen3-235b-a22b", 64, 512, 1e12);
    TrainingEstimate e = p.best().estimate();
    assertTrue(e.layout().ep() > 1, e.layout().toString());
    if (e.layout().ep() * e.layout().etp() > 8) {
      assertEquals(io.hyperframes.parallel.MoeDispatcher.DEEPEP, e.layout().moeDispatcher(),
          "across nodes: " + e.layout());
    }
    assertTrue(e.time().allToAllSeconds() > 0);
    // The request leaves the EP A2A overlap open: the planner tried it, and it wins here.
    assertTrue(e.layout().overlapMoeComm(), e.layout().toString());
    // memory.expertStatesBytes: the routed experts' share of the model states, 16 of 128
    // experts per GPU, their states sharded over the 64 expert data-parallel ranks.
    assertTrue(e.memory().expertStatesBytes() > 0
        && e.memory().expertStatesBytes() < e.memory().modelStatesBytes(), e.memory().toString());
    assertTrue(io.hyperframes.json.Json.mapper().valueToTree(EstimateJson
        .Estimate.of(e)).at("/memory/expertStatesBytes").isNumber());
    String guide = Files.readString(Path.of("..", "docs", "planning.md"),
        StandardCharsets.UTF_8).replaceAll("\\s+", " ");
    assertTrue(guide.contains(String.format(Locale.ROOT, "**%d H100**", e.devices())));
    assertTrue(guide.contains(String.format(Locale.ROOT, "**ep %d**", e.layout().ep())));
    assertTrue(guide.contains(String.format(Locale.ROOT, "%.2f s of a %.1f s step",
        e.time().allToAllSeconds(), e.stepSeconds())));
  }
}
