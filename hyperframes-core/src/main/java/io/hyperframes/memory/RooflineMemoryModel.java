package io.hyperframes.memory;

import com.google.common.collect.ImmutableList;
import io.hyperframes.hardware.Accelerator;
import io.hyperframes.precision.NumberFormat;
import java.util.List;

/**
 * Roofline over device memory, with host DRAM over PCIe and NVMe below it.
 *
 * <p>Host link: PCIe Gen4 x16 sustains about 25 GB/s and Gen5 about 50 GB/s per direction
 * (PCI-SIG base specifications 4.0 and 5.0: 16 and 32 GT/s per lane, 128b/130b encoding, minus
 * protocol overhead); a data-centre NVMe drive reads at about 7 GB/s (PCIe Gen4 x4 line rate).
 * Host DRAM per device is taken as 2× device memory, the golden ratio of the hyperframes method.
 */
enum RooflineMemoryModel implements MemoryHierarchyModel {
  INSTANCE;

  private static final double PCIE_GEN4_BYTES_PER_SECOND = 25e9;
  private static final double PCIE_GEN5_BYTES_PER_SECOND = 50e9;
  private static final double NVME_BYTES_PER_SECOND = 7e9;

  @Override
  public List<MemoryLevel> levels(Accelerator a) {
    double hostLink = a.peakFlopsPerSecond().containsKey(NumberFormat.FP8_E4M3)
        ? PCIE_GEN5_BYTES_PER_SECOND : PCIE_GEN4_BYTES_PER_SECOND;
    ImmutableList.Builder<MemoryLevel> b = ImmutableList.builder();
    if (a.l2Bytes() > 0) {
      b.add(new MemoryLevel("l2", a.l2Bytes(), 2.5 * a.memoryBandwidthBytesPerSecond(), 2e-7,
          "matmul tiles, fused-kernel intermediates"));
    }
    b.add(new MemoryLevel("hbm", a.memoryBytes(),
        a.memoryBandwidthBytesPerSecond() * a.memoryEfficiency(), 6e-7,
        "weights, gradients, optimizer states, activations, KV cache"));
    b.add(new MemoryLevel("host-dram", 2 * a.memoryBytes(), hostLink, 2e-6,
        "offloaded optimizer states, pinned loader buffers, checkpoint snapshots"));
    b.add(new MemoryLevel("nvme", 1e15, NVME_BYTES_PER_SECOND, 1e-4,
        "pre-encoded datasets, checkpoints, ZeRO-Infinity offload"));
    return b.build();
  }

  /**
   * Matmul efficiency falls for small dimensions: each dimension d runs at d / (d + d½) of the
   * large-matrix efficiency, a smooth form of the tile and wave quantization described in NVIDIA's
   * "Matrix Multiplication Background User's Guide" (Deep Learning Performance documentation,
   * sections "Tile Quantization" and "Wave Quantization"). d½ is the kernel efficiency's
   * {@code halfDim} for the weight dimensions n and k and {@code halfRows} for the token dimension
   * m, fitted per accelerator generation and format ({@link Accelerator#kernel}).
   */
  @Override
  public double matmulSeconds(Accelerator a, double m, double n, double k, double batch,
      double elementBytes, NumberFormat format, double peak) {
    double efficiency = a.kernel(format).matmulAt(m, n, k);
    double flops = 2.0 * m * n * k * batch;
    double bytes = elementBytes * batch * (m * k + k * n + m * n);
    double compute = flops / (peak * efficiency);
    double memory = bytes / (a.memoryBandwidthBytesPerSecond() * a.memoryEfficiency());
    return Math.max(compute, memory);
  }

  /** The catalog's device bandwidth times its sustained fraction ({@code memoryEfficiency}). */
  @Override
  public double streamingBytesPerSecond(Accelerator a) {
    return a.memoryBandwidthBytesPerSecond() * a.memoryEfficiency();
  }

  @Override
  public double rooflineSeconds(Accelerator a, double flops, double bytes, NumberFormat format,
      double peak) {
    double compute = flops / (peak * a.kernel(format).matmul());
    double memory = bytes / (a.memoryBandwidthBytesPerSecond() * a.memoryEfficiency());
    return Math.max(compute, memory);
  }
}
