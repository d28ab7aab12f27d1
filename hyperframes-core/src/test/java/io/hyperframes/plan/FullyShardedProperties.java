package io.hyperframes.plan;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.hyperframes.catalog.Catalog;
import io.hyperframes.hardware.Cluster;
import io.hyperframes.hardware.Fabric;
import io.hyperframes.model.TransformerSpec;
import io.hyperframes.parallel.Engine;
import io.hyperframes.parallel.Layout;
import io.hyperframes.parallel.Recompute;
import io.hyperframes.precision.Optimizer;
import io.hyperframes.precision.PrecisionRecipe;
import io.hyperframes.workload.TrainingWorkload;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

/**
 * Laws of the fully sharded (ZeRO-3 / FSDP) data-parallel model over random models, DP sizes
 * 16-4096, node sizes and fabrics (≥ 1000 tries each).
 */
class FullyShardedProperties {

  private static final TrainingEstimator ESTIMATOR = TrainingEstimator.analytical();
  private static final double ROUNDING = 1e-9;

  record Job(TransformerSpec model, String accelerator, String nic, int nics, int perNode,
      int dp, Engine engine, Recompute recompute, boolean reshard) {

    Cluster cluster(int devices) {
      Catalog c = Catalog.builtIn();
      var acc = c.accelerators().get(accelerator);
      Fabric n = c.fabrics().get(nic);
      Fabric perDevice = new Fabric(n.id() + "-x" + nics,
          n.bandwidthBytesPerSecond() * nics / perNode, n.latencySeconds(), n.launchSeconds(),
          n.efficiency(), n.halfEfficiencyBytes(), n.inNetworkReductionBytesPerSecond(),
          n.source());
      return new Cluster(acc, devices, Math.min(perNode, devices), acc.intraNode(), perDevice);
    }

    TrainingEstimate estimate(int ranks, int globalBatch) {
      TrainingWorkload w = new TrainingWorkload(PrecisionRecipe.named("precision",
          "bf16-mixed"), Optimizer.ADAM, globalBatch, 1e9);
      Layout l = new Layout(1, 1, ranks, 1, globalBatch / ranks, false, recompute, 3, engine, 0,
          reshard);
      return ESTIMATOR.evaluate(model, cluster(ranks), w, l);
    }
  }

  @Provide
  Arbitrary<Job> jobs() {
    Arbitrary<TransformerSpec> models = Combinators.combine(Arbitraries.of(16, 32, 64, 96),
        Arbitraries.of(2048, 4096, 8192, 12288), Arbitraries.of(1024, 2048, 4096))
        .as((layers, hidden, seq) -> new TransformerSpec("m", layers, hidden, hidden / 128,
            hidden / 128, TransformerSpec.defaultFfnHidden(hidden, false), false, 50257, seq,
            true));
    return Combinators.combine(models, Arbitraries.of("a100-sxm-80gb", "h100-sxm-80gb"),
        Arbitraries.of("ib-hdr", "ib-ndr", "roce-200g", "ib-edr"), Arbitraries.of(1, 2, 4, 8),
        Arbitraries.of(4, 8), Arbitraries.of(16, 32, 64, 128, 256, 512, 1024, 2048, 4096),
        Arbitraries.of(Engine.FSDP, Engine.DEEPSPEED), Arbitraries.of(Recompute.class))
        .as((m, acc, nic, nics, perNode, dp, engine, r) -> new Job(m, acc, nic, nics, perNode,
            dp, engine, r, engine == Engine.DEEPSPEED || dp % 2 == 0));
  }

  /**
   * Exposed data-parallel time ≥ (bytes each GPU sends over its share of the node's links per
   * step) / (that share's bandwidth × fabric efficiency) − (the compute it can overlap with).
   * Per micro-batch and layer a ring moves (n−1)/n of the gathered or reduced buffer, shared over
   * the g ranks of the group in a node (one ring per NIC).
   */
  @Property(tries = 1000)
  void exposedTimeIsAtLeastTheLineRateBoundMinusTheOverlappableCompute(
      @ForAll("jobs") Job job) {
    int batch = job.dp();
    TrainingEstimate e = job.estimate(job.dp(), batch);
    Cluster c = job.cluster(job.dp());
    double params = e.parameters();
    int n = job.dp();
    int g = Math.min(n, c.devicesPerNode());
    double copies = job.reshard() ? 3 : 2;
    double bytesPerGpu = copies * params * 2 * (n - 1.0) / n / g;
    double lineRate = c.interNode().bandwidthBytesPerSecond() * c.interNode().efficiency();
    double overlappable = e.time().computeSeconds() + e.time().recomputeSeconds();
    double bound = bytesPerGpu / lineRate - overlappable;
    assertTrue(e.time().dataParallelCommSeconds() >= bound - ROUNDING * Math.abs(bound),
        () -> "exposed " + e.time().dataParallelCommSeconds() + " s < bound " + bound + " s for "
            + job);
  }

  /**
   * At a fixed global batch (one micro-batch per step), once exposed communication dominates the
   * step, doubling the data-parallel ranks gains nothing on the communication: the exposed
   * data-parallel time never falls (each rank still moves the whole model, over more ranks, behind
   * less compute), so whatever the step gains is compute it sheds, never communication. The step
   * stays flat as Narayanan et al. 2021 Table 2's ZeRO-3 rows do, but for the part of the compute
   * that nothing overlaps (CommBoundCasesCliTest checks those rows).
   */
  @Property(tries = 1000)
  void stepTimeNeverFallsWithDpOnceCommunicationDominates(@ForAll("jobs") Job job) {
    int batch = 4096;
    int dp = Math.min(job.dp(), batch / 2);
    TrainingEstimate small = job.estimate(dp, batch);
    TrainingEstimate large = job.estimate(2 * dp, batch);
    double smallCompute = small.time().computeSeconds() + small.time().recomputeSeconds();
    double largeCompute = large.time().computeSeconds() + large.time().recomputeSeconds();
    if (small.time().dataParallelCommSeconds() > smallCompute) {
      assertTrue(large.time().dataParallelCommSeconds()
          >= small.time().dataParallelCommSeconds() * (1 - ROUNDING),
          () -> "exposed comm fell: dp " + dp + ": " + small.time() + ", dp " + 2 * dp + ": "
              + large.time() + " for " + job);
      assertTrue(large.stepSeconds() >= small.stepSeconds() - (smallCompute - largeCompute)
          - ROUNDING * small.stepSeconds(),
          () -> "dp " + dp + ": " + small.stepSeconds() + " s, dp " + 2 * dp + ": "
              + large.stepSeconds() + " s for " + job);
    }
  }
}
