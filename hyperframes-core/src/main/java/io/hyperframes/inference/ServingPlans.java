package io.hyperframes.inference;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.google.common.collect.ImmutableSet;
import io.hyperframes.diagnose.Finding;
import io.hyperframes.hardware.Catalog;
import io.hyperframes.hardware.Checks;
import io.hyperframes.json.JsonFields;
import io.hyperframes.precision.NumberFormat;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Serving plans from JSON: an inference request plus {@code constraints.weightFormats},
 * {@code constraints.kvFormats}, {@code pricing.pricePerDeviceHour} and
 * {@code search.alternatives}; and their JSON form.
 */
public final class ServingPlans {
  private ServingPlans() {}

  /** A parsed request and its plan. */
  public record Result(InferenceRequest request, InferencePlanner.ServingPlan plan) {}

  /** Parses and plans with the analytical models. */
  public static Result plan(JsonNode root, Catalog catalog) {
    return plan(root, catalog, InferenceEstimator.analytical());
  }

  /** Parses and plans, every configuration estimated with {@code estimator} (a user's models). */
  public static Result plan(JsonNode root, Catalog catalog, InferenceEstimator estimator) {
    if (estimator == null) {
      throw new IllegalArgumentException("estimator: must be given");
    }
    JsonFields.onlyFields(root, "", ImmutableSet.of("model", "cluster", "workload", "layout",
        "constraints", "pricing", "search", "objective"));
    ObjectNode request = root.deepCopy();
    request.remove(List.of("constraints", "pricing", "search", "objective", "layout"));
    InferenceRequest r = Serving.fromJson(request, catalog);
    List<NumberFormat> weights = new ArrayList<>();
    List<NumberFormat> kvs = new ArrayList<>();
    JsonNode c = JsonFields.optionalObject(root, "constraints", "constraints");
    if (c != null) {
      JsonFields.onlyFields(c, "constraints", ImmutableSet.of("weightFormats", "kvFormats"));
      weights.addAll(formats(c, "weightFormats"));
      kvs.addAll(formats(c, "kvFormats"));
    }
    Catalog.Price listed = catalog.prices().get(r.cluster().accelerator().id());
    double price = listed == null ? 0 : listed.usdPerHour();
    JsonNode p = JsonFields.optionalObject(root, "pricing", "pricing");
    if (p != null) {
      JsonFields.onlyFields(p, "pricing", ImmutableSet.of("pricePerDeviceHour"));
      Double given = JsonFields.optionalNumber(p, "pricePerDeviceHour",
          "pricing.pricePerDeviceHour");
      price = given == null ? price : Checks.positive("pricing.pricePerDeviceHour", given);
    }
    int alternatives = 5;
    JsonNode s = JsonFields.optionalObject(root, "search", "search");
    if (s != null) {
      JsonFields.onlyFields(s, "search", ImmutableSet.of("alternatives"));
      Integer a = JsonFields.optionalInteger(s, "alternatives", "search.alternatives");
      alternatives = a == null ? alternatives : a;
      if (alternatives < 0 || alternatives > 100) {
        throw new IllegalArgumentException("search.alternatives: must be in [0, 100], got "
            + alternatives);
      }
    }
    return new Result(r, InferencePlanner.plan(r.model(), r.cluster(), r.workload(), weights,
        kvs, price, alternatives, estimator));
  }

  private static List<NumberFormat> formats(JsonNode c, String field) {
    JsonNode n = c.get(field);
    List<NumberFormat> out = new ArrayList<>();
    if (n == null || n.isNull()) {
      return out;
    }
    if (!n.isArray()) {
      throw new IllegalArgumentException("constraints." + field + ": must be an array of format"
          + " names");
    }
    for (JsonNode f : n) {
      if (!f.isTextual()) {
        throw new IllegalArgumentException("constraints." + field + ": entries must be strings,"
            + " got " + f);
      }
      NumberFormat format = NumberFormat.fromId("constraints." + field, f.asText());
      if (format == NumberFormat.TF32 || format == NumberFormat.FP64) {
        throw new IllegalArgumentException("constraints." + field + ": '" + f.asText()
            + "' is not a serving format");
      }
      out.add(format);
    }
    return out;
  }

  /** The plan's JSON: feasible, best, alternatives, findings, search, and the best's estimate. */
  public static ObjectNode toJson(Result result) {
    InferencePlanner.ServingPlan plan = result.plan();
    ObjectNode root;
    if (plan.best() != null) {
      InferencePlanner.Config b = plan.best();
      InferenceRequest r = result.request();
      InferenceWorkload w = r.workload();
      InferenceWorkload chosen = new InferenceWorkload(b.weights(), b.kvCache(),
          Math.min(w.batchSize(), b.batchLimit()), w.promptTokens(), w.outputTokens(),
          w.arrivalRatePerSecond(), w.ttftSloSeconds(), w.tpotSloSeconds(), w.sloPercentile(),
          w.blockTokens());
      root = Serving.toJson(Serving.evaluate(new InferenceRequest(r.model(),
          r.cluster().withDevices(b.devices()), chosen, b.tp(), 1, b.replicas())));
      root.set("best", config(b));
    } else {
      root = JsonFields.mapper().createObjectNode();
      root.put("feasible", false);
      root.putArray("reasons").add("no configuration meets the SLO");
    }
    ArrayNode alternatives = root.putArray("alternatives");
    plan.alternatives().forEach(c -> alternatives.add(config(c)));
    ArrayNode findings = (ArrayNode) root.get("findings");
    if (findings == null) {
      findings = root.putArray("findings");
    }
    findings.addAll(Finding.toJson(plan.findings()));
    root.putObject("search").put("candidatesEvaluated", plan.candidatesEvaluated());
    return root;
  }

  static ObjectNode config(InferencePlanner.Config c) {
    ObjectNode o = JsonFields.mapper().createObjectNode();
    o.put("tp", c.tp());
    o.put("replicas", c.replicas());
    o.put("devices", c.devices());
    o.put("weights", c.weights().id());
    o.put("kvCache", c.kvCache().id());
    o.put("batchLimit", c.batchLimit());
    o.put("usdPerMillionTokens", c.usdPerMillionTokens());
    o.put("p50LatencySeconds", c.load().p50());
    o.put("p99LatencySeconds", c.load().p99());
    o.put("ttftP99Seconds", c.load().ttftP99());
    return o;
  }

  /** One line describing a configuration. */
  public static String describe(InferencePlanner.Config c) {
    return String.format(Locale.ROOT, "%d devices (tp %d × %d replicas), %s weights, %s KV,"
        + " batch ≤ %d: p99 %.3g s, p99 TTFT %.3g s, %.3g USD per million tokens", c.devices(),
        c.tp(), c.replicas(), c.weights().id(), c.kvCache().id(), c.batchLimit(), c.load().p99(),
        c.load().ttftP99(), c.usdPerMillionTokens());
  }
}
