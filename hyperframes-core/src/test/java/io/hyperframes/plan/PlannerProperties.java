package io.hyperframes.plan;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.hyperframes.catalog.Catalog;
import io.hyperframes.hardware.Cluster;
import io.hyperframes.model.MoeSpec;
import io.hyperframes.model.TransformerSpec;
import io.hyperframes.parallel.PartialLayout;
import io.hyperframes.precision.Optimizer;
import io.hyperframes.precision.PrecisionRecipe;
import io.hyperframes.workload.TrainingWorkload;
import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

/** The pruned search finds what the exhaustive search finds, on random small problems. */
class PlannerProperties {

  private static final Planner PLANNER = Planner.analytical();

  @Provide
  Arbitrary<PlanRequest> problems() {
    Arbitrary<TransformerSpec> models = Combinators.combine(Arbitraries.of(2, 3, 4, 6, 8),
        Arbitraries.of(4, 8, 16), Arbitraries.of(64, 128), Arbitraries.of(true, false),
        Arbitraries.of(512, 2048, 8192))
        .as((l, a, d, g, s) -> new TransformerSpec("m", l, a * d * 8, a, a,
            TransformerSpec.defaultFfnHidden(a * d * 8, g), g, 32000, s, !g));
    Arbitrary<String> acc = Arbitraries.of("a100-sxm-40gb", "v100-sxm-32gb", "h100-sxm-80gb");
    Arbitrary<int[]> devices = Arbitraries.of(new int[] {1, 1}, new int[] {2, 2},
        new int[] {4, 4}, new int[] {8, 8}, new int[] {16, 16}, new int[] {1, 8},
        new int[] {8, 32}, new int[] {4, 16});
    Arbitrary<int[]> batch = Arbitraries.of(new int[] {16, 0, 0}, new int[] {32, 0, 0},
        new int[] {0, 1, 24}, new int[] {0, 8, 64}, new int[] {0, 1, 7});
    Arbitrary<Objective> objective = Arbitraries.of(Objective.TIME, Objective.COST,
        Objective.THROUGHPUT);
    Arbitrary<Double> tokens = Arbitraries.of(0.0, 1e9);
    Arbitrary<Boolean> twoPrecisions = Arbitraries.of(true, false);
    return Combinators.combine(models, acc, devices, batch, objective, tokens, twoPrecisions)
        .as((m, a, d, b, o, t, two) -> {
          var accelerator = Catalog.builtIn().accelerators().get(a);
          var node = Catalog.builtIn().nodes().get(accelerator.defaultNode());
          Cluster c = new Cluster(accelerator, 1, node.devicesPerNode(), accelerator.intraNode(),
              node.interNode(), node.hostCores(), node.hostMemoryBytes());
          PrecisionRecipe fp16 = PrecisionRecipe.named("p", "fp16-mixed");
          TrainingWorkload w = new TrainingWorkload(fp16, Optimizer.ADAM, b[0], t);
          List<PrecisionRecipe> precisions = two ? List.of(fp16,
              PrecisionRecipe.named("p", "fp32")) : List.of();
          return new PlanRequest(m, c, d[0], d[1], w, PartialLayout.OPEN, b[1], b[2], 0.05, 0,
              precisions, o, new Pricing(2.0, "test", 400, 1.2, 0.1), 3, false);
        });
  }

  @Property(tries = 500)
  void prunedSearchAgreesWithExhaustiveSearch(@ForAll("problems") PlanRequest pruned) {
    PlanRequest exhaustive = new PlanRequest(pruned.model(), pruned.cluster(),
        pruned.minDevices(), pruned.maxDevices(), pruned.workload(), pruned.layout(),
        pruned.minGlobalBatch(), pruned.maxGlobalBatch(), pruned.memoryHeadroom(),
        pruned.deadlineDays(), pruned.precisions(), pruned.objective(), pruned.pricing(),
        pruned.alternatives(), true);
    Plan a;
    try {
      a = PLANNER.plan(pruned);
    } catch (IllegalArgumentException noLayout) {
      Plan b = null;
      try {
        b = PLANNER.plan(exhaustive);
      } catch (IllegalArgumentException same) {
        return;
      }
      throw new AssertionError("pruned search found no candidate, exhaustive found " + b.best());
    }
    Plan b = PLANNER.plan(exhaustive);
    assertTrue(b.candidatesEvaluated() >= a.candidatesEvaluated());
    assertEquals(b.feasible(), a.feasible(), "feasibility");
    Candidate x = a.best();
    Candidate y = b.best();
    if (b.best().estimate().feasible()) {
      double want = metric(exhaustive, y);
      double got = metric(pruned, x);
      assertEquals(want, got, 1e-9 * Math.abs(want),
          () -> "pruned best " + x.estimate().layout() + " B=" + x.workload().globalBatchSize()
              + " vs exhaustive " + y.estimate().layout() + " B="
              + y.workload().globalBatchSize());
    } else {
      assertEquals(y.estimate().memory().totalBytes(), x.estimate().memory().totalBytes(),
          1e-9 * y.estimate().memory().totalBytes(), "smallest infeasible footprint");
    }
  }

  /**
   * Mixtures of experts whose expert-parallel group can cross nodes (DeepEP and overlap
   * alternatives, pruning rule 3 on them), with and without multi-token prediction.
   */
  @Provide
  Arbitrary<PlanRequest> moeProblems() {
    // Wide enough that activations decide what fits on 40 and 80 GB, so that selective and
    // full recomputation are the best plans of some device counts.
    Arbitrary<TransformerSpec> models = Combinators.combine(Arbitraries.of(4, 8),
        Arbitraries.of(8, 16), Arbitraries.of(1, 2), Arbitraries.of(0, 1),
        Arbitraries.of(4096, 16384), Arbitraries.of(0, 1))
        .as((l, experts, k, shared, s, mtp) -> new TransformerSpec("moe", l, 4096, 32, 8,
            11008, true, 32000, s, false, 128, new MoeSpec(experts, k, 2048, shared,
                shared * 2048, 1, 1, 0.0), null, null, mtp));
    Arbitrary<int[]> devices = Arbitraries.of(new int[] {8, 8}, new int[] {16, 16},
        new int[] {8, 32}, new int[] {32, 32});
    Arbitrary<int[]> batch = Arbitraries.of(new int[] {64, 0, 0}, new int[] {0, 16, 64});
    Arbitrary<Objective> objective = Arbitraries.of(Objective.TIME, Objective.COST,
        Objective.THROUGHPUT);
    Arbitrary<String> acc = Arbitraries.of("h100-sxm-80gb", "a100-sxm-40gb");
    return Combinators.combine(models, acc, devices, batch, objective)
        .as((m, a, d, b, o) -> {
          var accelerator = Catalog.builtIn().accelerators().get(a);
          var node = Catalog.builtIn().nodes().get(accelerator.defaultNode());
          Cluster c = new Cluster(accelerator, 1, node.devicesPerNode(), accelerator.intraNode(),
              node.interNode(), node.hostCores(), node.hostMemoryBytes());
          TrainingWorkload w = new TrainingWorkload(PrecisionRecipe.named("p", "bf16-mixed"),
              Optimizer.ADAM, b[0], 1e9);
          return new PlanRequest(m, c, d[0], d[1], w, PartialLayout.OPEN, b[1], b[2], 0.05, 0,
              List.of(), o, new Pricing(2.0, "test", 400, 1.2, 0.1), 3, false);
        });
  }

  /**
   * On mixtures of experts the pruned search finds the exhaustive search's best plan and, for
   * every device count, the same best objective (the scaling curve).
   */
  @Property(tries = 60)
  void prunedSearchAgreesWithExhaustiveSearchOnMoe(@ForAll("moeProblems") PlanRequest pruned) {
    PlanRequest exhaustive = new PlanRequest(pruned.model(), pruned.cluster(),
        pruned.minDevices(), pruned.maxDevices(), pruned.workload(), pruned.layout(),
        pruned.minGlobalBatch(), pruned.maxGlobalBatch(), pruned.memoryHeadroom(),
        pruned.deadlineDays(), pruned.precisions(), pruned.objective(), pruned.pricing(),
        pruned.alternatives(), true);
    Plan a = PLANNER.plan(pruned);
    Plan b = PLANNER.plan(exhaustive);
    assertTrue(b.candidatesEvaluated() >= a.candidatesEvaluated());
    assertEquals(b.feasible(), a.feasible(), "feasibility");
    assertEquals(b.scaling().size(), a.scaling().size(), "device counts");
    for (int i = 0; i < b.scaling().size(); i++) {
      Candidate y = b.scaling().get(i);
      Candidate x = a.scaling().get(i);
      assertEquals(y.estimate().devices(), x.estimate().devices());
      if (y.estimate().feasible()) {
        double want = metric(exhaustive, y);
        assertEquals(want, metric(pruned, x), 1e-9 * Math.abs(want),
            () -> "pruned best " + x.estimate().layout() + " vs exhaustive "
                + y.estimate().layout());
      }
    }
    if (b.best().estimate().feasible()) {
      double want = metric(exhaustive, b.best());
      assertEquals(want, metric(pruned, a.best()), 1e-9 * Math.abs(want), "best");
    }
  }

  private static double metric(PlanRequest r, Candidate c) {
    return switch (r.objective()) {
      case TIME -> c.timeMetric();
      case COST -> c.costMetric();
      case THROUGHPUT -> -c.estimate().tokensPerSecond();
      case DEVICES -> c.estimate().devices();
    };
  }
}
