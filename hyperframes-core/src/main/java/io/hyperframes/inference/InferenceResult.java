package io.hyperframes.inference;

import com.google.common.collect.ImmutableList;
import io.hyperframes.diagnose.Finding;
import java.util.List;

/**
 * An inference estimate with the latency percentiles, the devices an SLO needs, and findings.
 *
 * @param estimate the configuration's estimate
 * @param p50LatencySeconds median end-to-end latency (without a load model: the unloaded latency)
 * @param p99LatencySeconds 99th-percentile end-to-end latency
 * @param ttftP50Seconds median time to first token (queueing included under load)
 * @param ttftP99Seconds 99th-percentile time to first token
 * @param capacityPerSecond request rate the replicas sustain with a full batch (0 without load)
 * @param devicesNeeded fewest devices (tp × pp × replicas) meeting the SLO; the layout's devices
 *     without an SLO; 0 when no layout up to a node meets it
 * @param findings advice
 * @param latencyModel what gave the percentiles under load: "analytical" (the cluster model,
 *     inside its validated domain), "simulation" (outside it), or "unloaded" (no arrival rate)
 * @param capacity the throughput at capacity ({@code workload.mode} capacity), else null
 * @param slo the highest load meeting the SLO ({@code workload.mode} slo), else null
 * @param disaggregated the prefill and decode pools ({@code layout.disaggregated}), else null;
 *     {@code estimate} is then the decode pool's at its batch, and the latencies those of a
 *     request without queueing
 * @param redundantExperts copies of routed experts the replicas hold beside them
 *     ({@code layout.redundantExperts}; 0 without, and for {@code layout.disaggregated}, whose
 *     pools say their own)
 */
public record InferenceResult(InferenceEstimate estimate, double p50LatencySeconds,
    double p99LatencySeconds, double ttftP50Seconds, double ttftP99Seconds,
    double capacityPerSecond, int devicesNeeded, List<Finding> findings, String latencyModel,
    CapacityEstimate capacity, SloEstimate slo, DisaggregatedEstimate disaggregated,
    int redundantExperts) {
  public InferenceResult {
    findings = ImmutableList.copyOf(findings);
  }

  /** A result without redundant experts. */
  public InferenceResult(InferenceEstimate estimate, double p50LatencySeconds,
      double p99LatencySeconds, double ttftP50Seconds, double ttftP99Seconds,
      double capacityPerSecond, int devicesNeeded, List<Finding> findings, String latencyModel,
      CapacityEstimate capacity, SloEstimate slo, DisaggregatedEstimate disaggregated) {
    this(estimate, p50LatencySeconds, p99LatencySeconds, ttftP50Seconds, ttftP99Seconds,
        capacityPerSecond, devicesNeeded, findings, latencyModel, capacity, slo, disaggregated,
        0);
  }

  /** A result on one pool of replicas (no {@code layout.disaggregated}). */
  public InferenceResult(InferenceEstimate estimate, double p50LatencySeconds,
      double p99LatencySeconds, double ttftP50Seconds, double ttftP99Seconds,
      double capacityPerSecond, int devicesNeeded, List<Finding> findings, String latencyModel,
      CapacityEstimate capacity, SloEstimate slo) {
    this(estimate, p50LatencySeconds, p99LatencySeconds, ttftP50Seconds, ttftP99Seconds,
        capacityPerSecond, devicesNeeded, findings, latencyModel, capacity, slo, null);
  }

  /** A result without an SLO search ({@code workload.mode} fixed or capacity). */
  public InferenceResult(InferenceEstimate estimate, double p50LatencySeconds,
      double p99LatencySeconds, double ttftP50Seconds, double ttftP99Seconds,
      double capacityPerSecond, int devicesNeeded, List<Finding> findings, String latencyModel,
      CapacityEstimate capacity) {
    this(estimate, p50LatencySeconds, p99LatencySeconds, ttftP50Seconds, ttftP99Seconds,
        capacityPerSecond, devicesNeeded, findings, latencyModel, capacity, null);
  }

  /** A result without a capacity estimate ({@code workload.mode} fixed). */
  public InferenceResult(InferenceEstimate estimate, double p50LatencySeconds,
      double p99LatencySeconds, double ttftP50Seconds, double ttftP99Seconds,
      double capacityPerSecond, int devicesNeeded, List<Finding> findings, String latencyModel) {
    this(estimate, p50LatencySeconds, p99LatencySeconds, ttftP50Seconds, ttftP99Seconds,
        capacityPerSecond, devicesNeeded, findings, latencyModel, null);
  }
}
