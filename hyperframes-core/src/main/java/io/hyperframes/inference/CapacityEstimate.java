package io.hyperframes.inference;

import com.google.common.collect.ImmutableList;
import java.util.List;

/**
 * The sustained throughput of the replicas at capacity ({@code workload.mode: capacity}): every
 * replica always has requests waiting, and runs as many as its KV cache, its request limit and
 * its token budget allow ({@link Capacity}).
 *
 * @param feasible whether a replica holds at least one request
 * @param reasons why not, when infeasible
 * @param engine the scheduler followed
 * @param concurrency requests running per replica (KV cache or request limit)
 * @param limitedBy what bounds the throughput: "kv-cache", "max-num-seqs" or "max-num-tokens"
 * @param kvCacheTokens token positions the KV cache of one replica holds
 * @param requestsPerSecond completed requests per second, all replicas
 * @param outputTokensPerSecond generated tokens per second, all replicas
 * @param outputTokensPerSecondPerDevice the same per device
 * @param inputTokensPerSecond prompt tokens prefilled per second (after the prefix cache), all
 *     replicas
 * @param iterationSeconds mean time of one iteration (the engine's step)
 * @param decodesPerIteration sequences decoding per iteration, on average
 * @param prefillTokensPerIteration prompt tokens prefilled per iteration, on average
 * @param tpotSeconds mean time between a running request's output tokens
 * @param ttftSeconds time from admission to the first token, without the wait to be admitted
 *     (at capacity the queue is as long as the traffic makes it)
 * @param meanPromptTokens mean prompt length
 * @param meanOutputTokens mean output length
 * @param maxNumSeqs the request limit used
 * @param maxNumTokens the token budget used
 * @param memoryFraction the memory fraction used
 */
public record CapacityEstimate(boolean feasible, List<String> reasons, ServingEngine engine,
    double concurrency, String limitedBy, double kvCacheTokens, double requestsPerSecond,
    double outputTokensPerSecond, double outputTokensPerSecondPerDevice,
    double inputTokensPerSecond, double iterationSeconds, double decodesPerIteration,
    double prefillTokensPerIteration, double tpotSeconds, double ttftSeconds,
    double meanPromptTokens, double meanOutputTokens, int maxNumSeqs, int maxNumTokens,
    double memoryFraction) {

  public CapacityEstimate {
    reasons = ImmutableList.copyOf(reasons);
  }
}
