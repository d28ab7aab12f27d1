package io.hyperframes.inference;

import com.google.common.collect.ImmutableList;
import java.util.List;

/**
 * The estimate of one serving configuration. Per-device memory; times in seconds.
 *
 * @param feasible the weights and the batch's KV cache fit
 * @param reasons why not
 * @param tp tensor-parallel size of a replica
 * @param ep expert-parallel size of a replica: the routed experts of a layer split over ep of
 *     its tp ranks (1: every expert tensor-parallel over all tp)
 * @param pp pipeline stages of a replica
 * @param replicas data-parallel replicas
 * @param parameters parameters of the model as served: with the copies of redundant experts
 *     where the layout holds them
 * @param weightsBytes weights per device
 * @param kvCacheBytes KV cache of the batch at full length, per device (paged blocks)
 * @param activationsBytes prefill working set per device
 * @param otherBytes runtime reserve and logits buffer per device
 * @param prefillSeconds prompt processing of the batch
 * @param decodeSecondsPerToken one decode step of the batch at the mean context, per token it
 *     yields (speculative decoding: see {@code tokensPerDecodeStep})
 * @param requestSeconds the fixed part of a request's time to first token outside the model's
 *     kernels (scheduling, sampling, host transfers; {@code KernelEfficiency#servingRequestSeconds})
 * @param kvCacheBytesPerToken KV cache per token of the whole model (2·layers·kvHeads·headDim·bytes; latent attention: layers·(kvLoraRank + qkRopeHeadDim)·bytes)
 * @param kvCacheBytesPerSequence KV cache of one sequence of prompt + output tokens, whole model,
 *     rounded up to paged blocks
 * @param maxBatchSize most sequences of this length whose KV cache fits next to the weights
 * @param devices devices of all replicas
 * @param outputTokens tokens generated per request
 * @param batchSize sequences per batch
 * @param expertWeightBytesPerDecodeStep routed-expert weights one decode step of the batch reads
 *     on the busiest device: the experts its tokens touch in every MoE layer of the stage (0 for
 *     a dense model); with speculative decoding the verification's γ + 1 tokens per sequence
 * @param speculative the speculative decoding estimated ({@code workload.speculative}), or
 *     null; {@code decodeSecondsPerToken} is then a draft-and-verify step divided by the tokens
 *     it yields ({@link #tokensPerDecodeStep})
 * @param twoBatchOverlap whether each step ran its batch as two halves, one's expert exchange
 *     behind the other's computation (only where the experts span replicas, ep &gt; tp)
 */
public record InferenceEstimate(boolean feasible, List<String> reasons, int tp, int ep, int pp,
    int replicas, double parameters, double weightsBytes, double kvCacheBytes,
    double activationsBytes, double otherBytes, double prefillSeconds,
    double decodeSecondsPerToken, double requestSeconds, double kvCacheBytesPerToken, double kvCacheBytesPerSequence,
    long maxBatchSize, int devices, int outputTokens, int batchSize,
    double expertWeightBytesPerDecodeStep, Speculative speculative, boolean twoBatchOverlap) {

  public InferenceEstimate {
    reasons = ImmutableList.copyOf(reasons);
  }

  /** This estimate marked infeasible, with {@code why} added to its reasons. */
  public InferenceEstimate infeasible(String why) {
    List<String> all = new java.util.ArrayList<>(reasons);
    all.add(why);
    return new InferenceEstimate(false, all, tp, ep, pp, replicas, parameters, weightsBytes,
        kvCacheBytes, activationsBytes, otherBytes, prefillSeconds, decodeSecondsPerToken,
        requestSeconds, kvCacheBytesPerToken, kvCacheBytesPerSequence, maxBatchSize, devices,
        outputTokens, batchSize, expertWeightBytesPerDecodeStep, speculative, twoBatchOverlap);
  }

  /**
   * This estimate as a pool that only decodes holds it: no prefill working set, and
   * {@code maxBatch} sequences at most; feasible and reasons as given.
   */
  InferenceEstimate decodeOnly(long maxBatch, boolean isFeasible, List<String> why) {
    return new InferenceEstimate(isFeasible, why, tp, ep, pp, replicas, parameters, weightsBytes,
        kvCacheBytes, 0.0, otherBytes, prefillSeconds, decodeSecondsPerToken,
        requestSeconds, kvCacheBytesPerToken, kvCacheBytesPerSequence, maxBatch, devices,
        outputTokens, batchSize, expertWeightBytesPerDecodeStep, speculative, twoBatchOverlap);
  }

  /** This estimate with {@code seconds} as its prefill (the batch's time to first token). */
  InferenceEstimate withPrefillSeconds(double seconds) {
    return new InferenceEstimate(feasible, reasons, tp, ep, pp, replicas, parameters,
        weightsBytes, kvCacheBytes, activationsBytes, otherBytes, seconds, decodeSecondsPerToken,
        requestSeconds, kvCacheBytesPerToken, kvCacheBytesPerSequence, maxBatchSize, devices,
        outputTokens, batchSize, expertWeightBytesPerDecodeStep, speculative, twoBatchOverlap);
  }

  /** This estimate with {@code feasible} and {@code reasons} in place of its own. */
  InferenceEstimate withReasons(boolean isFeasible, List<String> why) {
    return new InferenceEstimate(isFeasible, why, tp, ep, pp, replicas, parameters, weightsBytes,
        kvCacheBytes, activationsBytes, otherBytes, prefillSeconds, decodeSecondsPerToken,
        requestSeconds, kvCacheBytesPerToken, kvCacheBytesPerSequence, maxBatchSize, devices,
        outputTokens, batchSize, expertWeightBytesPerDecodeStep, speculative, twoBatchOverlap);
  }

  /**
   * Tokens a decode step yields per sequence on average: 1, or with speculative decoding
   * {@link Speculative#expectedTokensPerStep}.
   */
  public double tokensPerDecodeStep() {
    return speculative == null ? 1.0 : speculative.expectedTokensPerStep();
  }

  public double totalBytes() {
    return weightsBytes + kvCacheBytes + activationsBytes + otherBytes;
  }

  /** Time to first token without queueing: the prefill of the batch and the request path. */
  public double ttftSeconds() {
    return prefillSeconds + requestSeconds;
  }

  /** Time per output token: one decode step (speculative: a step over the tokens it yields). */
  public double tpotSeconds() {
    return decodeSecondsPerToken;
  }

  /**
   * End-to-end latency of a request without queueing: time to first token + outputTokens decode
   * steps.
   */
  public double totalSeconds() {
    return ttftSeconds() + outputTokens * decodeSecondsPerToken;
  }

  /** Generated tokens per second per device, prefill included. */
  public double outputTokensPerSecondPerDevice() {
    double t = totalSeconds();
    return t > 0 ? (double) batchSize * outputTokens * replicas / t / devices : 0.0;
  }
}
