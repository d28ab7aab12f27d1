package io.hyperframes.inference;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.google.common.collect.ImmutableSet;
import io.hyperframes.Requests;
import io.hyperframes.diagnose.Finding;
import io.hyperframes.diagnose.Severity;
import io.hyperframes.hardware.Catalog;
import io.hyperframes.hardware.Checks;
import io.hyperframes.hardware.Cluster;
import io.hyperframes.json.JsonFields;
import io.hyperframes.model.ModelSpec;
import io.hyperframes.model.TransformerSpec;
import io.hyperframes.precision.NumberFormat;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * Serving requests: parsing ({@code workload.type = "inference"}), the estimate with its
 * percentiles, the devices an SLO needs, findings, and the JSON form.
 */
public final class Serving {
  private Serving() {}

  private static final Set<String> WORKLOAD = ImmutableSet.of("type", "precision",
      "kvCachePrecision", "batchSize", "promptTokens", "outputTokens", "arrivalRatePerSecond",
      "latencySlo", "concurrency", "blockTokens");

  /** Whether a parsed request document is an inference request. */
  public static boolean isInference(JsonNode root) {
    JsonNode w = root.get("workload");
    return w != null && w.isObject() && w.has("type") && w.get("type").isTextual()
        && w.get("type").asText().equalsIgnoreCase("inference");
  }

  /** Parses an inference request. */
  public static InferenceRequest parse(String json, Catalog catalog) {
    return fromJson(JsonFields.parseObject("request", json), catalog);
  }

  /** Builds an inference request from parsed JSON. */
  public static InferenceRequest fromJson(JsonNode root, Catalog catalog) {
    JsonFields.onlyFields(root, "", ImmutableSet.of("model", "cluster", "workload", "layout"));
    ModelSpec model = Requests.model(JsonFields.object(root, "model", "model"), catalog);
    Cluster cluster = Requests.cluster(JsonFields.object(root, "cluster", "cluster"), catalog);
    if (!(model instanceof TransformerSpec m)) {
      throw new IllegalArgumentException("model: inference needs an architecture (layers,"
          + " hidden, heads ...), not only a parameter count");
    }
    JsonNode w = JsonFields.object(root, "workload", "workload");
    JsonFields.onlyFields(w, "workload", WORKLOAD);
    NumberFormat weights = format("workload.precision",
        JsonFields.string(w, "precision", "workload.precision"));
    String kvText = JsonFields.optionalString(w, "kvCachePrecision", "workload.kvCachePrecision");
    NumberFormat kv = kvText != null ? format("workload.kvCachePrecision", kvText)
        : weights.isFloating() && weights.bytes() >= 2 ? weights : NumberFormat.FP16;
    Integer batch = JsonFields.optionalInteger(w, "batchSize", "workload.batchSize");
    Integer concurrency = JsonFields.optionalInteger(w, "concurrency", "workload.concurrency");
    if (batch == null && concurrency == null) {
      throw new IllegalArgumentException("workload.batchSize: missing required field (or give"
          + " workload.concurrency)");
    }
    int b = batch != null ? Checks.positive("workload.batchSize", batch)
        : Checks.positive("workload.concurrency", concurrency);
    int prompt = Checks.positive("workload.promptTokens",
        JsonFields.integer(w, "promptTokens", "workload.promptTokens"));
    int output = Checks.positive("workload.outputTokens",
        JsonFields.integer(w, "outputTokens", "workload.outputTokens"));
    Double rate = JsonFields.optionalNumber(w, "arrivalRatePerSecond",
        "workload.arrivalRatePerSecond");
    double arrival = rate == null ? 0 : Checks.nonNegative("workload.arrivalRatePerSecond",
        rate);
    double ttft = 0;
    double tpot = 0;
    double percentile = 99;
    JsonNode slo = JsonFields.optionalObject(w, "latencySlo", "workload.latencySlo");
    if (slo != null) {
      JsonFields.onlyFields(slo, "workload.latencySlo", ImmutableSet.of("ttftSeconds",
          "tpotSeconds", "percentile"));
      Double t1 = JsonFields.optionalNumber(slo, "ttftSeconds", "workload.latencySlo.ttftSeconds");
      Double t2 = JsonFields.optionalNumber(slo, "tpotSeconds", "workload.latencySlo.tpotSeconds");
      Double p = JsonFields.optionalNumber(slo, "percentile", "workload.latencySlo.percentile");
      ttft = t1 == null ? 0 : Checks.positive("workload.latencySlo.ttftSeconds", t1);
      tpot = t2 == null ? 0 : Checks.positive("workload.latencySlo.tpotSeconds", t2);
      percentile = p == null ? 99 : p;
    }
    Integer block = JsonFields.optionalInteger(w, "blockTokens", "workload.blockTokens");
    InferenceWorkload workload = new InferenceWorkload(weights, kv, b, prompt, output, arrival,
        ttft, tpot, percentile, block == null ? 16 : block);
    JsonNode l = JsonFields.optionalObject(root, "layout", "layout");
    int tp;
    int pp = 1;
    int dp;
    if (l != null) {
      JsonFields.onlyFields(l, "layout", ImmutableSet.of("tp", "pp", "dp"));
      Integer t = JsonFields.optionalInteger(l, "tp", "layout.tp");
      Integer p = JsonFields.optionalInteger(l, "pp", "layout.pp");
      Integer d = JsonFields.optionalInteger(l, "dp", "layout.dp");
      tp = t == null ? 1 : Checks.positive("layout.tp", t);
      pp = p == null ? 1 : Checks.positive("layout.pp", p);
      int rest = cluster.devices() / Math.max(1, tp * pp);
      dp = d == null ? Math.max(1, rest) : Checks.positive("layout.dp", d);
    } else {
      tp = largestTp(m, cluster);
      dp = Math.max(1, cluster.devices() / tp);
    }
    return new InferenceRequest(m, cluster, workload, tp, pp, dp);
  }

  private static int largestTp(TransformerSpec m, Cluster c) {
    int best = 1;
    for (int t = 1; t <= Math.min(c.devices(), c.devicesPerNode()); t++) {
      if (m.heads() % t == 0 && c.devices() % t == 0) {
        best = t;
      }
    }
    return best;
  }

  private static NumberFormat format(String field, String value) {
    String v = value.trim().toLowerCase(Locale.ROOT);
    return switch (v) {
      case "fp16-mixed" -> NumberFormat.FP16;
      case "bf16-mixed" -> NumberFormat.BF16;
      default -> {
        NumberFormat f = NumberFormat.fromId(field, v);
        if (f == NumberFormat.TF32 || f == NumberFormat.FP64) {
          throw new IllegalArgumentException(field + ": '" + value + "' is not a serving format"
              + " (fp32, fp16, bf16, fp8, int8, int4)");
        }
        yield f;
      }
    };
  }

  /** Requests simulated per load estimate (10 % warm-up). */
  static final int SIMULATED_REQUESTS = 20_000;
  /** Seed of the arrival process, for reproducible percentiles. */
  static final long SEED = 0x5eed;
  /** Largest batch limit simulated (engines cap concurrent sequences, vLLM default 256). */
  static final int MAX_SIMULATED_BATCH = 256;

  /**
   * Estimates a request: the configuration; its latency percentiles (unloaded, or under the
   * arrival rate spread over the replicas, from the analytical
   * cluster model inside its validated domain ({@link ServingLoad#analyticalCovers}), the continuous-batching simulation outside); the devices
   * the SLO needs.
   */
  public static InferenceResult evaluate(InferenceRequest r) {
    return evaluate(r, InferenceEstimator.analytical());
  }

  /** As {@link #evaluate(InferenceRequest)} with the given estimator (a user's models). */
  public static InferenceResult evaluate(InferenceRequest r, InferenceEstimator estimator) {
    if (r == null || estimator == null) {
      throw new IllegalArgumentException("request: request and estimator must be given");
    }
    InferenceEstimate e = estimator.estimate(r.model(), r.cluster(), r.workload(), r.tp(), r.pp(),
        r.replicas());
    InferenceWorkload w = r.workload();
    double p50 = e.totalSeconds();
    double p99 = p50;
    double ttft50 = e.ttftSeconds();
    double ttft99 = ttft50;
    double capacity = 0;
    String latencyModel = "unloaded";
    if (w.arrivalRatePerSecond() > 0) {
      ServingLoad load = load(estimator, r.model(), r.cluster().withDevices(r.tp() * r.pp()), w,
          r.tp(), r.pp());
      capacity = load.capacityPerSecond() * r.replicas();
      double perReplica = w.arrivalRatePerSecond() / r.replicas();
      // The analytical cluster model inside its validated domain, the simulation outside it.
      boolean analytical = load.analyticalCovers(perReplica);
      latencyModel = analytical ? "analytical" : "simulation";
      ServingLoad.Percentiles q = analytical ? load.analytical(perReplica)
          : load.simulate(perReplica, SIMULATED_REQUESTS, SEED);
      p50 = q.p50();
      p99 = q.p99();
      ttft50 = q.ttftP50();
      ttft99 = q.ttftP99();
    }
    if (capacity > 0 && w.arrivalRatePerSecond() >= capacity) {
      List<String> reasons = new ArrayList<>(e.reasons());
      reasons.add(String.format(Locale.ROOT, "load: %.3g requests/s exceeds the %.3g requests/s"
          + " the replicas sustain; queues grow without bound (the percentiles are those of a"
          + " finite simulated run)", w.arrivalRatePerSecond(), capacity));
      e = new InferenceEstimate(false, reasons, e.tp(), e.pp(), e.replicas(), e.parameters(),
          e.weightsBytes(), e.kvCacheBytes(), e.activationsBytes(), e.otherBytes(),
          e.prefillSeconds(), e.decodeSecondsPerToken(), e.kvCacheBytesPerToken(),
          e.kvCacheBytesPerSequence(), e.maxBatchSize(), e.devices(), e.outputTokens(),
          e.batchSize());
    }
    int needed = e.devices();
    if (w.ttftSloSeconds() > 0 || w.tpotSloSeconds() > 0) {
      needed = devicesForSlo(estimator, r);
    }
    List<Finding> findings = new ArrayList<>(findings(e, r));
    if (capacity > 0 && w.arrivalRatePerSecond() > 0.8 * capacity) {
      findings.add(new Finding("queueing-bound", Severity.WARNING, String.format(Locale.ROOT,
          "the load is %.0f %% of capacity: latency is set by queueing",
          100 * w.arrivalRatePerSecond() / capacity), String.format(Locale.ROOT,
          "%.3g requests/s against %.3g requests/s with full batches; p99 %.3g s vs %.3g s"
              + " unloaded", w.arrivalRatePerSecond(), capacity, p99, e.totalSeconds()),
          "add replicas (see devicesNeeded) or shorten outputs"));
    }
    return new InferenceResult(e, p50, p99, ttft50, ttft99, capacity, needed, findings,
        latencyModel);
  }

  /**
   * The load model of one replica: prefill and decode times for batches 1 to the batch limit
   * (the memory bound, at most {@value #MAX_SIMULATED_BATCH}).
   */
  static ServingLoad load(InferenceEstimator estimator, TransformerSpec m, Cluster replica,
      InferenceWorkload w, int tp, int pp) {
    InferenceWorkload one = withBatch(w, 1);
    long fit = estimator.estimate(m, replica, one, tp, pp, 1).maxBatchSize();
    return load(estimator, m, replica, w, tp, pp,
        (int) Math.max(1, Math.min(MAX_SIMULATED_BATCH, fit)));
  }

  /** The load model of one replica with an explicit batch limit. */
  static ServingLoad load(InferenceEstimator estimator, TransformerSpec m, Cluster replica,
      InferenceWorkload w, int tp, int pp, int limit) {
    double[] prefill = new double[limit + 1];
    double[] decode = new double[limit + 1];
    for (int b = 1; b <= limit; b++) {
      InferenceEstimate e = estimator.estimate(m, replica, withBatch(w, b), tp, pp, 1);
      prefill[b] = e.prefillSeconds();
      decode[b] = e.decodeSecondsPerToken();
    }
    return new ServingLoad(prefill, decode, w.outputTokens());
  }

  static InferenceWorkload withBatch(InferenceWorkload w, int batch) {
    return new InferenceWorkload(w.weights(), w.kvCache(), batch, w.promptTokens(),
        w.outputTokens(), w.arrivalRatePerSecond(), w.ttftSloSeconds(), w.tpotSloSeconds(),
        w.sloPercentile(), w.blockTokens());
  }

  /**
   * Fewest devices of one replica (tp up to a node, then pp over nodes) whose unloaded TTFT and
   * TPOT meet the SLO at the workload's batch; 0 when none does.
   */
  static int devicesForSlo(InferenceEstimator estimator, InferenceRequest r) {
    if (r.workload().arrivalRatePerSecond() > 0) {
      return devicesForSloUnderLoad(estimator, r);
    }
    TransformerSpec m = r.model();
    InferenceWorkload w = r.workload();
    int best = 0;
    for (int pp = 1; pp <= Math.min(m.layers(), 64); pp++) {
      for (int tp = 1; tp <= r.cluster().devicesPerNode(); tp++) {
        if (m.heads() % tp != 0) {
          continue;
        }
        int devices = tp * pp;
        if (best > 0 && devices >= best) {
          continue;
        }
        if (devices > r.cluster().devicesPerNode() && devices % r.cluster().devicesPerNode() != 0) {
          continue;
        }
        Cluster c = r.cluster().withDevices(devices);
        InferenceEstimate e = estimator.estimate(m, c, w, tp, pp, 1);
        boolean ok = e.feasible()
            && (w.ttftSloSeconds() == 0 || e.ttftSeconds() <= w.ttftSloSeconds())
            && (w.tpotSloSeconds() == 0 || e.tpotSeconds() <= w.tpotSloSeconds());
        if (ok) {
          best = devices;
        }
      }
    }
    return best;
  }

  /**
   * Fewest devices (tp × replicas, tp up to a node) whose simulated TTFT at the SLO percentile
   * and mean decode step under the per-replica rate meet the SLO; 0 when none up to 4096 devices
   * does.
   */
  static int devicesForSloUnderLoad(InferenceEstimator estimator, InferenceRequest r) {
    TransformerSpec m = r.model();
    InferenceWorkload w = r.workload();
    int best = 0;
    for (int tp = 1; tp <= r.cluster().devicesPerNode(); tp++) {
      if (m.heads() % tp != 0) {
        continue;
      }
      Cluster replica = r.cluster().withDevices(tp);
      if (!estimator.estimate(m, replica, withBatch(w, 1), tp, 1, 1).feasible()) {
        continue;
      }
      ServingLoad load = load(estimator, m, replica, w, tp, 1);
      int replicas = Math.max(1, (int) Math.ceil(w.arrivalRatePerSecond()
          / load.capacityPerSecond()));
      for (; replicas * tp <= 4096 && (best == 0 || replicas * tp < best); replicas++) {
        if (meetsSlo(load, w, w.arrivalRatePerSecond() / replicas)) {
          best = replicas * tp;
          break;
        }
      }
    }
    return best;
  }

  static boolean meetsSlo(ServingLoad load, InferenceWorkload w, double rate) {
    if (rate >= load.capacityPerSecond()) {
      return false;
    }
    return meets(load.simulate(rate, SIMULATED_REQUESTS, SEED), w);
  }

  /**
   * Whether simulated percentiles meet the workload's SLO: TTFT at the SLO percentile (read from
   * the simulated distribution at exactly that percentile) and the mean time per output token.
   */
  static boolean meets(ServingLoad.Percentiles q, InferenceWorkload w) {
    double ttft = q.ttftAt(w.sloPercentile());
    double tpot = (q.p50() - q.ttftP50()) / Math.max(1, w.outputTokens() - 1);
    return (w.ttftSloSeconds() == 0 || ttft <= w.ttftSloSeconds())
        && (w.tpotSloSeconds() == 0 || tpot <= w.tpotSloSeconds());
  }

  static List<Finding> findings(InferenceEstimate e, InferenceRequest r) {
    List<Finding> out = new ArrayList<>();
    double capacity = r.cluster().accelerator().memoryBytes();
    if (!e.feasible()) {
      out.add(new Finding("infeasible", Severity.CRITICAL, "the batch does not fit",
          String.join("; ", e.reasons()), "raise tp, quantise weights (int8/fp8) or the KV cache,"
              + " or lower the batch to at most " + e.maxBatchSize()));
    }
    if (e.kvCacheBytes() > 0.5 * capacity || e.maxBatchSize() < 2L * e.batchSize()) {
      out.add(new Finding("kv-cache-bound", Severity.INFO, String.format(Locale.ROOT,
          "the KV cache bounds the batch at %d sequences", e.maxBatchSize()), String.format(
          Locale.ROOT, "%.0f KiB per token, %.1f MiB per sequence of %d tokens",
          e.kvCacheBytesPerToken() / 1024, e.kvCacheBytesPerSequence() / (1 << 20),
          r.workload().promptTokens() + r.workload().outputTokens()),
          "grouped-query attention, an FP8 KV cache or more tensor parallelism raise it"));
    }
    Cluster c = r.cluster();
    double weightRead = e.weightsBytes() / (c.accelerator().memoryBandwidthBytesPerSecond()
        * c.accelerator().memoryEfficiency());
    if (weightRead > 0.5 * e.decodeSecondsPerToken()) {
      out.add(new Finding("bandwidth-bound", Severity.INFO, String.format(Locale.ROOT,
          "decode is bound by memory bandwidth: %.0f %% of a step reads the weights",
          100 * weightRead / e.decodeSecondsPerToken()), String.format(Locale.ROOT,
          "%.1f GiB of weights per device at %.0f GB/s", e.weightsBytes() / (1L << 30),
          c.accelerator().memoryBandwidthBytesPerSecond() / 1e9),
          "batch more requests per step (continuous batching) or quantise the weights"));
    }
    return out;
  }

  /** The JSON form: feasible, reasons, layout, memory, inference, findings. */
  public static ObjectNode toJson(InferenceResult result) {
    InferenceEstimate e = result.estimate();
    JsonNodeFactory f = JsonNodeFactory.instance;
    ObjectNode root = f.objectNode();
    root.put("feasible", e.feasible());
    ArrayNode reasons = root.putArray("reasons");
    e.reasons().forEach(reasons::add);
    ObjectNode layout = root.putObject("layout");
    layout.put("tp", e.tp());
    layout.put("pp", e.pp());
    layout.put("dp", e.replicas());
    root.put("parameters", e.parameters());
    ObjectNode memory = root.putObject("memory");
    memory.put("weightsBytes", e.weightsBytes());
    memory.put("kvCacheBytes", e.kvCacheBytes());
    memory.put("activationsBytes", e.activationsBytes());
    memory.put("otherBytes", e.otherBytes());
    memory.put("totalBytes", e.totalBytes());
    ObjectNode inf = root.putObject("inference");
    inf.put("prefillSeconds", e.prefillSeconds());
    inf.put("decodeSecondsPerToken", e.decodeSecondsPerToken());
    inf.put("ttftSeconds", e.ttftSeconds());
    inf.put("tpotSeconds", e.tpotSeconds());
    inf.put("totalSeconds", e.totalSeconds());
    inf.put("outputTokensPerSecondPerDevice", e.outputTokensPerSecondPerDevice());
    inf.put("kvCacheBytesPerToken", e.kvCacheBytesPerToken());
    inf.put("kvCacheBytesPerSequence", e.kvCacheBytesPerSequence());
    inf.put("maxBatchSize", e.maxBatchSize());
    inf.put("p50LatencySeconds", result.p50LatencySeconds());
    inf.put("p99LatencySeconds", result.p99LatencySeconds());
    inf.put("ttftP50Seconds", result.ttftP50Seconds());
    inf.put("ttftP99Seconds", result.ttftP99Seconds());
    inf.put("latencyModel", result.latencyModel());
    inf.put("capacityRequestsPerSecond", result.capacityPerSecond());
    inf.put("devicesNeeded", result.devicesNeeded());
    root.set("findings", Finding.toJson(result.findings()));
    return root;
  }
}
