package io.hyperframes.inference;

import com.google.common.collect.ImmutableList;
import java.util.List;

/**
 * The highest load whose latencies meet the workload's SLO ({@code workload.mode} slo): the
 * Poisson request rate, found by bisection on the continuous-batching simulation of one replica
 * ({@link ServingLoad#simulate}), at which the time to first token at the SLO percentile and the
 * time per output token of the median request still meet {@code workload.latencySlo}.
 *
 * @param feasible whether some load meets the SLO
 * @param reasons why none does, when not feasible
 * @param ttftSloSeconds the target on the time to first token at {@code percentile} (0: none)
 * @param tpotSloSeconds the target on the time per output token (0: none)
 * @param percentile the percentile of the time-to-first-token target
 * @param requestsPerSecond the highest rate meeting the SLO, all replicas
 * @param outputTokensPerSecond output tokens per second at that rate, all replicas
 * @param outputTokensPerSecondPerDevice the same per device
 * @param capacityRequestsPerSecond the rate the replicas sustain with full batches
 * @param shareOfCapacity {@code requestsPerSecond} over {@code capacityRequestsPerSecond}
 * @param ttftSeconds time to first token at {@code percentile} at that rate
 * @param tpotSeconds time per output token at that rate: the requests' at
 *     {@code tpotPercentile}, or the median request's
 * @param p50LatencySeconds median end-to-end latency at that rate
 * @param p99LatencySeconds 99th-percentile end-to-end latency at that rate
 * @param limitedBy what a higher rate breaks first: "ttft", "tpot", "memory" (an engine's
 *     memory fraction leaves no request a place) or "capacity" (the SLO
 *     still holds just under the full-batch capacity)
 * @param simulatedRequests requests simulated per tried rate (fixed seed)
 * @param ratesTried rates simulated by the bisection
 * @param batchLimit the most sequences a replica runs at once: {@code workload.maxNumSeqs}
 *     (default 256) or fewer where the KV cache holds fewer
 * @param tpotPercentile the percentile of the requests' TPOT that {@code tpotSeconds} is
 *     ({@code workload.latencySlo.tpotPercentile}); 0: the median request's
 * @param scheduler the simulated server's scheduler: "prefill-first" (no {@code workload.engine})
 *     or the engine's id ({@link EngineLoad})
 */
public record SloEstimate(boolean feasible, List<String> reasons, double ttftSloSeconds,
    double tpotSloSeconds, double percentile, double requestsPerSecond,
    double outputTokensPerSecond, double outputTokensPerSecondPerDevice,
    double capacityRequestsPerSecond, double shareOfCapacity, double ttftSeconds,
    double tpotSeconds, double p50LatencySeconds, double p99LatencySeconds, String limitedBy,
    int simulatedRequests, int ratesTried, int batchLimit, double tpotPercentile,
    String scheduler) {
  public SloEstimate {
    reasons = ImmutableList.copyOf(reasons);
  }
}
