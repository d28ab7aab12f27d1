package io.hyperframes;

import com.fasterxml.jackson.databind.node.ArrayNode;
import io.hyperframes.catalog.Catalog;
import io.hyperframes.json.Json;
import io.hyperframes.plan.Objective;
import io.hyperframes.plan.Plan;
import io.hyperframes.plan.PlanListener;
import io.hyperframes.plan.PlanRequest;
import io.hyperframes.plan.Planner;
import java.util.concurrent.ForkJoinPool;
import java.util.function.UnaryOperator;

/**
 * A plan: the best layout, device count and batch for an objective ({@link HyperFrames#plan()}).
 *
 * <pre>{@code
 * Plan plan = HyperFrames.plan()
 *     .model("llama2-70b")
 *     .accelerator("h100-sxm-80gb").devices(64, 512)
 *     .training(t -> t.precision("bf16-mixed").tokens(2e12))
 *     .minimize(Objective.COST)
 *     .run();
 * plan.best().estimate().stepSeconds();
 * plan.goldenParameters();
 * }</pre>
 */
public final class PlanBuilder extends JobBuilder<PlanBuilder> {

  PlanBuilder(Tree tree, Catalog catalog, Models models) {
    super(tree, catalog, models);
  }

  @Override
  PlanBuilder copy(Tree t, Catalog c, Models m) {
    return new PlanBuilder(t, c, m);
  }

  /** {@code cluster.devices}: a range "min-max" to search. */
  public PlanBuilder devices(int min, int max) {
    return copy(tree.with("cluster.devices", min + "-" + max), catalog, models);
  }

  /** {@code workload}: the training job. */
  public PlanBuilder training(UnaryOperator<TrainingSpec> fields) {
    return withTraining(fields);
  }

  /** {@code objective}: what the search minimises (time by default). */
  public PlanBuilder minimize(Objective objective) {
    return copy(tree.with("objective", objective == null ? null : objective.id()), catalog,
        models);
  }

  /** {@code constraints.deadlineDays}: the latest acceptable training time. */
  public PlanBuilder deadlineDays(double days) {
    return copy(tree.with("constraints.deadlineDays", days), catalog, models);
  }

  /** {@code constraints.memoryHeadroom}: fraction of device memory left free (default 0.05). */
  public PlanBuilder memoryHeadroom(double fraction) {
    return copy(tree.with("constraints.memoryHeadroom", fraction), catalog, models);
  }

  /** {@code constraints.minGlobalBatch} and {@code maxGlobalBatch}, for an open batch. */
  public PlanBuilder globalBatch(int min, int max) {
    return copy(tree.with("constraints.minGlobalBatch", min)
        .with("constraints.maxGlobalBatch", max), catalog, models);
  }

  /** {@code constraints.precisions}: recipes the planner may choose among. */
  public PlanBuilder precisions(String... recipes) {
    if (recipes == null) {
      throw new IllegalArgumentException("constraints.precisions: must be given");
    }
    ArrayNode a = Json.mapper().createArrayNode();
    for (String r : recipes) {
      a.add(r);
    }
    return copy(tree.with("constraints.precisions", a), catalog, models);
  }

  /** {@code pricing.pricePerDeviceHour}: USD per device-hour (default: the catalog's price). */
  public PlanBuilder pricePerDeviceHour(double usd) {
    return copy(tree.with("pricing.pricePerDeviceHour", usd), catalog, models);
  }

  /** {@code pricing.powerWatts}: power per device for the energy cost (default: the catalog's). */
  public PlanBuilder powerWatts(double watts) {
    return copy(tree.with("pricing.powerWatts", watts), catalog, models);
  }

  /** {@code pricing.pue}: power usage effectiveness of the data centre (default 1.2). */
  public PlanBuilder pue(double ratio) {
    return copy(tree.with("pricing.pue", ratio), catalog, models);
  }

  /** {@code pricing.electricityPerKwh}: USD per kWh (default 0: energy not priced). */
  public PlanBuilder electricityPerKwh(double usd) {
    return copy(tree.with("pricing.electricityPerKwh", usd), catalog, models);
  }

  /** {@code search.exhaustive}: evaluate every candidate instead of pruning (slower). */
  public PlanBuilder exhaustive(boolean all) {
    return copy(tree.with("search.exhaustive", all), catalog, models);
  }

  /** {@code search.alternatives}: runner-up plans to return (default 5). */
  public PlanBuilder alternatives(int count) {
    return copy(tree.with("search.alternatives", count), catalog, models);
  }

  /**
   * Runs the search.
   *
   * @throws IllegalArgumentException naming the field and the value when the request is wrong
   */
  public Plan run() {
    return run(PlanListener.NONE);
  }

  /** Runs the search, reporting progress to {@code listener} (which may cancel it). */
  public Plan run(PlanListener listener) {
    if (listener == null) {
      throw new IllegalArgumentException("listener: must be given");
    }
    return planner().plan(request(), listener);
  }

  /**
   * Runs the search on {@code pool} (its parallel tasks run there instead of the common pool).
   */
  public Plan run(ForkJoinPool pool, PlanListener listener) {
    if (pool == null || listener == null) {
      throw new IllegalArgumentException("pool: pool and listener must be given");
    }
    PlanRequest r = request();
    Planner p = planner();
    return pool.submit(() -> p.plan(r, listener)).join();
  }

  PlanRequest request() {
    return PlanRequests.fromJson(tree.json(), catalogOrDefault());
  }

  private Planner planner() {
    return Planner.of(modelsOrDefault().trainingEstimator());
  }
}
