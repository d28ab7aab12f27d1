package io.hyperframes.inference;

import static com.google.common.base.Preconditions.checkArgument;

import io.hyperframes.hardware.Checks;
import io.hyperframes.precision.NumberFormat;
import io.hyperframes.workload.Attention;

/**
 * A serving workload.
 *
 * @param weights format the weights are stored in (fp32, fp16, bf16, fp8, nvfp4, int8, int4);
 *     8- and 4-bit integer weights are dequantised to FP16 for the matmuls (weight-only
 *     quantisation); floating formats compute in themselves (NVFP4: FP4 weights and
 *     activations on Blackwell's FP4 tensor cores)
 * @param kvCache format of the KV cache
 * @param batchSize sequences decoded together
 * @param promptTokens tokens per prompt
 * @param outputTokens tokens generated per request
 * @param arrivalRatePerSecond Poisson request rate (0 = no load model)
 * @param ttftSloSeconds time-to-first-token target (0 = none)
 * @param tpotSloSeconds time-per-output-token target (0 = none)
 * @param sloPercentile percentile the targets apply to, in (0, 100)
 * @param blockTokens paged KV-cache block size in tokens (vLLM default 16)
 * @param decodeAttention how the decode-attention kernel reads a grouped-query model's KV cache
 * @param attention how the prefill computes attention: {@link Attention#FLASH} (a fused context
 *     kernel, the serving engines' default) or {@link Attention#STANDARD} (materialised scores)
 * @param speculative speculative decoding ({@code workload.speculative}), or null for none
 * @param prefixCacheHitRate share of each prompt found in the prefix cache, in [0, 1)
 *     ({@code workload.prefixCacheHitRate}; {@link #cachedPromptTokens})
 * @param moeLoadImbalance the routed token copies the busiest expert-parallel rank computes and
 *     receives over those of uniform routing, in [1, 64] ({@code workload.moeLoadImbalance}; 1:
 *     uniform routing, the default): a measured skew of the router's expert load, which a
 *     serving step of experts spread over ranks waits for (docs/inference.md, "Expert load
 *     imbalance")
 * @param maxNumSeqs the most sequences a simulated server runs at once under a request rate
 *     ({@code workload.maxNumSeqs} in {@code workload.mode} slo or with
 *     {@code workload.arrivalRatePerSecond}: the engine's limit, vLLM's {@code --max-num-seqs},
 *     TensorRT-LLM's {@code max_batch_size}), at most {@value #MAX_NUM_SEQS}; 0, the default,
 *     leaves it at 256, vLLM's default. The KV cache bounds it in either case (docs/inference.md,
 *     "SLO mode")
 * @param tpotSloPercentile the percentile of the requests' times per output token that
 *     {@code tpotSloSeconds} bounds, in (0, 100) ({@code workload.latencySlo.tpotPercentile},
 *     mode slo; MLPerf's server rules bound the 99th); 0, the default: the median request's, its
 *     median latency less its median time to first token over its tokens after the first
 */
public record InferenceWorkload(NumberFormat weights, NumberFormat kvCache, int batchSize,
    int promptTokens, int outputTokens, double arrivalRatePerSecond, double ttftSloSeconds,
    double tpotSloSeconds, double sloPercentile, int blockTokens,
    DecodeAttention decodeAttention, Attention attention, Speculative speculative,
    double prefixCacheHitRate, double moeLoadImbalance, int maxNumSeqs,
    double tpotSloPercentile) {

  /** The largest {@code maxNumSeqs}: a simulated server tabulates its step times up to it. */
  public static final int MAX_NUM_SEQS = 1 << 14;

  public InferenceWorkload {
    checkArgument(weights != null, "workload.precision: must be given");
    checkArgument(kvCache != null, "workload.kvCachePrecision: must be given");
    Checks.positive("workload.batchSize", batchSize);
    Checks.positive("workload.promptTokens", promptTokens);
    Checks.positive("workload.outputTokens", outputTokens);
    checkArgument(batchSize <= 1 << 20, "workload.batchSize: must be <= 1048576, got %s",
        batchSize);
    checkArgument((long) promptTokens + outputTokens <= 1 << 24,
        "workload.promptTokens: prompt + output must be <= 16777216 tokens, got %s",
        (long) promptTokens + outputTokens);
    Checks.nonNegative("workload.arrivalRatePerSecond", arrivalRatePerSecond);
    Checks.nonNegative("workload.latencySlo.ttftSeconds", ttftSloSeconds);
    Checks.nonNegative("workload.latencySlo.tpotSeconds", tpotSloSeconds);
    checkArgument(sloPercentile > 0 && sloPercentile < 100,
        "workload.latencySlo.percentile: must be in (0, 100), got %s", sloPercentile);
    Checks.positive("workload.blockTokens", blockTokens);
    checkArgument(decodeAttention != null, "workload.decodeAttention: must be given");
    checkArgument(attention != null, "workload.attention: must be given");
    checkArgument(Double.isFinite(prefixCacheHitRate) && prefixCacheHitRate >= 0
        && prefixCacheHitRate < 1, "workload.prefixCacheHitRate: must be in [0, 1), got %s",
        prefixCacheHitRate);
    checkArgument(Double.isFinite(moeLoadImbalance) && moeLoadImbalance >= 1
        && moeLoadImbalance <= 64, "workload.moeLoadImbalance: must be in [1, 64] (the busiest"
        + " expert-parallel rank's routed tokens over the mean), got %s", moeLoadImbalance);
    checkArgument(maxNumSeqs >= 0 && maxNumSeqs <= MAX_NUM_SEQS, "workload.maxNumSeqs: must be"
        + " in [1, %s] (0: the default limit), got %s", MAX_NUM_SEQS, maxNumSeqs);
    checkArgument(tpotSloPercentile == 0 || (tpotSloPercentile > 0 && tpotSloPercentile < 100),
        "workload.latencySlo.tpotPercentile: must be in (0, 100), got %s", tpotSloPercentile);
  }

  /** A workload whose simulated servers run the default batch limit. */
  public InferenceWorkload(NumberFormat weights, NumberFormat kvCache, int batchSize,
      int promptTokens, int outputTokens, double arrivalRatePerSecond, double ttftSloSeconds,
      double tpotSloSeconds, double sloPercentile, int blockTokens,
      DecodeAttention decodeAttention, Attention attention, Speculative speculative,
      double prefixCacheHitRate, double moeLoadImbalance) {
    this(weights, kvCache, batchSize, promptTokens, outputTokens, arrivalRatePerSecond,
        ttftSloSeconds, tpotSloSeconds, sloPercentile, blockTokens, decodeAttention, attention,
        speculative, prefixCacheHitRate, moeLoadImbalance, 0, 0.0);
  }

  /** A workload with uniform expert routing. */
  public InferenceWorkload(NumberFormat weights, NumberFormat kvCache, int batchSize,
      int promptTokens, int outputTokens, double arrivalRatePerSecond, double ttftSloSeconds,
      double tpotSloSeconds, double sloPercentile, int blockTokens,
      DecodeAttention decodeAttention, Attention attention, Speculative speculative,
      double prefixCacheHitRate) {
    this(weights, kvCache, batchSize, promptTokens, outputTokens, arrivalRatePerSecond,
        ttftSloSeconds, tpotSloSeconds, sloPercentile, blockTokens, decodeAttention, attention,
        speculative, prefixCacheHitRate, 1.0);
  }

  /** A workload without a prefix cache. */
  public InferenceWorkload(NumberFormat weights, NumberFormat kvCache, int batchSize,
      int promptTokens, int outputTokens, double arrivalRatePerSecond, double ttftSloSeconds,
      double tpotSloSeconds, double sloPercentile, int blockTokens,
      DecodeAttention decodeAttention, Attention attention, Speculative speculative) {
    this(weights, kvCache, batchSize, promptTokens, outputTokens, arrivalRatePerSecond,
        ttftSloSeconds, tpotSloSeconds, sloPercentile, blockTokens, decodeAttention, attention,
        speculative, 0.0);
  }

  /** Whether a TTFT and a TPOT meet the latency targets (a target not given is met). */
  boolean meetsTargets(double ttftSeconds, double tpotSeconds) {
    return (ttftSloSeconds == 0 || ttftSeconds <= ttftSloSeconds)
        && (tpotSloSeconds == 0 || tpotSeconds <= tpotSloSeconds);
  }

  /**
   * Prompt tokens whose keys and values the prefix cache already holds, so that prefill skips
   * them: the hit rate's share of the prompt, at most all but its last token, in whole KV blocks
   * (vLLM's automatic prefix caching reuses full blocks only, and "when all tokens hit the cache,
   * we must recompute the last token to obtain logits": {@code max_cache_hit_length =
   * request.num_tokens - 1}; vllm-project/vllm {@code vllm/v1/core/kv_cache_manager.py},
   * {@code get_computed_blocks}, at 003df296).
   */
  public int cachedPromptTokens() {
    return cachedPromptTokens(promptTokens);
  }

  /** {@link #cachedPromptTokens()} of a prompt of {@code prompt} tokens (a length distribution's). */
  public int cachedPromptTokens(int prompt) {
    double hit = Math.min(prefixCacheHitRate * prompt, prompt - 1.0);
    return (int) (Math.floor(hit / blockTokens) * blockTokens);
  }

  /** A workload without speculative decoding. */
  public InferenceWorkload(NumberFormat weights, NumberFormat kvCache, int batchSize,
      int promptTokens, int outputTokens, double arrivalRatePerSecond, double ttftSloSeconds,
      double tpotSloSeconds, double sloPercentile, int blockTokens,
      DecodeAttention decodeAttention, Attention attention) {
    this(weights, kvCache, batchSize, promptTokens, outputTokens, arrivalRatePerSecond,
        ttftSloSeconds, tpotSloSeconds, sloPercentile, blockTokens, decodeAttention, attention,
        null);
  }

  /** A workload whose prefill runs a fused attention kernel ({@link Attention#FLASH}). */
  public InferenceWorkload(NumberFormat weights, NumberFormat kvCache, int batchSize,
      int promptTokens, int outputTokens, double arrivalRatePerSecond, double ttftSloSeconds,
      double tpotSloSeconds, double sloPercentile, int blockTokens,
      DecodeAttention decodeAttention) {
    this(weights, kvCache, batchSize, promptTokens, outputTokens, arrivalRatePerSecond,
        ttftSloSeconds, tpotSloSeconds, sloPercentile, blockTokens, decodeAttention,
        Attention.FLASH);
  }

  /**
   * A workload whose decode attention is {@link DecodeAttention#GROUPED} and whose prefill runs a
   * fused attention kernel.
   */
  public InferenceWorkload(NumberFormat weights, NumberFormat kvCache, int batchSize,
      int promptTokens, int outputTokens, double arrivalRatePerSecond, double ttftSloSeconds,
      double tpotSloSeconds, double sloPercentile, int blockTokens) {
    this(weights, kvCache, batchSize, promptTokens, outputTokens, arrivalRatePerSecond,
        ttftSloSeconds, tpotSloSeconds, sloPercentile, blockTokens, DecodeAttention.GROUPED);
  }

  /** This workload with {@code sequences} per batch. */
  public InferenceWorkload withBatchSize(int sequences) {
    return new InferenceWorkload(weights, kvCache, sequences, promptTokens, outputTokens,
        arrivalRatePerSecond, ttftSloSeconds, tpotSloSeconds, sloPercentile, blockTokens,
        decodeAttention, attention, speculative, prefixCacheHitRate, moeLoadImbalance,
        maxNumSeqs, tpotSloPercentile);
  }

  /** This workload with prompts of {@code prompt} and outputs of {@code output} tokens. */
  public InferenceWorkload withLengths(int prompt, int output) {
    return new InferenceWorkload(weights, kvCache, batchSize, prompt, output,
        arrivalRatePerSecond, ttftSloSeconds, tpotSloSeconds, sloPercentile, blockTokens,
        decodeAttention, attention, speculative, prefixCacheHitRate, moeLoadImbalance,
        maxNumSeqs, tpotSloPercentile);
  }

  /** This workload with other weight and KV-cache formats. */
  public InferenceWorkload withFormats(NumberFormat weightFormat, NumberFormat kvFormat) {
    return new InferenceWorkload(weightFormat, kvFormat, batchSize, promptTokens, outputTokens,
        arrivalRatePerSecond, ttftSloSeconds, tpotSloSeconds, sloPercentile, blockTokens,
        decodeAttention, attention, speculative, prefixCacheHitRate, moeLoadImbalance,
        maxNumSeqs, tpotSloPercentile);
  }

  /** This workload with speculative decoding {@code s} (null: none). */
  public InferenceWorkload withSpeculative(Speculative s) {
    return new InferenceWorkload(weights, kvCache, batchSize, promptTokens, outputTokens,
        arrivalRatePerSecond, ttftSloSeconds, tpotSloSeconds, sloPercentile, blockTokens,
        decodeAttention, attention, s, prefixCacheHitRate, moeLoadImbalance, maxNumSeqs,
        tpotSloPercentile);
  }

  /** This workload with a prefix-cache hit rate of {@code rate}. */
  public InferenceWorkload withPrefixCacheHitRate(double rate) {
    return new InferenceWorkload(weights, kvCache, batchSize, promptTokens, outputTokens,
        arrivalRatePerSecond, ttftSloSeconds, tpotSloSeconds, sloPercentile, blockTokens,
        decodeAttention, attention, speculative, rate, moeLoadImbalance, maxNumSeqs,
        tpotSloPercentile);
  }

  /** This workload with the busiest expert-parallel rank at {@code imbalance} of the mean. */
  public InferenceWorkload withMoeLoadImbalance(double imbalance) {
    return new InferenceWorkload(weights, kvCache, batchSize, promptTokens, outputTokens,
        arrivalRatePerSecond, ttftSloSeconds, tpotSloSeconds, sloPercentile, blockTokens,
        decodeAttention, attention, speculative, prefixCacheHitRate, imbalance, maxNumSeqs,
        tpotSloPercentile);
  }

  /** The format the matmuls run in: FP16 for integer (weight-only) formats. */
  public NumberFormat compute() {
    return weights.isFloating() ? (weights == NumberFormat.FP8_E5M2 ? NumberFormat.FP8_E4M3
        : weights) : NumberFormat.FP16;
  }
}
