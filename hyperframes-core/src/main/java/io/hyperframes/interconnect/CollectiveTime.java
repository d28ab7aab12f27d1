package io.hyperframes.interconnect;

/**
 * Predicted time of one collective and the algorithm that achieves it.
 *
 * @param seconds time to completion
 * @param algorithm fastest algorithm for this size and group
 * @param busBandwidthBytesPerSecond bus bandwidth in the nccl-tests convention
 */
public record CollectiveTime(double seconds, Algorithm algorithm,
    double busBandwidthBytesPerSecond) {
  /** A collective over one rank: nothing to do. */
  public static final CollectiveTime NONE = new CollectiveTime(0.0, Algorithm.RING, 0.0);
}
