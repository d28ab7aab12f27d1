package io.hyperframes;

import io.hyperframes.catalog.Catalog;
import io.hyperframes.inference.InferenceRequest;
import io.hyperframes.inference.InferenceResult;
import io.hyperframes.inference.Serving;
import java.time.Duration;

/**
 * A serving estimate ({@link HyperFrames#serve()}): memory, prefill and decode times, latency
 * percentiles under an arrival rate, devices an SLO needs.
 *
 * <pre>{@code
 * InferenceResult s = HyperFrames.serve()
 *     .model("llama2-7b").accelerator("h100-sxm-80gb").devices(1)
 *     .precision("fp16").batch(32).prompt(1024).output(256)
 *     .arrivalRate(10).latencySlo(Duration.ofSeconds(2), 99)
 *     .run();
 * }</pre>
 */
public final class ServeBuilder extends JobBuilder<ServeBuilder> {

  ServeBuilder(Tree tree, Catalog catalog, Models models) {
    super(tree, catalog, models);
  }

  static ServeBuilder empty() {
    return new ServeBuilder(Tree.empty().with("workload.type", "inference"), null, null);
  }

  @Override
  ServeBuilder copy(Tree t, Catalog c, Models m) {
    return new ServeBuilder(t, c, m);
  }

  /** {@code workload.precision}: weight format ("fp16", "bf16", "fp8", "int8", "int4"). */
  public ServeBuilder precision(String weights) {
    return copy(tree.with("workload.precision", weights), catalog, models);
  }

  /** {@code workload.kvCachePrecision} (default: the weight format's activation format). */
  public ServeBuilder kvCachePrecision(String format) {
    return copy(tree.with("workload.kvCachePrecision", format), catalog, models);
  }

  /** {@code workload.batchSize}: concurrent sequences. */
  public ServeBuilder batch(int sequences) {
    return copy(tree.with("workload.batchSize", sequences), catalog, models);
  }

  /** {@code workload.promptTokens}. */
  public ServeBuilder prompt(int tokens) {
    return copy(tree.with("workload.promptTokens", tokens), catalog, models);
  }

  /** {@code workload.outputTokens}. */
  public ServeBuilder output(int tokens) {
    return copy(tree.with("workload.outputTokens", tokens), catalog, models);
  }

  /** {@code workload.arrivalRatePerSecond}: Poisson arrivals, for latency under load. */
  public ServeBuilder arrivalRate(double requestsPerSecond) {
    return copy(tree.with("workload.arrivalRatePerSecond", requestsPerSecond), catalog, models);
  }

  /**
   * {@code workload.latencySlo}: time to first token at a percentile (any value in (0, 100),
   * checked at exactly that percentile of the simulated distribution).
   */
  public ServeBuilder latencySlo(Duration timeToFirstToken, double percentile) {
    if (timeToFirstToken == null) {
      throw new IllegalArgumentException("workload.latencySlo.ttftSeconds: must be given");
    }
    return copy(tree.with("workload.latencySlo.ttftSeconds", timeToFirstToken.toNanos() / 1e9)
        .with("workload.latencySlo.percentile", percentile), catalog, models);
  }

  /**
   * {@code workload.latencySlo.tpotSeconds}: time per output token, of the median request
   * (see {@link #tpotPercentile}).
   */
  public ServeBuilder timePerOutputToken(Duration perToken) {
    if (perToken == null) {
      throw new IllegalArgumentException("workload.latencySlo.tpotSeconds: must be given");
    }
    return copy(tree.with("workload.latencySlo.tpotSeconds", perToken.toNanos() / 1e9), catalog,
        models);
  }

  /**
   * {@code workload.latencySlo.tpotPercentile}: in mode slo, the percentile of the requests'
   * times per output token that the {@link #timePerOutputToken} target bounds (MLPerf's server
   * rules bound the 99th); by default the median request's.
   */
  public ServeBuilder tpotPercentile(double percentile) {
    return copy(tree.with("workload.latencySlo.tpotPercentile", percentile), catalog, models);
  }

  /** {@code workload.concurrency}: sequences in flight, in place of a batch size. */
  public ServeBuilder concurrency(int sequences) {
    return copy(tree.with("workload.concurrency", sequences), catalog, models);
  }

  /** {@code workload.blockTokens}: tokens per KV-cache block (paged attention, default 16). */
  public ServeBuilder blockTokens(int tokens) {
    return copy(tree.with("workload.blockTokens", tokens), catalog, models);
  }

  /**
   * {@code workload.decodeAttention}: how the engine's decode-attention kernel reads a
   * grouped-query model's KV cache, {@code "grouped"} (default: once per KV head, TensorRT-LLM's
   * XQA, FlashInfer) or {@code "per-head"} (once per query head: a masked multi-head attention
   * kernel with one thread block per query head).
   */
  public ServeBuilder decodeAttention(String kernel) {
    return copy(tree.with("workload.decodeAttention", kernel), catalog, models);
  }

  /**
   * {@code workload.attention}: how the prefill computes attention, {@code "flash"} (default: a
   * fused context kernel whose scores stay on chip, TensorRT-LLM's context FMHA, LMDeploy's
   * TurboMind) or {@code "standard"} (the scores written to and read from device memory).
   */
  public ServeBuilder attention(String kernel) {
    return copy(tree.with("workload.attention", kernel), catalog, models);
  }

  /**
   * {@code workload.speculative}: speculative decoding, {@code method} {@code "mtp"} (the model's
   * multi-token-prediction module), {@code "eagle"} (an EAGLE head) or {@code "draft"} (a draft
   * model: {@link #draftModel}), with {@code tokens} drafted per step and the probability
   * {@code acceptance} that the model accepts a draft token (an input, never assumed).
   */
  public ServeBuilder speculative(String method, int tokens, double acceptance) {
    return copy(tree.with("workload.speculative.method", method)
        .with("workload.speculative.tokens", tokens)
        .with("workload.speculative.acceptance", acceptance), catalog, models);
  }

  /**
   * {@code workload.prefixCacheHitRate}: the share of each prompt the prefix cache already holds,
   * in [0, 1) (vLLM's automatic prefix caching, SGLang's RadixAttention); prefill computes the
   * rest, in whole KV blocks.
   */
  public ServeBuilder prefixCacheHitRate(double share) {
    return copy(tree.with("workload.prefixCacheHitRate", share), catalog, models);
  }

  /**
   * {@code workload.moeLoadImbalance}: the routed token copies the busiest expert-parallel rank
   * computes and receives over those of uniform routing, in [1, 64] (default 1). It slows a
   * layout whose experts are split over ranks (ep &gt; 1) and nothing else (docs/inference.md,
   * "Expert load imbalance").
   */
  public ServeBuilder moeLoadImbalance(double imbalance) {
    return copy(tree.with("workload.moeLoadImbalance", imbalance), catalog, models);
  }

  /** {@code workload.speculative.draftModel.catalog}: the draft model of method "draft". */
  public ServeBuilder draftModel(String catalogId) {
    return copy(tree.with("workload.speculative.draftModel.catalog", catalogId), catalog,
        models);
  }

  /**
   * {@code workload.mode}: "fixed" (the default: the batch given), "capacity" (the throughput
   * the replicas sustain when requests always wait; {@link InferenceResult#capacity()}) or "slo"
   * (the highest Poisson rate whose latencies meet the {@link #latencySlo} and
   * {@link #timePerOutputToken} targets; {@link InferenceResult#slo()}).
   */
  public ServeBuilder mode(String mode) {
    return copy(tree.with("workload.mode", mode), catalog, models);
  }

  /**
   * {@code workload.engine}: the scheduler of capacity mode, and of slo mode's simulated server
   * ("vllm", "sglang", "trtllm"; without it slo mode's server is prefill-first).
   */
  public ServeBuilder engine(String engine) {
    return copy(tree.with("workload.engine", engine), catalog, models);
  }

  /**
   * {@code workload.maxNumSeqs}: running requests at most, the engine's limit (its scheduler's
   * in capacity mode and in slo mode with an engine; in slo mode without one or under a request
   * rate, the simulated server's batch limit, default 256).
   */
  public ServeBuilder maxNumSeqs(int requests) {
    return copy(tree.with("workload.maxNumSeqs", requests), catalog, models);
  }

  /**
   * {@code workload.maxNumTokens}: tokens one iteration computes at most (capacity mode, and slo
   * mode with an engine).
   */
  public ServeBuilder maxNumTokens(int tokens) {
    return copy(tree.with("workload.maxNumTokens", tokens), catalog, models);
  }

  /**
   * {@code workload.memoryFraction}: the engine's memory fraction (capacity mode, and slo mode
   * with an engine).
   */
  public ServeBuilder memoryFraction(double fraction) {
    return copy(tree.with("workload.memoryFraction", fraction), catalog, models);
  }

  /**
   * {@code workload.chunkedPrefill}: whether long prompts are split (capacity mode, and slo mode
   * with an engine).
   */
  public ServeBuilder chunkedPrefill(boolean chunked) {
    return copy(tree.with("workload.chunkedPrefill", chunked), catalog, models);
  }

  /**
   * {@code workload.promptTokens} as a distribution (capacity mode): each length with its
   * weight, in the map's order.
   */
  public ServeBuilder prompts(java.util.Map<Integer, Double> weights) {
    return copy(tree.with("workload.promptTokens", lengths("workload.promptTokens", weights)),
        catalog, models);
  }

  /** {@code workload.outputTokens} as a distribution (capacity mode). */
  public ServeBuilder outputs(java.util.Map<Integer, Double> weights) {
    return copy(tree.with("workload.outputTokens", lengths("workload.outputTokens", weights)),
        catalog, models);
  }

  /**
   * {@code layout.disaggregated}: prompts on a prefill pool of {@code prefillReplicas} replicas
   * of {@code prefillTp} devices, tokens on a decode pool likewise, each pool's routed experts
   * over its {@code ep} ranks (docs/inference.md, "Disaggregated prefill and decode").
   */
  public ServeBuilder disaggregated(int prefillTp, int prefillEp, int prefillReplicas,
      int decodeTp, int decodeEp, int decodeReplicas) {
    String p = "layout.disaggregated.prefill.";
    String d = "layout.disaggregated.decode.";
    return copy(tree.with(p + "tp", prefillTp).with(p + "ep", prefillEp)
        .with(p + "replicas", prefillReplicas).with(d + "tp", decodeTp).with(d + "ep", decodeEp)
        .with(d + "replicas", decodeReplicas), catalog, models);
  }

  /**
   * {@code layout.disaggregated.prefill.twoBatchOverlap} and {@code ...decode.twoBatchOverlap}:
   * each pool's steps as two halves, one's expert exchange behind the other's computation.
   */
  public ServeBuilder twoBatchOverlap(boolean prefill, boolean decode) {
    return copy(tree.with("layout.disaggregated.prefill.twoBatchOverlap", prefill)
        .with("layout.disaggregated.decode.twoBatchOverlap", decode), catalog, models);
  }

  /**
   * {@code workload.promptTokens} and {@code outputTokens} read from a CSV trace (capacity mode):
   * its {@code ContextTokens} and {@code GeneratedTokens} columns, as in the Azure LLM inference
   * traces; a relative path is read from the working directory.
   */
  public ServeBuilder lengthsTrace(String file) {
    if (file == null || file.isBlank()) {
      throw new IllegalArgumentException("workload.promptTokens.trace: must be a file path");
    }
    var json = com.fasterxml.jackson.databind.node.JsonNodeFactory.instance;
    return copy(tree.with("workload.promptTokens", json.objectNode().put("trace", file))
        .with("workload.outputTokens", json.objectNode().put("trace", file)), catalog, models);
  }

  private static com.fasterxml.jackson.databind.node.ArrayNode lengths(String field,
      java.util.Map<Integer, Double> weights) {
    if (weights == null) {
      throw new IllegalArgumentException(field + ": must be given");
    }
    var a = io.hyperframes.json.Json.mapper().createArrayNode();
    weights.forEach((tokens, weight) -> {
      if (tokens == null || weight == null) {
        throw new IllegalArgumentException(field + ": a length or weight is null");
      }
      a.addArray().add(tokens).add(weight);
    });
    return a;
  }

  /** {@code pricing.pricePerDeviceHour}: USD per device-hour of a serving plan. */
  public ServeBuilder pricePerDeviceHour(double usd) {
    return copy(tree.with("pricing.pricePerDeviceHour", usd), catalog, models);
  }

  /** {@code search.alternatives}: runner-up configurations a serving plan returns (0–100). */
  public ServeBuilder alternatives(int count) {
    return copy(tree.with("search.alternatives", count), catalog, models);
  }

  /** {@code constraints.weightFormats}: weight formats a serving plan may choose among. */
  public ServeBuilder weightFormats(String... formats) {
    return copy(tree.with("constraints.weightFormats", array("constraints.weightFormats",
        formats)), catalog, models);
  }

  /** {@code constraints.kvFormats}: KV-cache formats a serving plan may choose among. */
  public ServeBuilder kvFormats(String... formats) {
    return copy(tree.with("constraints.kvFormats", array("constraints.kvFormats", formats)),
        catalog, models);
  }

  private static com.fasterxml.jackson.databind.node.ArrayNode array(String field,
      String... values) {
    if (values == null) {
      throw new IllegalArgumentException(field + ": must be given");
    }
    var a = io.hyperframes.json.Json.mapper().createArrayNode();
    for (String v : values) {
      a.add(v);
    }
    return a;
  }

  /**
   * Plans serving: the fewest devices (tensor parallelism × replicas), formats and batch limit
   * that meet the latency SLO at the arrival rate, the throughput-interactivity front with its
   * band ({@code plan().interval()}, {@code plan().low(x)}, {@code plan().high(x)}), and the
   * disaggregated prefill and decode pools with the fewest devices for the same targets
   * ({@code plan().disaggregated()}, {@code plan().choice()}), every configuration estimated with
   * this builder's models (as {@code hyperframes serve-plan}, or {@code hyperframes plan} with an
   * inference workload).
   *
   * @throws IllegalArgumentException naming the field and the value when the request is wrong
   */
  public io.hyperframes.inference.ServingPlans.Result plan() {
    return io.hyperframes.inference.ServingPlans.plan(tree.json(), catalogOrDefault(),
        modelsOrDefault().inferenceEstimator());
  }

  /**
   * Runs the estimate.
   *
   * @throws IllegalArgumentException naming the field and the value when the request is wrong
   */
  public InferenceResult run() {
    return Serving.evaluate(request(), modelsOrDefault().inferenceEstimator());
  }

  InferenceRequest request() {
    return Serving.fromJson(tree.json(), catalogOrDefault());
  }
}
