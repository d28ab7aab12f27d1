package io.hyperframes.plan;

import static com.google.common.base.Preconditions.checkArgument;

import com.google.common.collect.ImmutableList;
import io.hyperframes.hardware.Checks;
import io.hyperframes.hardware.Cluster;
import io.hyperframes.model.DenseStackSpec;
import io.hyperframes.model.ModelSpec;
import io.hyperframes.model.TransformerSpec;
import io.hyperframes.parallel.Engine;
import io.hyperframes.parallel.PartialLayout;
import io.hyperframes.precision.PrecisionRecipe;
import io.hyperframes.workload.TrainingWorkload;
import java.util.List;
import java.util.Map;

/**
 * A planning question: train {@code model} on {@code minDevices..maxDevices} devices like
 * {@code cluster}'s, under constraints, for an objective.
 *
 * @param model the transformer or dense stack to train (not a bare parameter count)
 * @param cluster accelerator, node shape and fabrics (its device count is ignored)
 * @param minDevices fewest devices to consider
 * @param maxDevices most devices to consider
 * @param workload precision, optimizer, token budget; {@code globalBatchSize} 0 lets the planner
 *     choose it within {@code minGlobalBatch..maxGlobalBatch}
 * @param layout fields the user fixed
 * @param minGlobalBatch smallest global batch (sequences) when the batch is open
 * @param maxGlobalBatch largest global batch (sequences) when the batch is open
 * @param memoryHeadroom fraction of device memory to leave free, in [0, 0.5]
 * @param deadlineDays latest acceptable training time (0 = none)
 * @param precisions recipes the planner may choose among (the workload's alone by default)
 * @param objective what to optimise
 * @param pricing prices for the cost
 * @param alternatives how many runner-up plans to return
 * @param exhaustive evaluate every candidate (no pruning); for checking the pruned search
 * @param engineClusters {@code cluster} with each searched engine's scoped kernel constants
 *     (catalog {@code kernels} entries scoped to an engine); an engine missing here plans on
 *     {@code cluster}
 */
public record PlanRequest(ModelSpec model, Cluster cluster, int minDevices, int maxDevices,
    TrainingWorkload workload, PartialLayout layout, int minGlobalBatch, int maxGlobalBatch,
    double memoryHeadroom, double deadlineDays, List<PrecisionRecipe> precisions,
    Objective objective, Pricing pricing, int alternatives, boolean exhaustive,
    Map<Engine, Cluster> engineClusters) {

  /** A request whose engines all plan on {@code cluster}. */
  public PlanRequest(ModelSpec model, Cluster cluster, int minDevices, int maxDevices,
      TrainingWorkload workload, PartialLayout layout, int minGlobalBatch, int maxGlobalBatch,
      double memoryHeadroom, double deadlineDays, List<PrecisionRecipe> precisions,
      Objective objective, Pricing pricing, int alternatives, boolean exhaustive) {
    this(model, cluster, minDevices, maxDevices, workload, layout, minGlobalBatch,
        maxGlobalBatch, memoryHeadroom, deadlineDays, precisions, objective, pricing,
        alternatives, exhaustive, Map.of());
  }

  /** This request with other fixed layout fields. */
  public PlanRequest withLayout(PartialLayout fixed) {
    return new PlanRequest(model, cluster, minDevices, maxDevices, workload, fixed,
        minGlobalBatch, maxGlobalBatch, memoryHeadroom, deadlineDays, precisions, objective,
        pricing, alternatives, exhaustive, engineClusters);
  }

  /**
   * The engines the planner searches: {@code layout.engine} when it is fixed; for a dense stack
   * (whose step no engine changes) the one an estimate assumes; else every launchable engine
   * that runs the fixed fields ({@link PartialLayout#engines()}).
   */
  public List<Engine> engines() {
    return model instanceof DenseStackSpec ? List.of(layout.assumedEngine()) : layout.engines();
  }

  /** The cluster {@code engine} plans on (its scoped kernel constants, if any). */
  public Cluster clusterFor(Engine engine) {
    return engineClusters.getOrDefault(engine, cluster);
  }

  /** Device counts beyond this many values are rejected (a range too wide to search). */
  public static final int MAX_DEVICE_COUNTS = 4096;

  public PlanRequest {
    checkArgument(model instanceof TransformerSpec || model instanceof DenseStackSpec,
        "model: planning needs an architecture (a transformer's layers, hidden, heads ... or a"
            + " dense stack), not only a parameter count");
    checkArgument(cluster != null, "cluster: must be given");
    checkArgument(workload != null, "workload: must be given");
    checkArgument(layout != null, "layout: must be given");
    engineClusters = engineClusters == null ? Map.of() : Map.copyOf(engineClusters);
    layout.assumedEngine(); // throws, naming the field, when no engine runs the fixed fields
    Checks.positive("cluster.devices (min)", minDevices);
    checkArgument(maxDevices >= minDevices, "cluster.devices: range %s-%s is empty", minDevices,
        maxDevices);
    checkArgument(maxDevices <= Cluster.MAX_DEVICES, "cluster.devices: must be <= %s, got %s",
        Cluster.MAX_DEVICES, maxDevices);
    checkArgument(memoryHeadroom >= 0 && memoryHeadroom <= 0.5,
        "constraints.memoryHeadroom: must be in [0, 0.5], got %s", memoryHeadroom);
    Checks.nonNegative("constraints.deadlineDays", deadlineDays);
    checkArgument(minGlobalBatch >= 0 && maxGlobalBatch >= 0,
        "constraints.globalBatch: bounds must be >= 0");
    checkArgument(workload.globalBatchSize() > 0 || maxGlobalBatch > 0,
        "workload.globalBatchSize: give it, or constraints.maxGlobalBatch");
    checkArgument(maxGlobalBatch == 0 || maxGlobalBatch >= minGlobalBatch,
        "constraints.maxGlobalBatch: %s is below minGlobalBatch %s", maxGlobalBatch,
        minGlobalBatch);
    checkArgument(objective != null, "objective: must be given");
    checkArgument(pricing != null, "pricing: must be given");
    checkArgument(alternatives >= 0 && alternatives <= 100,
        "search.alternatives: must be in [0, 100], got %s", alternatives);
    precisions = ImmutableList.copyOf(precisions.isEmpty() ? List.of(workload.precision())
        : precisions);
    checkArgument(objective != Objective.DEVICES || deadlineDays > 0,
        "constraints.deadlineDays: required by the objective 'devices'");
    checkArgument(objective != Objective.COST || pricing.usdPerDeviceHour() > 0,
        "pricing.pricePerDeviceHour: no price known for %s; give one for the objective 'cost'",
        cluster.accelerator().id());
  }
}
