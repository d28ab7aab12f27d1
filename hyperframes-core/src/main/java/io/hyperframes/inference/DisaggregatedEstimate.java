package io.hyperframes.inference;

import com.google.common.collect.ImmutableList;
import java.util.List;

/**
 * The estimate of disaggregated serving ({@link Disaggregation}): what each pool sustains at its
 * batch, the KV-cache transfer between them, and the request rate of the whole, which the
 * slower pool sets.
 *
 * @param pools the pools estimated
 * @param feasible both pools fit in memory, and the batches meet the SLO targets given
 * @param reasons why not
 * @param prefill the prefill pool
 * @param decode the decode pool
 * @param kvBytesPerRequest KV cache one request sends from prefill to decode (its prompt, whole
 *     model)
 * @param kvTransferSeconds sending one prefill batch's KV cache from a prefill replica
 * @param kvTransferExposedSeconds the part of it not hidden behind the prefill, layer by layer
 * @param ttftSeconds time to first token without queueing: the request path, the prefill of a
 *     batch and the exposed transfer
 * @param requestsPerSecond requests per second the pair of pools sustains (the lower of the two)
 * @param outputTokensPerSecond generated tokens per second at that rate
 * @param outputTokensPerSecondPerDevice the same over both pools' devices
 * @param limitedBy "prefill" or "decode": the pool that sets the rate
 * @param balanced the split of the same devices between the pools that sustains the most
 *     requests per second
 */
public record DisaggregatedEstimate(Disaggregation pools, boolean feasible, List<String> reasons, PrefillPool prefill,
    DecodePool decode, double kvBytesPerRequest, double kvTransferSeconds,
    double kvTransferExposedSeconds, double ttftSeconds, double requestsPerSecond,
    double outputTokensPerSecond, double outputTokensPerSecondPerDevice, String limitedBy,
    Balanced balanced) {

  public DisaggregatedEstimate {
    reasons = ImmutableList.copyOf(reasons);
  }

  /**
   * The prefill pool at its batch.
   *
   * @param estimate the estimate of the pool (its memory; {@code prefillSeconds} for a batch)
   * @param batch prompts a replica runs at once
   * @param batchLimitedBy "layout" (given), "workload" (the workload's batch) or "ttft" (lowered
   *     to meet the target)
   * @param periodSeconds time between batches of a replica: the prefill, or the KV transfer
   *     where that is longer
   * @param inputTokensPerSecond prompt tokens computed per second by the pool
   * @param inputTokensPerSecondPerDevice the same per device
   * @param inputTokensPerSecondPerNode the same per node of the cluster's size
   * @param requestsPerSecond prompts per second
   */
  public record PrefillPool(InferenceEstimate estimate, int batch, String batchLimitedBy,
      double periodSeconds, double inputTokensPerSecond, double inputTokensPerSecondPerDevice,
      double inputTokensPerSecondPerNode, double requestsPerSecond) {}

  /**
   * The decode pool at its batch.
   *
   * @param estimate the estimate of the pool at its batch
   * @param batch sequences a replica generates for at once
   * @param batchLimitedBy "layout" (given), "memory" (the most whose KV cache fits) or "tpot"
   *     (lowered to meet the target)
   * @param maxBatch the most sequences whose KV cache fits on a replica
   * @param tpotSeconds time per output token at that batch
   * @param outputTokensPerSecond tokens generated per second by the pool
   * @param outputTokensPerSecondPerDevice the same per device
   * @param outputTokensPerSecondPerNode the same per node of the cluster's size
   * @param requestsPerSecond requests completed per second
   */
  public record DecodePool(InferenceEstimate estimate, int batch, String batchLimitedBy,
      long maxBatch, double tpotSeconds, double outputTokensPerSecond,
      double outputTokensPerSecondPerDevice, double outputTokensPerSecondPerNode,
      double requestsPerSecond) {}

  /**
   * The pool split that sustains the most requests on the same devices, each pool keeping its
   * replica shape (tp, ep, batch) and growing in whole expert-parallel groups.
   *
   * @param prefillReplicas prefill replicas
   * @param decodeReplicas decode replicas
   * @param requestsPerSecond requests per second of that split
   * @param devices devices it uses (at most the layout's)
   */
  public record Balanced(int prefillReplicas, int decodeReplicas, double requestsPerSecond,
      int devices) {}
}
