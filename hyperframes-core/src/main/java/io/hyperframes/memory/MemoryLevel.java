package io.hyperframes.memory;

/**
 * One level of the memory hierarchy as seen from an accelerator.
 *
 * @param name "l2", "hbm", "host-dram", "nvme"
 * @param capacityBytes capacity available to one device
 * @param bandwidthBytesPerSecond sustained bandwidth from this level to the compute units
 * @param latencySeconds access latency
 * @param holds what lives here in training
 */
public record MemoryLevel(String name, double capacityBytes, double bandwidthBytesPerSecond,
    double latencySeconds, String holds) {}
