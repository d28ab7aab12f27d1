package io.hyperframes.inference;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.hyperframes.catalog.Catalog;
import io.hyperframes.hardware.Checks;
import io.hyperframes.request.Documents;
import io.hyperframes.json.Json;
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

  /**
   * A parsed request, its plan and the estimator that made it.
   *
   * @param request the serving request as read
   * @param plan the chosen configuration and alternatives
   * @param estimator the estimator every configuration was estimated with
   */
  public record Result(InferenceRequest request, InferencePlanner.ServingPlan plan,
      InferenceEstimator estimator) {}

  /** Parses and plans with the analytical models. */
  public static Result plan(JsonNode root, Catalog catalog) {
    return plan(root, catalog, InferenceEstimator.analytical());
  }

  /** Parses and plans, every configuration estimated with {@code estimator} (a user's models). */
  public static Result plan(JsonNode root, Catalog catalog, InferenceEstimator estimator) {
    if (estimator == null) {
      throw new IllegalArgumentException("estimator: must be given");
    }
    if (root != null && root.has("layout")) {
      // The layout is what a serving plan searches; a request that fixes one is an estimate's.
      throw new IllegalArgumentException("layout: a serving plan searches tp, ep and replicas"
          + " itself (and sizes disaggregated pools); remove layout, or estimate this layout"
          + " with hyperframes estimate --request");
    }
    Documents.ServePlan doc = Json.bind(root, Documents.ServePlan.class, "");
    InferenceRequest r = Serving.request(doc.model(), doc.cluster(), doc.workload(), null,
        catalog);
    List<NumberFormat> weights = new ArrayList<>();
    List<NumberFormat> kvs = new ArrayList<>();
    if (doc.constraints() != null) {
      weights.addAll(formats("constraints.weightFormats", doc.constraints().weightFormats()));
      kvs.addAll(formats("constraints.kvFormats", doc.constraints().kvFormats()));
    }
    Catalog.Price listed = catalog.prices().get(r.cluster().accelerator().id());
    double price = listed == null ? 0 : listed.usdPerHour();
    if (doc.pricing() != null && doc.pricing().pricePerDeviceHour() != null) {
      price = Checks.positive("pricing.pricePerDeviceHour", doc.pricing().pricePerDeviceHour());
    }
    int alternatives = 5;
    if (doc.search() != null && doc.search().alternatives() != null) {
      alternatives = doc.search().alternatives();
      if (alternatives < 0 || alternatives > 100) {
        throw new IllegalArgumentException("search.alternatives: must be in [0, 100], got "
            + alternatives);
      }
    }
    return new Result(r, InferencePlanner.plan(r.model(), r.cluster(), r.workload(), weights,
        kvs, price, alternatives, estimator), estimator);
  }

  private static List<NumberFormat> formats(String path, List<String> ids) {
    List<NumberFormat> out = new ArrayList<>();
    if (ids == null) {
      return out;
    }
    for (String id : ids) {
      NumberFormat format = NumberFormat.fromId(path, Json.required(path, id));
      if (format == NumberFormat.TF32 || format == NumberFormat.FP64) {
        throw new IllegalArgumentException(path + ": '" + id + "' is not a serving format");
      }
      out.add(format);
    }
    return out;
  }

  /**
   * The plan's JSON: the serving estimate of the best configuration (under the estimator that
   * planned it), {@code best}, {@code alternatives}, {@code findings} and {@code search}.
   */
  public static ObjectNode toJson(Result result) {
    if (result == null) {
      throw new IllegalArgumentException("result: must be given");
    }
    InferencePlanner.ServingPlan plan = result.plan();
    InferenceResult best = null;
    if (plan.best() != null) {
      InferencePlanner.Config b = plan.best();
      InferenceRequest r = result.request();
      InferenceWorkload w = r.workload();
      InferenceWorkload chosen = w.withFormats(b.weights(), b.kvCache())
          .withBatchSize(Math.min(w.batchSize(), b.batchLimit()));
      best = Serving.evaluate(new InferenceRequest(r.model(),
          r.cluster().withDevices(b.devices()), chosen, b.tp(), b.ep(), b.pp(), b.replicas())
          .withTwoBatchOverlap(b.twoBatchOverlap())
          .withRedundantExperts(b.redundantExperts()), result.estimator());
    }
    return Json.tree(ServingJson.ServingPlanDocument.of(plan, best));
  }

  /** One line describing a point of the throughput-interactivity front. */
  public static String describe(InferencePlanner.FrontPoint p) {
    if (p == null) {
      throw new IllegalArgumentException("point: must be given");
    }
    return String.format(Locale.ROOT, "tp %d%s%s%s, %s weights, %s KV, batch %d: %.4g tokens/s"
        + " per GPU, %.4g tokens/s per user, TTFT %.3g s, TPOT %.3g ms%s", p.tp(),
        p.ep() > 1 ? " ep " + p.ep() : "", stages(p.pp()), p.replicasPerGroup() > 1 ? " over "
            + p.replicasPerGroup() + " replicas" + groupNotes(p.redundantExperts(),
                p.twoBatchOverlap()) : "", p.weights().id(), p.kvCache().id(), p.batch(),
        p.tokensPerSecondPerGpu(), p.tokensPerSecondPerUser(), p.ttftSeconds(),
        p.tpotSeconds() * 1e3, p.meetsLatencyTargets() ? "" : " (misses the latency targets)");
  }

  /**
   * A replica's pipeline stages for the descriptions: " pp 2 over 2 nodes" (with pp batches in
   * flight, a point's batch is per batch), or nothing.
   */
  private static String stages(int pp) {
    return pp > 1 ? " pp " + pp + " over " + pp + " nodes" : "";
  }

  /** A pool's expert split for {@link #describe}: " ep 32", or nothing. */
  private static String experts(InferencePlanner.PoolConfig p) {
    return p.ep() > 1 ? " ep " + p.ep() : "";
  }

  /** A pool's {@link #groupNotes}. */
  private static String overlap(InferencePlanner.PoolConfig p) {
    return groupNotes(p.redundantExperts(), p.twoBatchOverlap());
  }

  /**
   * What an expert-parallel group runs beside its experts, as the descriptions and the HTML
   * report write it: ", 8 redundant experts, two-batch overlap", either part, or nothing.
   */
  public static String groupNotes(int redundantExperts, boolean twoBatchOverlap) {
    return (redundantExperts > 0 ? ", " + redundantExperts + " redundant experts" : "")
        + (twoBatchOverlap ? ", two-batch overlap" : "");
  }

  /** One line describing a disaggregated configuration. */
  public static String describe(InferencePlanner.DisaggregatedConfig c) {
    if (c == null) {
      throw new IllegalArgumentException("configuration: must be given");
    }
    return String.format(Locale.ROOT, "%d devices (prefill tp %d%s × %d replicas%s, batch ≤ %d;"
        + " decode tp %d%s × %d replicas%s, batch ≤ %d; %s), %s weights, %s KV: TTFT %.3g"
        + " s at the SLO percentile, TPOT %.3g ms, %.3g USD per million tokens", c.devices(),
        c.prefill().tp(), experts(c.prefill()), c.prefill().replicas(),
        overlap(c.prefill()), c.prefill().batchLimit(), c.decode().tp(), experts(c.decode()),
        c.decode().replicas(), overlap(c.decode()),
        c.decode().batchLimit(), c.oneNode() ? "one node" : "KV over the inter-node fabric",
        c.weights().id(), c.kvCache().id(), c.ttftSeconds(), c.tpotSeconds() * 1e3,
        c.usdPerMillionTokens());
  }

  /** One line describing a configuration. */
  public static String describe(InferencePlanner.Config c) {
    return String.format(Locale.ROOT, "%d devices (tp %d%s%s × %d replicas%s), %s weights, %s"
        + " KV, batch ≤ %d: p99 %.3g s, p99 TTFT %.3g s, %.3g USD per million tokens",
        c.devices(), c.tp(), c.ep() > 1 ? " ep " + c.ep() : "",
        stages(c.pp()), c.replicas(),
        groupNotes(c.redundantExperts(), c.twoBatchOverlap()), c.weights().id(),
        c.kvCache().id(),
        c.batchLimit(), c.load().p99(), c.load().ttftP99(), c.usdPerMillionTokens());
  }
}
