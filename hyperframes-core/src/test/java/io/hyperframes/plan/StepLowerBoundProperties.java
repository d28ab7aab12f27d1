package io.hyperframes.plan;

import static org.junit.jupiter.api.Assertions.assertEquals;
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
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Assume;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

/**
 * The planner's pruning rule 3 rests on this law: the compute-only lower bound of a layout's step
 * ({@link TrainingEstimator#stepSecondsLowerBound}) never exceeds the step the estimator gives,
 * on dense and mixture-of-experts models, with pipelines (even and uneven, interleaved),
 * recomputation, ZeRO, context and expert parallelism, both dispatchers, the expert-parallel
 * overlap, FP8 and multi-token prediction; and the per-micro-batch compute it scales depends on
 * neither the global batch nor the virtual stages, which the planner's cache of it assumes.
 */
class StepLowerBoundProperties implements LayoutArbitraries {

  private static final TrainingEstimator ESTIMATOR = TrainingEstimator.analytical();

  @Property(tries = 1000)
  void theBoundNeverExceedsTheStep(@ForAll("models") String name,
      @ForAll("accelerators") String accelerator, @ForAll("tps") int tp, @ForAll("pps") int pp,
      @ForAll("small") int cpLog, @ForAll("small") int epLog, @ForAll("mbs") int mb,
      @ForAll boolean sp, @ForAll("recomputes") Recompute rc, @ForAll("zeros") int zero,
      @ForAll boolean deepEp, @ForAll boolean overlap, @ForAll boolean fp8,
      @ForAll boolean wholeExperts, @ForAll("small") int microLog, @ForAll boolean uneven) {
    TransformerSpec m = Catalog.builtIn().models().get(name);
    var acc = Catalog.builtIn().accelerators().get(accelerator);
    boolean fp8On = fp8 && acc.supports(io.hyperframes.precision.NumberFormat.FP8_E4M3);
    int cp = 1 << cpLog;
    int ep = m.isMoe() ? 1 << (epLog + 1) : 1;
    int dp = 16;
    var node = Catalog.builtIn().nodes().get(acc.defaultNode());
    Cluster c = new Cluster(acc, tp * pp * cp * dp, node.devicesPerNode(), acc.intraNode(),
        node.interNode(), node.hostCores(), node.hostMemoryBytes());
    int perStage = (m.layers() + pp - 1) / pp;
    int v = pp > 1 && perStage % 2 == 0 ? 2 : 1;
    int micro = pp * (1 << microLog) + (microLog == 2 ? 1 : 0);
    TrainingWorkload w = new TrainingWorkload(PrecisionRecipe.named("p",
        fp8On ? "fp8-mixed" : "bf16-mixed"), Optimizer.ADAM, micro * dp * mb, 1e12);
    int etp = wholeExperts && m.isMoe() ? 1 : tp;
    MoeDispatcher dispatcher = deepEp && m.isMoe() && m.moe().routed() && ep * etp > 1
        ? MoeDispatcher.DEEPEP : MoeDispatcher.ALL_TO_ALL;
    Layout l;
    TrainingEstimate e;
    try {
      l = new Layout(tp, pp, dp, v, mb, sp && tp > 1, rc, pp > 1 ? Math.min(zero, 1) : zero,
          Engine.MEGATRON, 0, true, ep, cp, CpCommType.P2P, etp, null, dispatcher);
      if (uneven && pp > 2) {
        l = l.withStageLayers(Math.max(1, perStage - 1), Math.max(1, perStage - 1));
      }
      if (overlap && rc != Recompute.FULL && l.whyNotOverlapMoeComm() == null
          && LayoutSpace.overlapUnsupported(l) == null) {
        l = l.withOverlapMoeComm(true);
      }
      e = ESTIMATOR.evaluate(m, c, w, l);
    } catch (IllegalArgumentException notRunnable) {
      Assume.that(false); // a layout this model cannot run (e.g. tp over its KV heads)
      return;
    }
    double step = e.stepSeconds();
    double bound = ESTIMATOR.stepSecondsLowerBound(m, c, w, l);
    assertTrue(bound > 0 && Double.isFinite(bound), l + ": bound " + bound);
    assertTrue(bound <= step * (1 + 1e-12), name + " " + l + ": bound " + bound
        + " s over the step " + step + " s");
    // The per-micro-batch compute is the same at another global batch and without interleaving.
    double perMicroBatch = ESTIMATOR.slowestRankComputeSeconds(m, c, w, l);
    assertEquals(perMicroBatch, ESTIMATOR.slowestRankComputeSeconds(m, c,
        w.withGlobalBatchSize(2 * w.globalBatchSize()), l), 0.0);
    Layout flat = new Layout(l.tp(), l.pp(), l.dp(), 1, l.microBatch(), l.sequenceParallel(),
        l.recompute(), l.zeroStage(), l.engine(), 0, true, l.ep(), l.cp(), l.cpCommType(),
        l.etp(), null, l.moeDispatcher()).withStageLayers(l.firstStageLayers(),
            l.lastStageLayers());
    assertEquals(perMicroBatch, ESTIMATOR.slowestRankComputeSeconds(m, c, w, flat), 0.0);
  }

  @Provide
  Arbitrary<String> accelerators() {
    return Arbitraries.of("h100-sxm-80gb", "a100-sxm-80gb", "h800-sxm-80gb");
  }

  @Provide
  Arbitrary<Integer> mbs() {
    return Arbitraries.of(1, 2, 4);
  }
}
