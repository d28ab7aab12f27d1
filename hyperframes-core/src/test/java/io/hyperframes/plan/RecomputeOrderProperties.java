package io.hyperframes.plan;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.hyperframes.catalog.Catalog;
import io.hyperframes.hardware.Cluster;
import io.hyperframes.model.TransformerSpec;
import io.hyperframes.parallel.CpCommType;
import io.hyperframes.parallel.Engine;
import io.hyperframes.parallel.Layout;
import io.hyperframes.parallel.MoeDispatcher;
import io.hyperframes.parallel.Recompute;
import io.hyperframes.precision.Optimizer;
import io.hyperframes.precision.PrecisionRecipe;
import io.hyperframes.workload.TrainingWorkload;
import java.util.ArrayList;
import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Assume;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

/**
 * Laws of recomputation: for a layout fixed in everything else (the dispatcher and the
 * expert-parallel overlap included), from no recomputation to selective to full the step never
 * shortens and the memory never grows, on dense and mixture-of-experts models, with and without
 * pipelines, interleaving, ZeRO, context parallelism, FP8 and fused attention. (A planner that
 * prunes by recomputation could rest on them; one that did, tried on 2026-12-04, saved a fifth
 * of the evaluations of the DeepSeek-V3 search and no measurable time, and was not kept.)
 */
class RecomputeOrderProperties implements LayoutArbitraries {

  private static final TrainingEstimator ESTIMATOR = TrainingEstimator.analytical();

  @Provide
  Arbitrary<String> accelerators() {
    return Arbitraries.of("h100-sxm-80gb", "a100-sxm-80gb", "h800-sxm-80gb");
  }

  @Property(tries = 1000)
  void moreRecomputationNeverShortensTheStepNorGrowsTheMemory(@ForAll("models") String name,
      @ForAll("accelerators") String accelerator, @ForAll("tps") int tp, @ForAll("pps") int pp,
      @ForAll("small") int cpLog, @ForAll("small") int epLog, @ForAll("mbs") int mb,
      @ForAll boolean sp, @ForAll("zeros") int zero, @ForAll boolean deepEp,
      @ForAll boolean overlap, @ForAll boolean fp8, @ForAll boolean wholeExperts,
      @ForAll("small") int microLog) {
    TransformerSpec m = Catalog.builtIn().models().get(name);
    var acc = Catalog.builtIn().accelerators().get(accelerator);
    if (fp8 && !acc.supports(io.hyperframes.precision.NumberFormat.FP8_E4M3)) {
      fp8 = false;
    }
    int cp = 1 << cpLog;
    int ep = m.isMoe() ? 1 << (epLog + 1) : 1;
    int dp = 16;
    int devices = tp * pp * cp * dp;
    var node = Catalog.builtIn().nodes().get(acc.defaultNode());
    Cluster c = new Cluster(acc, devices, node.devicesPerNode(),
        acc.intraNode(), node.interNode(), node.hostCores(), node.hostMemoryBytes());
    int perStage = (m.layers() + pp - 1) / pp;
    int v = pp > 1 && perStage % 2 == 0 ? 2 : 1;
    int micro = pp * (1 << microLog);
    TrainingWorkload w = new TrainingWorkload(PrecisionRecipe.named("p",
        fp8 ? "fp8-mixed" : "bf16-mixed"), Optimizer.ADAM, micro * dp * mb, 1e12);
    int etp = wholeExperts && m.isMoe() ? 1 : tp;
    MoeDispatcher dispatcher = deepEp && m.isMoe() && m.moe().routed() && ep * etp > 1
        ? MoeDispatcher.DEEPEP : MoeDispatcher.ALL_TO_ALL;
    List<Double> steps = new ArrayList<>();
    List<Double> bytes = new ArrayList<>();
    for (Recompute rc : List.of(Recompute.NONE, Recompute.SELECTIVE, Recompute.FULL)) {
      // Megatron-LM runs ZeRO-2/3 (Megatron-FSDP) without a pipeline only.
      Layout l = new Layout(tp, pp, dp, v, mb, sp && tp > 1, rc, pp > 1 ? Math.min(zero, 1)
          : zero, Engine.MEGATRON, 0, true, ep, cp, CpCommType.P2P, etp, null, dispatcher);
      if (rc == Recompute.NONE) {
        overlap &= l.whyNotOverlapMoeComm() == null
            && LayoutSpace.overlapUnsupported(l) == null;
      }
      if (overlap) {
        // The overlap runs under none and selective only: compare those two.
        if (rc == Recompute.FULL) {
          break;
        }
        l = l.withOverlapMoeComm(true);
      }
      TrainingEstimate e;
      try {
        e = ESTIMATOR.evaluate(m, c, w, l);
      } catch (IllegalArgumentException notRunnable) {
        Assume.that(false); // a layout this model cannot run (e.g. tp over its KV heads)
        return;
      }
      double step = e.stepSeconds();
      assertTrue(Double.isFinite(step) && step > 0, l + ": step " + step);
      if (!steps.isEmpty()) {
        double before = steps.get(steps.size() - 1);
        assertTrue(step >= before * (1 - 1e-12), name + " " + l + ": " + rc + " step " + step
            + " s, shorter than " + before + " s with less recomputation");
      }
      steps.add(step);
      double memory = e.memory().totalBytes();
      assertTrue(memory == ESTIMATOR.deviceBytes(m, c, w, l), "deviceBytes is the memory");
      if (!bytes.isEmpty()) {
        double before = bytes.get(bytes.size() - 1);
        assertTrue(memory <= before * (1 + 1e-12), name + " " + l + ": " + rc + " memory "
            + memory + " B, more than " + before + " B with less recomputation");
      }
      bytes.add(memory);
    }
  }

  @Provide
  Arbitrary<Integer> mbs() {
    return Arbitraries.of(1, 2, 4);
  }
}
