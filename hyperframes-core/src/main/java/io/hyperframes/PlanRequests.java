package io.hyperframes;

import com.fasterxml.jackson.databind.JsonNode;
import io.hyperframes.catalog.Catalog;
import io.hyperframes.hardware.Checks;
import io.hyperframes.hardware.Cluster;
import io.hyperframes.request.Documents;
import io.hyperframes.json.Json;
import io.hyperframes.model.ModelSpec;
import io.hyperframes.model.DenseStackSpec;
import io.hyperframes.model.TransformerSpec;
import io.hyperframes.parallel.PartialLayout;
import io.hyperframes.plan.Objective;
import io.hyperframes.plan.PlanRequest;
import io.hyperframes.plan.Pricing;
import io.hyperframes.precision.PrecisionRecipe;
import io.hyperframes.workload.TrainingWorkload;
import java.util.ArrayList;
import java.util.List;


/**
 * Reads plan requests from JSON: the estimate request's {@code model}, {@code cluster} (with
 * {@code devices} as a count or a range "64-1024"), {@code workload} and {@code layout}, plus
 * {@code constraints}, {@code objective}, {@code pricing} and {@code search}.
 */
public final class PlanRequests {
  private PlanRequests() {}

  /** Batch in tokens the planner aims at when neither the batch nor its bound is given. */
  public static final double DEFAULT_BATCH_TOKENS = 4_194_304;


  /** Parses a plan request against the built-in catalog. */
  public static PlanRequest parse(String json) {
    return parse(json, Catalog.builtIn());
  }

  /** Parses a plan request against {@code catalog}. */
  public static PlanRequest parse(String json, Catalog catalog) {
    return fromJson(Json.parseObject("request", json), catalog);
  }

  /** Reads a parsed plan request against {@code catalog}. */
  static PlanRequest fromJson(JsonNode root, Catalog catalog) {
    Documents.Plan doc = Json.bind(root, Documents.Plan.class, "");
    ModelSpec model = Json.required("model", doc.model()).resolve(catalog);
    Documents.Devices devices = Json.required("cluster", doc.cluster()).deviceRange();
    int min = devices.min();
    int max = devices.max();
    Cluster cluster = doc.cluster().resolve(catalog, devices.range() ? 1 : min);
    TrainingWorkload w = Json.required("workload", doc.workload()).resolve();
    PartialLayout layout = doc.layout() == null ? PartialLayout.OPEN : doc.layout().resolve();
    java.util.Map<io.hyperframes.parallel.Engine, Cluster> engineClusters =
        new java.util.EnumMap<>(io.hyperframes.parallel.Engine.class);
    for (io.hyperframes.parallel.Engine e : layout.engines()) {
      engineClusters.put(e, catalog.forEngine(cluster, e));
    }
    cluster = catalog.forEngine(cluster, layout.engineOrDefault());
    if (!(model instanceof TransformerSpec) && !(model instanceof DenseStackSpec)) {
      throw new IllegalArgumentException("model: planning needs an architecture (layers, hidden,"
          + " heads ... or a dense stack), not only a parameter count");
    }
    if (max > cluster.devicesPerNode() && max % cluster.devicesPerNode() != 0
        && min == max) {
      throw new IllegalArgumentException("cluster.devices: " + max + " is more than one node"
          + " holds (" + cluster.devicesPerNode() + ") but not a whole number of nodes");
    }
    Documents.Constraints c = doc.constraints();
    double headroom = 0.05;
    double deadline = 0;
    int minBatch = 0;
    int maxBatch = 0;
    List<PrecisionRecipe> precisions = new ArrayList<>();
    if (c != null) {
      headroom = c.memoryHeadroom() == null ? headroom
          : Checks.finite("constraints.memoryHeadroom", c.memoryHeadroom());
      deadline = c.deadlineDays() == null ? 0
          : Checks.positive("constraints.deadlineDays", c.deadlineDays());
      minBatch = c.minGlobalBatch() == null ? 0
          : Checks.positive("constraints.minGlobalBatch", c.minGlobalBatch());
      maxBatch = c.maxGlobalBatch() == null ? 0
          : Checks.positive("constraints.maxGlobalBatch", c.maxGlobalBatch());
      if (c.precisions() != null) {
        for (String p : c.precisions()) {
          PrecisionRecipe recipe = PrecisionRecipe.named("constraints.precisions",
              Json.required("constraints.precisions", p));
          precisions.add(recipe.name().equals(w.precision().name()) ? w.precision() : recipe);
        }
      }
    }
    if (w.globalBatchSize() > 0 && (minBatch > 0 || maxBatch > 0)) {
      throw new IllegalArgumentException("constraints.maxGlobalBatch: give either"
          + " workload.globalBatchSize or batch bounds, not both");
    }
    if (w.globalBatchSize() == 0 && maxBatch == 0) {
      if (!(model instanceof TransformerSpec transformer)) {
        throw new IllegalArgumentException("workload.globalBatchSize: must be given for a dense"
            + " stack (or constraints.maxGlobalBatch)");
      }
      maxBatch = (int) Math.max(1, Math.round(DEFAULT_BATCH_TOKENS / transformer.seqLen()));
      minBatch = Math.min(minBatch, maxBatch);
    }
    String objectiveText = doc.objective();
    Objective objective = objectiveText == null ? Objective.TIME
        : Objective.fromId("objective", objectiveText);
    if (objective == Objective.DEVICES && w.trainingTokens() <= 0) {
      throw new IllegalArgumentException("workload.trainingTokens: required by the objective"
          + " 'devices' (a deadline needs a token budget)");
    }
    Pricing pricing = pricing(doc.pricing(), cluster, catalog);
    int alternatives = 5;
    boolean exhaustive = false;
    if (doc.search() != null) {
      alternatives = doc.search().alternatives() == null ? alternatives
          : doc.search().alternatives();
      exhaustive = Boolean.TRUE.equals(doc.search().exhaustive());
    }
    return new PlanRequest(model, cluster, min, max, w, layout, minBatch, maxBatch,
        headroom, deadline, precisions, objective, pricing, alternatives, exhaustive,
        engineClusters);
  }

  static Pricing pricing(Documents.Pricing p, Cluster cluster, Catalog catalog) {
    Catalog.Price listed = catalog.prices().get(cluster.accelerator().id());
    double price = listed == null ? 0 : listed.usdPerHour();
    String source = listed == null ? "no catalog price"
        : listed.source() + " (" + listed.date() + ")";
    double power = cluster.accelerator().powerWatts();
    double pue = 1.2;
    double kwh = 0;
    if (p != null) {
      if (p.pricePerDeviceHour() != null) {
        price = Checks.positive("pricing.pricePerDeviceHour", p.pricePerDeviceHour());
        source = "request";
      }
      power = p.powerWatts() == null ? power
          : Checks.positive("pricing.powerWatts", p.powerWatts());
      pue = p.pue() == null ? pue : Checks.finite("pricing.pue", p.pue());
      kwh = p.electricityPerKwh() == null ? 0
          : Checks.nonNegative("pricing.electricityPerKwh", p.electricityPerKwh());
    }
    return new Pricing(price, source, power, pue, kwh);
  }
}
