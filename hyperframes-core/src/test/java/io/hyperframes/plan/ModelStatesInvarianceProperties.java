package io.hyperframes.plan;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.hyperframes.catalog.Catalog;
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
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

/**
 * The contract of {@link io.hyperframes.parallel.ParallelismModel#modelStates} that the planner
 * rests on (rule 1, and one computation of the states per group): a layout's model states do not
 * change with its micro-batch, interleaving, sequence parallelism, recomputation, dispatcher or
 * expert-parallel overlap, on dense and mixture-of-experts catalog models.
 */
class ModelStatesInvarianceProperties implements LayoutArbitraries {

  private static final TrainingEstimator ESTIMATOR = TrainingEstimator.analytical();

  @Provide
  Arbitrary<Integer> mbs() {
    return Arbitraries.of(1, 2, 4, 8);
  }

  @Property(tries = 1000)
  void statesDependOnlyOnTheParallelDegreesAndSharding(@ForAll("models") String name,
      @ForAll("tps") int tp, @ForAll("pps") int pp, @ForAll("small") int epLog,
      @ForAll("small") int zeroPick, @ForAll boolean wholeExperts, @ForAll boolean fp8,
      @ForAll("mbs") int mb, @ForAll("recomputes") Recompute rc, @ForAll boolean sp,
      @ForAll boolean interleave, @ForAll boolean deepEp, @ForAll boolean overlap) {
    TransformerSpec m = Catalog.builtIn().models().get(name);
    int ep = m.isMoe() ? 1 << (epLog + 1) : 1;
    int etp = wholeExperts && m.isMoe() ? 1 : tp;
    int dp = 16;
    int zero = pp > 1 ? Math.min(zeroPick, 1) : zeroPick + 1;
    int perStage = (m.layers() + pp - 1) / pp;
    int v = interleave && pp > 1 && perStage % 2 == 0 ? 2 : 1;
    TrainingWorkload w = new TrainingWorkload(PrecisionRecipe.named("p",
        fp8 ? "fp8-mixed" : "bf16-mixed"), Optimizer.ADAM, 64 * dp * mb, 1e12);
    Layout reference = new Layout(tp, pp, dp, 1, 1, false, Recompute.NONE, zero,
        Engine.MEGATRON, 0, true, ep, 1, CpCommType.P2P, etp, null, MoeDispatcher.ALL_TO_ALL);
    MoeDispatcher dispatcher = deepEp && m.isMoe() && m.moe().routed() && ep * etp > 1
        ? MoeDispatcher.DEEPEP : MoeDispatcher.ALL_TO_ALL;
    Layout other = new Layout(tp, pp, dp, v, mb, sp && tp > 1, rc, zero, Engine.MEGATRON, 0,
        true, ep, 1, CpCommType.P2P, etp, null, dispatcher);
    if (overlap && other.whyNotOverlapMoeComm() == null
        && LayoutSpace.overlapUnsupported(other) == null) {
      other = other.withOverlapMoeComm(true);
    }
    assertEquals(ESTIMATOR.modelStates(m, reference, w), ESTIMATOR.modelStates(m, other, w),
        name + ": " + other + " against " + reference);
  }
}
