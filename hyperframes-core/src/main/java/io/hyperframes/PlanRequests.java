package io.hyperframes;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.google.common.collect.ImmutableSet;
import io.hyperframes.hardware.Catalog;
import io.hyperframes.hardware.Checks;
import io.hyperframes.hardware.Cluster;
import io.hyperframes.json.JsonFields;
import io.hyperframes.model.ModelSpec;
import io.hyperframes.model.TransformerSpec;
import io.hyperframes.parallel.PartialLayout;
import io.hyperframes.plan.Objective;
import io.hyperframes.plan.PlanRequest;
import io.hyperframes.plan.Pricing;
import io.hyperframes.precision.PrecisionRecipe;
import io.hyperframes.workload.TrainingWorkload;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * Reads plan requests from JSON: the estimate request's {@code model}, {@code cluster} (with
 * {@code devices} as a count or a range "64-1024"), {@code workload} and {@code layout}, plus
 * {@code constraints}, {@code objective}, {@code pricing} and {@code search}.
 */
public final class PlanRequests {
  private PlanRequests() {}

  /** Batch in tokens the planner aims at when neither the batch nor its bound is given. */
  public static final double DEFAULT_BATCH_TOKENS = 4_194_304;

  private static final Set<String> TOP = ImmutableSet.of("model", "cluster", "workload", "layout",
      "constraints", "objective", "pricing", "search");

  /** Parses a plan request against the built-in catalog. */
  public static PlanRequest parse(String json) {
    return parse(json, Catalog.builtIn());
  }

  /** Parses a plan request against {@code catalog}. */
  public static PlanRequest parse(String json, Catalog catalog) {
    return fromJson(JsonFields.parseObject("request", json), catalog);
  }

  /** Reads a parsed plan request against {@code catalog}. */
  static PlanRequest fromJson(JsonNode root, Catalog catalog) {
    JsonFields.onlyFields(root, "", TOP);
    JsonNode clusterJson = JsonFields.object(root, "cluster", "cluster");
    int min;
    int max;
    JsonNode devices = clusterJson.get("devices");
    ObjectNode clusterCopy = clusterJson.deepCopy();
    if (devices != null && devices.isTextual()) {
      String[] parts = devices.asText().trim().split("-", -1);
      if (parts.length != 2) {
        throw new IllegalArgumentException("cluster.devices: '" + devices.asText()
            + "' is neither a count nor a range N-M");
      }
      try {
        min = Integer.parseInt(parts[0].trim());
        max = Integer.parseInt(parts[1].trim());
      } catch (NumberFormatException e) {
        throw new IllegalArgumentException("cluster.devices: '" + devices.asText()
            + "' is neither a count nor a range N-M", e);
      }
      Checks.positive("cluster.devices", min);
      if (max < min) {
        throw new IllegalArgumentException("cluster.devices: range '" + devices.asText()
            + "' is empty");
      }
      clusterCopy.put("devices", 1);
    } else {
      min = JsonFields.integer(clusterJson, "devices", "cluster.devices");
      max = min;
    }
    ObjectNode estimateJson = JsonFields.mapper().createObjectNode();
    estimateJson.set("model", root.get("model"));
    estimateJson.set("cluster", clusterCopy);
    estimateJson.set("workload", root.get("workload"));
    if (root.has("layout")) {
      estimateJson.set("layout", root.get("layout"));
    }
    EstimateRequest base = Requests.fromJson(estimateJson, catalog);
    ModelSpec model = base.model();
    if (!(model instanceof TransformerSpec transformer)) {
      throw new IllegalArgumentException("model: planning needs an architecture (layers, hidden,"
          + " heads ...), not only a parameter count");
    }
    Cluster cluster = base.cluster();
    if (max > cluster.devicesPerNode() && max % cluster.devicesPerNode() != 0
        && min == max) {
      throw new IllegalArgumentException("cluster.devices: " + max + " is more than one node"
          + " holds (" + cluster.devicesPerNode() + ") but not a whole number of nodes");
    }
    TrainingWorkload w = base.workload();

    JsonNode c = JsonFields.optionalObject(root, "constraints", "constraints");
    double headroom = 0.05;
    double deadline = 0;
    int minBatch = 0;
    int maxBatch = 0;
    List<PrecisionRecipe> precisions = new ArrayList<>();
    if (c != null) {
      JsonFields.onlyFields(c, "constraints", ImmutableSet.of("memoryHeadroom", "deadlineDays",
          "minGlobalBatch", "maxGlobalBatch", "precisions"));
      Double h = JsonFields.optionalNumber(c, "memoryHeadroom", "constraints.memoryHeadroom");
      headroom = h == null ? headroom : h;
      Double d = JsonFields.optionalNumber(c, "deadlineDays", "constraints.deadlineDays");
      deadline = d == null ? 0 : Checks.positive("constraints.deadlineDays", d);
      Integer lo = JsonFields.optionalInteger(c, "minGlobalBatch", "constraints.minGlobalBatch");
      Integer hi = JsonFields.optionalInteger(c, "maxGlobalBatch", "constraints.maxGlobalBatch");
      minBatch = lo == null ? 0 : Checks.positive("constraints.minGlobalBatch", lo);
      maxBatch = hi == null ? 0 : Checks.positive("constraints.maxGlobalBatch", hi);
      JsonNode ps = c.get("precisions");
      if (ps != null && !ps.isNull()) {
        if (!ps.isArray()) {
          throw new IllegalArgumentException("constraints.precisions: must be an array of"
              + " precision names");
        }
        for (JsonNode p : ps) {
          if (!p.isTextual()) {
            throw new IllegalArgumentException("constraints.precisions: entries must be strings,"
                + " got " + p);
          }
          PrecisionRecipe recipe = PrecisionRecipe.named("constraints.precisions", p.asText());
          precisions.add(recipe.name().equals(w.precision().name()) ? w.precision() : recipe);
        }
      }
    }
    if (w.globalBatchSize() > 0 && (minBatch > 0 || maxBatch > 0)) {
      throw new IllegalArgumentException("constraints.maxGlobalBatch: give either"
          + " workload.globalBatchSize or batch bounds, not both");
    }
    if (w.globalBatchSize() == 0 && maxBatch == 0) {
      maxBatch = (int) Math.max(1, Math.round(DEFAULT_BATCH_TOKENS / transformer.seqLen()));
      minBatch = Math.min(minBatch, maxBatch);
    }
    String objectiveText = JsonFields.optionalString(root, "objective", "objective");
    Objective objective = objectiveText == null ? Objective.TIME
        : Objective.fromId("objective", objectiveText);
    if (objective == Objective.DEVICES && w.trainingTokens() <= 0) {
      throw new IllegalArgumentException("workload.trainingTokens: required by the objective"
          + " 'devices' (a deadline needs a token budget)");
    }
    Pricing pricing = pricing(JsonFields.optionalObject(root, "pricing", "pricing"), cluster,
        catalog);
    JsonNode s = JsonFields.optionalObject(root, "search", "search");
    int alternatives = 5;
    boolean exhaustive = false;
    if (s != null) {
      JsonFields.onlyFields(s, "search", ImmutableSet.of("alternatives", "exhaustive"));
      Integer a = JsonFields.optionalInteger(s, "alternatives", "search.alternatives");
      alternatives = a == null ? alternatives : a;
      Boolean x = JsonFields.optionalBoolean(s, "exhaustive", "search.exhaustive");
      exhaustive = x != null && x;
    }
    return new PlanRequest(transformer, cluster, min, max, w, base.layout(), minBatch, maxBatch,
        headroom, deadline, precisions, objective, pricing, alternatives, exhaustive);
  }

  static Pricing pricing(JsonNode p, Cluster cluster, Catalog catalog) {
    Catalog.Price listed = catalog.prices().get(cluster.accelerator().id());
    double price = listed == null ? 0 : listed.usdPerHour();
    String source = listed == null ? "no catalog price"
        : listed.source() + " (" + listed.date() + ")";
    double power = cluster.accelerator().powerWatts();
    double pue = 1.2;
    double kwh = 0;
    if (p != null) {
      JsonFields.onlyFields(p, "pricing", ImmutableSet.of("pricePerDeviceHour", "powerWatts",
          "pue", "electricityPerKwh"));
      Double given = JsonFields.optionalNumber(p, "pricePerDeviceHour",
          "pricing.pricePerDeviceHour");
      if (given != null) {
        price = Checks.positive("pricing.pricePerDeviceHour", given);
        source = "request";
      }
      Double w = JsonFields.optionalNumber(p, "powerWatts", "pricing.powerWatts");
      power = w == null ? power : Checks.positive("pricing.powerWatts", w);
      Double u = JsonFields.optionalNumber(p, "pue", "pricing.pue");
      pue = u == null ? pue : u;
      Double e = JsonFields.optionalNumber(p, "electricityPerKwh", "pricing.electricityPerKwh");
      kwh = e == null ? 0 : Checks.nonNegative("pricing.electricityPerKwh", e);
    }
    return new Pricing(price, source, power, pue, kwh);
  }
}
