package io.hyperframes.validate;

import com.fasterxml.jackson.databind.JsonNode;
import io.hyperframes.request.EstimateRequest;
import io.hyperframes.request.Requests;
import io.hyperframes.catalog.Catalog;
import io.hyperframes.hardware.Checks;
import io.hyperframes.hardware.Cluster;
import io.hyperframes.interconnect.Collective;
import io.hyperframes.interconnect.CollectiveGroup;
import io.hyperframes.interconnect.InterconnectModel;
import io.hyperframes.json.Json;
import io.hyperframes.request.Documents;
import io.hyperframes.plan.TrainingEstimate;
import io.hyperframes.plan.TrainingEstimator;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Runs a file of measured cases (the format of {@code published-runs.json}: training requests with
 * or without a layout, and collectives) and compares every published figure with the prediction.
 */
public final class Validator {

  private static final double GIB = 1L << 30;

  private final Catalog catalog;
  private final TrainingEstimator estimator;
  private final InterconnectModel interconnect;
  private final io.hyperframes.inference.InferenceEstimator inference;

  private Validator(Catalog catalog, TrainingEstimator estimator, InterconnectModel interconnect,
      io.hyperframes.inference.InferenceEstimator inference) {
    this.catalog = catalog;
    this.estimator = estimator;
    this.interconnect = interconnect;
    this.inference = inference;
  }

  /**
   * A validator over a user's models: training cases with {@code estimator}, serving cases with
   * {@code inference}, collective cases with {@code interconnect}.
   */
  public static Validator of(Catalog catalog, TrainingEstimator estimator,
      io.hyperframes.inference.InferenceEstimator inference, InterconnectModel interconnect) {
    if (catalog == null || estimator == null || inference == null || interconnect == null) {
      throw new IllegalArgumentException("validator: catalog and models must be given");
    }
    return new Validator(catalog, estimator, interconnect, inference);
  }

  /** A validator over the built-in catalog and analytical models. */
  public static Validator analytical() {
    return on(Catalog.builtIn());
  }

  /** A validator over the analytical models and this catalog (for example a calibrated one). */
  public static Validator on(Catalog catalog) {
    if (catalog == null) {
      throw new IllegalArgumentException("catalog: must be given");
    }
    return new Validator(catalog, TrainingEstimator.analytical(), InterconnectModel.alphaBeta(),
        io.hyperframes.inference.InferenceEstimator.analytical());
  }

  /**
   * Validates every case in the JSON document.
   *
   * @throws IllegalArgumentException when the document or a case is malformed, naming the case
   */
  public ValidationReport run(String casesJson) {
    return run(Json.parseObject("cases", casesJson));
  }

  /**
   * Validates every case of a parsed document ({@code {"cases": [...]}}).
   *
   * @throws IllegalArgumentException when the document or a case is malformed, naming the case
   */
  public ValidationReport run(JsonNode root) {
    Documents.Cases doc = Json.bind(root, Documents.Cases.class, "");
    if (doc.cases() == null) {
      throw new IllegalArgumentException("cases: must be an array of cases");
    }
    if (doc.cases().isEmpty()) {
      // A mean error over nothing would print as 0 %: a perfect score for an empty file.
      throw new IllegalArgumentException("cases: the array is empty (expected {\"cases\":"
          + " [{\"id\", \"request\", \"expected\"}, ...]}, as docs/validation/*.json)");
    }
    List<CaseResult> out = new ArrayList<>();
    int index = 0;
    for (Documents.Case c : doc.cases()) {
      String id = c.id() != null ? c.id() : "case[" + index + "]";
      index++;
      Map<String, JsonNode> expected = Json.required(id + ".expected", c.expected());
      if (c.collective() != null) {
        collective(id, c.collective(), expected, out);
      } else {
        JsonNode request = Json.required(id + ".request", c.request());
        if (!request.isObject()) {
          throw new IllegalArgumentException(id + ".request: must be an object");
        }
        JsonNode workload = request.get("workload");
        String type = workload != null && workload.hasNonNull("type")
            ? workload.get("type").asText() : "";
        if (type.equals("inference")) {
          inference(id, request, expected, out);
          continue;
        }
        if (!type.equals("training")) {
          skip(id, expected, "workload type '" + type + "' is not estimated", out);
          continue;
        }
        training(id, request, expected, out);
      }
    }
    return new ValidationReport(out);
  }

  private void training(String id, JsonNode requestJson, Map<String, JsonNode> expected, List<CaseResult> out) {
    EstimateRequest request;
    try {
      request = Requests.fromJson(requestJson, catalog);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(id + ": " + e.getMessage(), e);
    }
    TrainingEstimate e = estimator.estimate(request);
    boolean search = !requestJson.has("layout");
    for (Map.Entry<String, JsonNode> f : expected.entrySet()) {
      if (!f.getValue().isNumber()) {
        continue;
      }
      double want = f.getValue().asDouble();
      String note = "";
      double got;
      switch (f.getKey()) {
        case "stepSeconds" -> got = e.stepSeconds();
        case "tflopsPerDevice" -> got = e.flopsPerSecondPerDevice() / 1e12;
        case "modelTflopsPerDevice" -> got = e.modelFlopsPerSecondPerDevice() / 1e12;
        case "parameters" -> got = e.parameters();
        case "mfu" -> got = e.mfu();
        case "hfu" -> got = e.hfu();
        case "tokensPerSecondPerDevice" -> got = e.tokensPerSecondPerDevice();
        case "gpuHours" -> got = e.gpuHours();
        case "modelStatesBytesPerDevice", "modelStatesBytes" -> got = e.memory().modelStatesBytes();
        case "weightsGradsOptimizerGiB" -> {
          got = e.memory().layerStatesBytes() / GIB;
          note = "transformer layers only, as the source counts (memory.layerStatesBytes)";
        }
        case "activationsGiB" -> got = e.memory().activationsBytes() / GIB;
        case "activationsBytes" -> got = e.memory().activationsBytes();
        case "totalBytes" -> got = e.memory().totalBytes();
        default -> {
          out.add(new CaseResult(id, f.getKey(), want, Double.NaN, Double.NaN,
              "metric not predicted by the training estimator", "point"));
          continue;
        }
      }
      String bound = "point";
      if (search) {
        bound = f.getKey().equals("gpuHours") || f.getKey().equals("stepSeconds") ? "atMost"
            : "atLeast";
        note = "search case: the published figure is what the best layout must reach";
      }
      out.add(new CaseResult(id, f.getKey(), want, got, (got - want) / want, note, bound));
    }
  }

  private void inference(String id, JsonNode requestJson, Map<String, JsonNode> expected,
      List<CaseResult> out) {
    io.hyperframes.inference.InferenceResult r;
    try {
      r = io.hyperframes.inference.Serving.evaluate(
          io.hyperframes.inference.Serving.fromJson(requestJson, catalog), inference);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(id + ": " + e.getMessage(), e);
    }
    var e = r.estimate();
    for (Map.Entry<String, JsonNode> f : expected.entrySet()) {
      if (!f.getValue().isNumber()) {
        continue;
      }
      double want = f.getValue().asDouble();
      double got;
      switch (f.getKey()) {
        case "prefillSeconds" -> got = e.prefillSeconds();
        case "ttftSeconds" -> got = e.ttftSeconds();
        case "decodeSecondsPerToken", "tpotSeconds" -> got = e.decodeSecondsPerToken();
        case "totalSeconds" -> got = e.totalSeconds();
        case "kvCacheBytesPerToken" -> got = e.kvCacheBytesPerToken();
        case "kvCacheBytesPerSequence" -> got = e.kvCacheBytesPerSequence();
        case "outputTokensPerSecondPerDevice" -> got = e.outputTokensPerSecondPerDevice();
        case "prefillInputTokensPerSecondPerNode", "decodeOutputTokensPerSecondPerNode" -> {
          var d = r.disaggregated();
          if (d == null) {
            out.add(new CaseResult(id, f.getKey(), want, Double.NaN, Double.NaN,
                "needs layout.disaggregated", "point"));
            continue;
          }
          got = f.getKey().startsWith("prefill") ? d.prefill().inputTokensPerSecondPerNode()
              : d.decode().outputTokensPerSecondPerNode();
        }
        case "capacityOutputTokensPerSecond", "capacityOutputTokensPerSecondPerDevice" -> {
          var c = r.capacity();
          if (c == null) {
            out.add(new CaseResult(id, f.getKey(), want, Double.NaN, Double.NaN,
                "needs workload.mode capacity", "point"));
            continue;
          }
          got = f.getKey().endsWith("PerDevice") ? c.outputTokensPerSecondPerDevice()
              : c.outputTokensPerSecond();
        }
        case "sloOutputTokensPerSecond", "sloTtftSeconds", "sloTpotSeconds" -> {
          var s = r.slo();
          if (s == null || !s.feasible()) {
            out.add(new CaseResult(id, f.getKey(), want, Double.NaN, Double.NaN,
                s == null ? "needs workload.mode slo" : "no load meets the SLO", "point"));
            continue;
          }
          got = f.getKey().equals("sloOutputTokensPerSecond") ? s.outputTokensPerSecond()
              : f.getKey().equals("sloTtftSeconds") ? s.ttftSeconds() : s.tpotSeconds();
        }
        default -> {
          out.add(new CaseResult(id, f.getKey(), want, Double.NaN, Double.NaN,
              "metric not predicted by the inference estimator", "point"));
          continue;
        }
      }
      out.add(new CaseResult(id, f.getKey(), want, got, (got - want) / want, "", "point"));
    }
  }

  private void collective(String id, Documents.CollectiveCase c, Map<String, JsonNode> expected,
      List<CaseResult> out) {
    String p = id + ".collective";
    Cluster cluster;
    Collective op;
    try {
      cluster = c.cluster(catalog);
      op = Collective.fromId(p + ".op", Json.required(p + ".op", c.op()));
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(id + ": " + e.getMessage(), e);
    }
    double bytes = Checks.positive(p + ".messageBytes",
        Json.required(p + ".messageBytes", c.messageBytes()));
    int n = cluster.devices();
    CollectiveGroup group = new CollectiveGroup(n, Math.min(n, cluster.devicesPerNode()));
    var t = interconnect.time(cluster, op, bytes, group);
    JsonNode w = expected.get("busBandwidthBytesPerSecond");
    if (w == null || !w.isNumber()) {
      throw new IllegalArgumentException(id + ".expected.busBandwidthBytesPerSecond: must be a"
          + " number, got " + w);
    }
    double want = w.asDouble();
    double got = t.busBandwidthBytesPerSecond();
    out.add(new CaseResult(id, "busBandwidthBytesPerSecond", want, got, (got - want) / want,
        "algorithm " + t.algorithm().name().toLowerCase(java.util.Locale.ROOT), "point"));
  }

  private static void skip(String id, Map<String, JsonNode> expected, String why, List<CaseResult> out) {
    for (Map.Entry<String, JsonNode> f : expected.entrySet()) {
      if (f.getValue().isNumber()) {
        out.add(new CaseResult(id, f.getKey(), f.getValue().asDouble(), Double.NaN, Double.NaN,
            why, "point"));
      }
    }
  }
}
