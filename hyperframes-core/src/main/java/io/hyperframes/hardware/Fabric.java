package io.hyperframes.hardware;

import static com.google.common.base.Preconditions.checkArgument;

/**
 * A communication fabric as seen by one device: the bandwidth it can send at in one direction, the
 * per-message latency, the fraction of that bandwidth collectives sustain on large messages, and
 * the message size at which they reach half of it.
 *
 * @param id catalog identifier ("nvlink3-nvswitch", "ib-hdr")
 * @param bandwidthBytesPerSecond unidirectional bandwidth per device
 * @param latencySeconds per-step latency (the alpha of the alpha-beta model)
 * @param launchSeconds fixed cost of one collective: kernel launch and rank synchronisation
 * @param efficiency sustained fraction of {@code bandwidthBytesPerSecond} on large messages, in (0, 1]
 * @param halfEfficiencyBytes message size at which half the sustained bandwidth is reached
 * @param inNetworkReductionBytesPerSecond algorithm bandwidth of an in-network (switch) all-reduce
 *     such as NVLink SHARP or InfiniBand SHARP; 0 when the fabric has none
 * @param source where the numbers come from
 */
public record Fabric(
    String id,
    double bandwidthBytesPerSecond,
    double latencySeconds,
    double launchSeconds,
    double efficiency,
    double halfEfficiencyBytes,
    double inNetworkReductionBytesPerSecond,
    String source) {

  public Fabric {
    checkArgument(id != null && !id.isBlank(), "fabric: id must be given");
    Checks.positive(id + ".bandwidthBytesPerSecond", bandwidthBytesPerSecond);
    Checks.nonNegative(id + ".latencySeconds", latencySeconds);
    Checks.nonNegative(id + ".launchSeconds", launchSeconds);
    checkArgument(Double.isFinite(efficiency) && efficiency > 0 && efficiency <= 1,
        "%s.efficiency: must be in (0, 1], got %s", id, efficiency);
    Checks.nonNegative(id + ".halfEfficiencyBytes", halfEfficiencyBytes);
    Checks.nonNegative(id + ".inNetworkReductionBytesPerSecond", inNetworkReductionBytesPerSecond);
  }

  /**
   * Sustained bandwidth for a message of this size: {@code B · e · S / (S + S½)}, the
   * half-performance-length form of Hockney's model (Hockney 1994, "The communication challenge
   * for MPP", Parallel Computing 20(3)).
   */
  public double sustainedBandwidth(double messageBytes) {
    double s = Math.max(messageBytes, 1.0);
    return bandwidthBytesPerSecond * efficiency * s / (s + halfEfficiencyBytes);
  }

  /** The same fabric with another sustained fraction of its bandwidth (calibration). */
  public Fabric withEfficiency(double sustained) {
    return new Fabric(id, bandwidthBytesPerSecond, latencySeconds, launchSeconds, sustained,
        halfEfficiencyBytes, inNetworkReductionBytesPerSecond, source);
  }

  /** The same fabric with another bandwidth and latency (user override of a catalog entry). */
  public Fabric withBandwidthAndLatency(double bandwidth, double latency, String why) {
    return new Fabric(id, bandwidth, latency, launchSeconds, efficiency, halfEfficiencyBytes,
        inNetworkReductionBytesPerSecond, why);
  }
}
