package io.hyperframes.inference;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.hyperframes.catalog.ModelDocuments;
import io.hyperframes.diagnose.Finding;
import io.hyperframes.diagnose.Severity;
import io.hyperframes.catalog.Catalog;
import io.hyperframes.hardware.Checks;
import io.hyperframes.hardware.Cluster;
import io.hyperframes.request.Documents;
import io.hyperframes.json.Json;
import io.hyperframes.model.ModelSpec;
import io.hyperframes.model.TransformerSpec;
import io.hyperframes.precision.NumberFormat;
import io.hyperframes.trace.Csv;
import io.hyperframes.workload.Attention;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Serving requests: parsing ({@code workload.type = "inference"}), the estimate with its
 * percentiles, the devices an SLO needs, findings, and the JSON form.
 */
public final class Serving {
  private Serving() {}

  /** Whether a parsed request document is an inference request. */
  public static boolean isInference(JsonNode root) {
    JsonNode w = root.get("workload");
    return w != null && w.isObject() && w.has("type") && w.get("type").isTextual()
        && w.get("type").asText().equalsIgnoreCase("inference");
  }

  /** Parses an inference request. */
  public static InferenceRequest parse(String json, Catalog catalog) {
    return fromJson(Json.parseObject("request", json), catalog);
  }

  /** Builds an inference request from parsed JSON. */
  public static InferenceRequest fromJson(JsonNode root, Catalog catalog) {
    Documents.Serve doc = Json.bind(root, Documents.Serve.class, "");
    return request(doc.model(), doc.cluster(), doc.workload(), doc.layout(), catalog);
  }

  static InferenceRequest request(ModelDocuments.Model modelDoc, Documents.Cluster clusterDoc,
      Documents.Inference w, Documents.ServingLayout l, Catalog catalog) {
    ModelSpec model = Json.required("model", modelDoc).resolve(catalog);
    Cluster cluster = Json.required("cluster", clusterDoc).resolve(catalog);
    if (!(model instanceof TransformerSpec m)) {
      throw new IllegalArgumentException("model: inference needs an architecture (layers,"
          + " hidden, heads ...), not only a parameter count");
    }
    Json.required("workload", w);
    if (w.type() != null && !w.type().equalsIgnoreCase("inference")) {
      throw new IllegalArgumentException("workload.type: '" + w.type()
          + "' is not an inference workload (serving needs \"inference\")");
    }
    NumberFormat weights = format("workload.precision",
        Json.required("workload.precision", w.precision()));
    NumberFormat kv = w.kvCachePrecision() != null
        ? format("workload.kvCachePrecision", w.kvCachePrecision())
        : weights.isFloating() && weights.bytes() >= 2 ? weights : NumberFormat.FP16;
    String mode = mode(w.mode());
    boolean capacityMode = mode.equals("capacity");
    boolean sloMode = mode.equals("slo");
    // An engine's scheduler runs the server: capacity mode, or slo mode with workload.engine.
    boolean scheduled = capacityMode || (sloMode && w.engine() != null);
    if (w.batchSize() == null && w.concurrency() == null && !capacityMode && !sloMode) {
      throw new IllegalArgumentException("workload.batchSize: missing required field (or give"
          + " workload.concurrency): the batch of the fixed estimate. Under"
          + " workload.arrivalRatePerSecond the simulated server batches up to"
          + " workload.maxNumSeqs (default " + MAX_SIMULATED_BATCH + "), the limit serve-plan"
          + " searches, and this batch only sets the fixed estimate printed beside it"
          + " (examples/serve-70b-slo.json gives 1); workload.mode capacity or slo needs none");
    }
    int b = w.batchSize() != null ? Checks.positive("workload.batchSize", w.batchSize())
        : w.concurrency() != null ? Checks.positive("workload.concurrency", w.concurrency()) : 1;
    // Prompts and outputs from one trace read it once.
    java.util.Map<java.nio.file.Path, Csv> traces = new java.util.HashMap<>();
    // Distributions: for an engine's scheduler.
    LengthDistribution prompts = LengthFields.lengths("workload.promptTokens",
        w.promptTokens(), scheduled, traces);
    LengthDistribution outputs = LengthFields.lengths("workload.outputTokens",
        w.outputTokens(), scheduled, traces);
    // The fixed estimate beside a capacity one runs the mean lengths.
    int prompt = (int) Math.max(1, Math.round(prompts.mean()));
    int output = (int) Math.max(1, Math.round(outputs.mean()));
    checkModeFields(w, mode);
    double arrival = w.arrivalRatePerSecond() == null ? 0
        : Checks.nonNegative("workload.arrivalRatePerSecond", w.arrivalRatePerSecond());
    double ttft = 0;
    double tpot = 0;
    double percentile = 99;
    double tpotPercentile = 0;
    Documents.Slo slo = w.latencySlo();
    if (slo != null) {
      ttft = slo.ttftSeconds() == null ? 0
          : Checks.positive("workload.latencySlo.ttftSeconds", slo.ttftSeconds());
      tpot = slo.tpotSeconds() == null ? 0
          : Checks.positive("workload.latencySlo.tpotSeconds", slo.tpotSeconds());
      percentile = slo.percentile() == null ? 99
          : Checks.finite("workload.latencySlo.percentile", slo.percentile());
      if (slo.tpotPercentile() != null && !sloMode) {
        throw new IllegalArgumentException("workload.latencySlo.tpotPercentile: read in"
            + " workload.mode slo (the simulated requests' TPOT distribution), got "
            + slo.tpotPercentile() + " with mode " + mode);
      }
      tpotPercentile = slo.tpotPercentile() == null ? 0
          : Checks.positive("workload.latencySlo.tpotPercentile", slo.tpotPercentile());
    }
    ServingEngine engine = w.engine() == null ? ServingEngine.VLLM
        : ServingEngine.fromId("workload.engine", w.engine());
    int blockTokens = w.blockTokens() != null ? w.blockTokens()
        : scheduled ? engine.defaultBlockTokens() : 16;
    InferenceWorkload workload = new InferenceWorkload(weights, kv, b, prompt, output, arrival,
        ttft, tpot, percentile, blockTokens,
        w.decodeAttention() == null ? DecodeAttention.GROUPED
            : DecodeAttention.fromId("workload.decodeAttention", w.decodeAttention()),
        w.attention() == null ? Attention.FLASH
            : Attention.fromId("workload.attention", w.attention()),
        speculative(w.speculative(), catalog),
        w.prefixCacheHitRate() == null ? 0.0
            : Checks.finite("workload.prefixCacheHitRate", w.prefixCacheHitRate()),
        w.moeLoadImbalance() == null ? 1.0
            : Checks.finite("workload.moeLoadImbalance", w.moeLoadImbalance()),
        // Capacity mode's request limit is its scheduler's (CapacityWorkload); under a rate
        // it is the simulated server's batch limit.
        w.maxNumSeqs() == null || capacityMode ? 0
            : Checks.positive("workload.maxNumSeqs", w.maxNumSeqs()), tpotPercentile);
    if (l != null && l.disaggregated() != null) {
      return disaggregatedRequest(m, cluster, workload, l, w, capacityMode, sloMode);
    }
    int tp;
    int ep = 1;
    int pp = 1;
    int dp;
    if (l != null) {
      tp = l.tp() == null ? 1 : Checks.positive("layout.tp", l.tp());
      ep = l.ep() == null ? 1 : Checks.positive("layout.ep", l.ep());
      pp = l.pp() == null ? 1 : Checks.positive("layout.pp", l.pp());
      int rest = cluster.devices() / Math.max(1, tp * pp);
      dp = l.dp() == null ? Math.max(1, rest) : Checks.positive("layout.dp", l.dp());
    } else {
      tp = largestTp(m, cluster);
      dp = Math.max(1, cluster.devices() / tp);
    }
    int redundant = l == null || l.redundantExperts() == null ? 0 : l.redundantExperts();
    // The replicas hold the experts and their copies: the served model has E + R slots.
    TransformerSpec served = InferenceRequest.withCopies(m, redundant, ep);
    CapacityWorkload capacity = scheduled
        ? capacityWorkload(w, engine, served, cluster, workload, tp, prompts, outputs) : null;
    if (sloMode && scheduled && (pp > 1 || workload.speculative() != null)) {
      throw new IllegalArgumentException(pp > 1 ? "layout.pp: workload.engine in slo mode"
          + " simulates replicas of one pipeline stage (layout.pp 1), got " + pp
          : "workload.speculative: not simulated with workload.engine in slo mode");
    }
    if (ep > tp && (capacityMode || sloMode)) {
      throw new IllegalArgumentException(String.format(Locale.ROOT, "layout.ep: %s over"
          + " layout.tp %s (experts over ep/tp replicas) is estimated in workload.mode fixed"
          + " (a batch, or a request rate and latency targets) and in layout.disaggregated"
          + " pools; workload.mode %s is not modelled with it", ep, tp, mode));
    }
    boolean overlap = l != null && Boolean.TRUE.equals(l.twoBatchOverlap());
    return new InferenceRequest(served, cluster, workload, tp, ep, pp, dp, capacity, sloMode,
        null, overlap, redundant);
  }

  /** The fields only one mode reads, refused in the others, each named. */
  private static void checkModeFields(Documents.Inference w, String mode) {
    if (w.maxNumSeqs() != null && mode.equals("fixed") && w.arrivalRatePerSecond() == null) {
      throw new IllegalArgumentException("workload.maxNumSeqs: the batch limit of a server"
          + " under load needs workload.arrivalRatePerSecond, or workload.mode slo or capacity"
          + " (got " + w.maxNumSeqs() + " with mode fixed and no rate)");
    }
    if (!mode.equals("capacity")) {
      boolean slo = mode.equals("slo");
      for (Object[] f : new Object[][] {{"engine", w.engine()},
          {"maxNumTokens", w.maxNumTokens()}, {"memoryFraction", w.memoryFraction()},
          {"chunkedPrefill", w.chunkedPrefill()}, {"engineSettings", w.engineSettings()}}) {
        // Slo mode simulates an engine's scheduler with its limits (not trtllm-bench's picks).
        if (f[1] != null && !(slo && w.engine() != null && !f[0].equals("engineSettings"))) {
          throw new IllegalArgumentException("workload." + f[0] + ": needs workload.mode"
              + " capacity" + (slo && !f[0].equals("engineSettings") ? ", or workload.engine in"
              + " mode slo" : "") + " (got " + f[1] + " with mode " + mode + ")");
        }
      }
    } else if (w.arrivalRatePerSecond() != null) {
      throw new IllegalArgumentException("workload.arrivalRatePerSecond: capacity mode finds the"
          + " highest sustained rate; leave the rate out (or use workload.mode fixed), got "
          + w.arrivalRatePerSecond());
    }
    if (mode.equals("slo") && w.arrivalRatePerSecond() != null) {
      throw new IllegalArgumentException("workload.arrivalRatePerSecond: slo mode finds the"
          + " highest rate that meets workload.latencySlo; leave the rate out (or use"
          + " workload.mode fixed), got " + w.arrivalRatePerSecond());
    }
  }

  /** Capacity mode's scheduler settings: the request's, else the engine's defaults. */
  private static CapacityWorkload capacityWorkload(Documents.Inference w, ServingEngine engine,
      TransformerSpec m, Cluster cluster, InferenceWorkload workload, int tp,
      LengthDistribution prompts, LengthDistribution outputs) {
    boolean chunked = w.chunkedPrefill() != null ? w.chunkedPrefill() : engine.chunksPrefill();
    int seqs = w.maxNumSeqs() != null ? Checks.positive("workload.maxNumSeqs", w.maxNumSeqs())
        : engine.defaultMaxNumSeqs(cluster.accelerator());
    int budget = w.maxNumTokens() != null
        ? Checks.positive("workload.maxNumTokens", w.maxNumTokens())
        : engine.defaultMaxNumTokens(cluster.accelerator());
    double fraction = w.memoryFraction() != null ? memoryFraction(w.memoryFraction())
        : engine.defaultMemoryFraction(cluster.accelerator(), tp, budget);
    if (benchSettings(w.engineSettings(), engine, w)) {
      int[] bench = ServingEngine.trtllmBenchSettings(cluster.accelerator(), tp,
          InferenceEstimator.kvBytesPerTokenPerDevice(m, workload, 1),
          m.parameters() * workload.weights().bytes(), prompts.mean(), outputs.mean(),
          prompts.max(), fraction, chunked);
      seqs = bench[0];
      budget = bench[1];
    }
    return new CapacityWorkload(engine, seqs, budget, fraction, chunked, prompts, outputs);
  }

  /** A request with {@code layout.disaggregated}: its pools, each field named. */
  private static InferenceRequest disaggregatedRequest(TransformerSpec m, Cluster cluster,
      InferenceWorkload workload, Documents.ServingLayout l, Documents.Inference w,
      boolean capacityMode, boolean sloMode) {
    for (Object[] f : new Object[][] {{"tp", l.tp()}, {"ep", l.ep()}, {"pp", l.pp()},
        {"dp", l.dp()}, {"twoBatchOverlap", l.twoBatchOverlap()},
        {"redundantExperts", l.redundantExperts()}}) {
      if (f[1] != null) {
        throw new IllegalArgumentException("layout." + f[0] + ": give it per pool in"
            + " layout.disaggregated (prefill and decode), not beside it (got " + f[1] + ")");
      }
    }
    if (capacityMode || sloMode) {
      throw new IllegalArgumentException("workload.mode: layout.disaggregated is estimated in"
          + " mode fixed (its batches are set by the layout, memory and workload.latencySlo),"
          + " got " + (capacityMode ? "capacity" : "slo"));
    }
    if (w.arrivalRatePerSecond() != null) {
      throw new IllegalArgumentException("workload.arrivalRatePerSecond: layout.disaggregated"
          + " gives the rate the pools sustain; a load on them is not simulated, got "
          + w.arrivalRatePerSecond());
    }
    Documents.Disaggregated d = l.disaggregated();
    Disaggregation pools = new Disaggregation(
        pool("layout.disaggregated.prefill", d.prefill()),
        pool("layout.disaggregated.decode", d.decode()));
    return InferenceRequest.disaggregated(m, cluster, workload, pools);
  }

  private static Disaggregation.Pool pool(String field, Documents.ServingPool p) {
    if (p == null) {
      throw new IllegalArgumentException(field + ": missing required field (tp, ep, replicas,"
          + " batch, twoBatchOverlap, redundantExperts)");
    }
    int tp = p.tp() == null ? 1 : Checks.positive(field + ".tp", p.tp());
    int ep = p.ep() == null ? 1 : Checks.positive(field + ".ep", p.ep());
    int replicas = Checks.positive(field + ".replicas",
        Json.required(field + ".replicas", p.replicas()));
    int batch = p.batch() == null ? 0 : Checks.positive(field + ".batch", p.batch());
    int redundant = p.redundantExperts() == null ? 0 : p.redundantExperts();
    if (redundant < 0) {
      throw new IllegalArgumentException(field + ".redundantExperts: must be >= 0, got "
          + redundant);
    }
    return new Disaggregation.Pool(tp, ep, replicas, batch,
        Boolean.TRUE.equals(p.twoBatchOverlap()), redundant);
  }

  /**
   * {@code workload.engineSettings}: "defaults" (the engine's, or the fields given) or
   * "trtllm-bench" (the limits {@code trtllm-bench throughput} picks; engine trtllm, without
   * maxNumSeqs or maxNumTokens).
   */
  private static boolean benchSettings(String value, ServingEngine engine,
      Documents.Inference w) {
    if (value == null || value.trim().equalsIgnoreCase("defaults")) {
      return false;
    }
    if (!value.trim().equalsIgnoreCase("trtllm-bench")) {
      throw new IllegalArgumentException("workload.engineSettings: unknown settings '" + value
          + "' (defaults, trtllm-bench)");
    }
    if (engine != ServingEngine.TRTLLM) {
      throw new IllegalArgumentException("workload.engineSettings: trtllm-bench needs"
          + " workload.engine trtllm, got " + engine.id());
    }
    if (w.maxNumSeqs() != null || w.maxNumTokens() != null) {
      throw new IllegalArgumentException("workload.engineSettings: trtllm-bench picks"
          + " maxNumSeqs and maxNumTokens itself; leave them out");
    }
    return true;
  }

  private static double memoryFraction(double value) {
    Checks.finite("workload.memoryFraction", value);
    if (!(value > 0 && value <= 1)) {
      throw new IllegalArgumentException("workload.memoryFraction: must be in (0, 1], got "
          + value);
    }
    return value;
  }

  /** {@code workload.mode}: "fixed" (the default), "capacity" or "slo". */
  private static String mode(String value) {
    if (value == null) {
      return "fixed";
    }
    String mode = value.trim().toLowerCase(Locale.ROOT);
    return switch (mode) {
      case "fixed", "capacity", "slo" -> mode;
      default -> throw new IllegalArgumentException("workload.mode: unknown mode '" + value
          + "' (fixed, capacity, slo)");
    };
  }

  /** {@code workload.speculative}, each missing or bad field named; null when absent. */
  private static Speculative speculative(Documents.Speculation s, Catalog catalog) {
    if (s == null) {
      return null;
    }
    Speculative.Method method = Speculative.Method.fromId("workload.speculative.method",
        Json.required("workload.speculative.method", s.method()));
    int tokens = Json.required("workload.speculative.tokens", s.tokens());
    double acceptance = Checks.finite("workload.speculative.acceptance",
        Json.required("workload.speculative.acceptance", s.acceptance()));
    TransformerSpec draft = null;
    if (s.draftModel() != null) {
      ModelSpec d = s.draftModel().resolve(catalog);
      if (!(d instanceof TransformerSpec t)) {
        throw new IllegalArgumentException("workload.speculative.draftModel: a draft needs an"
            + " architecture (layers, hidden, heads ...), not only a parameter count");
      }
      draft = t;
    }
    return new Speculative(method, tokens, acceptance, draft);
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
              + " (fp32, fp16, bf16, fp8, nvfp4, int8, int4)");
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
   * arrival rate spread over the replicas, from the analytical cluster model inside its
   * validated domain ({@link ServingLoad#analyticalCovers}), the continuous-batching simulation
   * outside); the devices the SLO needs.
   */
  public static InferenceResult evaluate(InferenceRequest r) {
    return evaluate(r, InferenceEstimator.analytical());
  }

  /** As {@link #evaluate(InferenceRequest)} with the given estimator (a user's models). */
  public static InferenceResult evaluate(InferenceRequest r, InferenceEstimator estimator) {
    if (r == null || estimator == null) {
      throw new IllegalArgumentException("request: request and estimator must be given");
    }
    if (r.disaggregated() != null) {
      return evaluateDisaggregated(r, estimator);
    }
    InferenceEstimate e = estimator.estimate(r.model(), r.cluster(), r.workload(), r.tp(), r.ep(),
        r.pp(), r.replicas(), r.twoBatchOverlap());
    InferenceWorkload w = r.workload();
    double p50 = e.totalSeconds();
    double p99 = p50;
    double ttft50 = e.ttftSeconds();
    double ttft99 = ttft50;
    double capacity = 0;
    String latencyModel = "unloaded";
    if (w.arrivalRatePerSecond() > 0) {
      // A replica whose experts span ep/tp replicas is queued as a server of its own, at the
      // step times of its group with every replica at the same batch (docs/inference.md). A
      // replica of pp pipeline stages keeps pp batches in flight, one per stage, each a server
      // of its own at the whole pipeline's step times (ServingLoads.loadToFit).
      Cluster group = r.cluster().withDevices(r.tp() * r.pp()
          * Disaggregation.replicasPerGroup(r.tp(), r.ep()));
      ServingLoad load = ServingLoads.loadToFit(estimator, r.model(), group, w, r.tp(), r.ep(),
          r.pp(), r.twoBatchOverlap());
      int servers = r.replicas() * r.pp();
      capacity = load.capacityPerSecond() * servers;
      double perReplica = w.arrivalRatePerSecond() / servers;
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
      e = e.infeasible(String.format(Locale.ROOT, "load: %.3g requests/s exceeds the %.3g"
          + " requests/s the replicas sustain; queues grow without bound (the percentiles are"
          + " those of a finite simulated run)", w.arrivalRatePerSecond(), capacity));
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
    CapacityEstimate atCapacity = r.capacity() == null || r.slo() ? null
        : Capacity.estimate(estimator, r, r.capacity());
    SloEstimate underSlo = r.slo() && e.feasible() ? SloSearch.estimate(estimator, r) : null;
    return new InferenceResult(e, p50, p99, ttft50, ttft99, capacity, needed, findings,
        latencyModel, atCapacity, underSlo, null, r.redundantExperts());
  }

  /**
   * A disaggregated request ({@link Disaggregated}): the result's estimate is the decode pool's
   * at its batch, with the pair's reasons, and as its prefill the prefill pool's batch with the
   * exposed KV transfer (so that its TTFT is the pair's); its latencies are those of a request
   * without queueing (the pair's TTFT, then the decode pool's TPOT).
   */
  private static InferenceResult evaluateDisaggregated(InferenceRequest r,
      InferenceEstimator estimator) {
    DisaggregatedEstimate d = Disaggregated.estimate(estimator, r);
    InferenceEstimate decode = d.decode().estimate();
    InferenceEstimate e = decode.withReasons(d.feasible(), d.reasons())
        .withPrefillSeconds(d.ttftSeconds() - decode.requestSeconds());
    double total = d.ttftSeconds() + r.workload().outputTokens() * d.decode().tpotSeconds();
    return new InferenceResult(e, total, total, d.ttftSeconds(), d.ttftSeconds(), 0,
        r.cluster().devices(), findings(e, r), "unloaded", null, null, d);
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
      if (!estimator.estimate(m, replica, w.withBatchSize(1), tp, 1, 1).feasible()) {
        continue;
      }
      ServingLoad load = ServingLoads.load(estimator, m, replica, w, tp, 1);
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
    return w.meetsTargets(q.ttftAt(w.sloPercentile()), SloSearch.tpot(q, w));
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
    // A mixture of experts reads the experts its batch touches, not all it holds.
    double read = e.weightsBytes();
    TransformerSpec m = r.model();
    if (m.isMoe()) {
      int layersPerStage = (m.layers() + r.pp() - 1) / r.pp();
      double held = layersPerStage * m.moeLayerShare() * m.moe().experts()
          * m.mlpParameters(m.moe().expertFfnHidden()) / r.tp() * r.workload().weights().bytes();
      read = read - held + e.expertWeightBytesPerDecodeStep();
    }
    double weightRead = read / (c.accelerator().memoryBandwidthBytesPerSecond()
        * c.accelerator().memoryEfficiency());
    // A speculative step yields tokensPerDecodeStep tokens: its time is the per-token time
    // times that.
    double step = e.decodeSecondsPerToken() * e.tokensPerDecodeStep();
    // Capacity and slo mode answer at the batch the KV cache and the scheduler allow, so advice
    // drawn from the fixed batch (batch more requests per step) would contradict their answer.
    boolean batched = r.capacity() != null || r.slo();
    if (weightRead > 0.5 * step && !batched) {
      out.add(new Finding("bandwidth-bound", Severity.INFO, String.format(Locale.ROOT,
          "decode is bound by memory bandwidth: %.0f %% of a step reads the weights",
          100 * weightRead / step), String.format(Locale.ROOT,
          "%.1f GiB of weights read per step and device at %.0f GB/s", read / (1L << 30),
          c.accelerator().memoryBandwidthBytesPerSecond() / 1e9),
          "batch more requests per step (continuous batching) or quantise the weights"));
    }
    return out;
  }

  /**
   * The JSON form: feasible, reasons, layout, parameters, memory, inference, findings (written by
   * Jackson from {@link ServingJson.Serving}).
   */
  public static ObjectNode toJson(InferenceResult result) {
    if (result == null) {
      throw new IllegalArgumentException("result: must be given");
    }
    return Json.tree(ServingJson.Serving.of(result));
  }
}
