package io.hyperframes.memory;

import io.hyperframes.hardware.Accelerator;
import io.hyperframes.precision.NumberFormat;
import java.util.List;

/** Where data lives and how long it takes to reach the compute units. */
public interface MemoryHierarchyModel {

  /** Levels from fastest to slowest. */
  List<MemoryLevel> levels(Accelerator accelerator);

  /**
   * Roofline time of an operation: max(flops / (peak · e_compute), bytes / (B · e_memory))
   * (Williams, Waterman and Patterson 2009, "Roofline", CACM 52(4)).
   *
   * @param flops floating-point operations
   * @param bytes bytes moved to or from device memory
   * @param format the format the operation computes in (selects the fitted kernel efficiency)
   * @param peakFlopsPerSecond peak of that format
   */
  double rooflineSeconds(Accelerator accelerator, double flops, double bytes, NumberFormat format,
      double peakFlopsPerSecond);

  /**
   * Time of {@code batch} independent matrix products of an m×k by a k×n matrix in a format of
   * {@code elementBytes}: the roofline of their FLOPs (at the size-dependent efficiency of
   * {@code format} on the accelerator, {@link Accelerator#kernel}) and of the bytes of their
   * operands and result.
   */
  double matmulSeconds(Accelerator accelerator, double m, double n, double k, double batch,
      double elementBytes, NumberFormat format, double peakFlopsPerSecond);

  /**
   * Bandwidth that streaming (element-wise) kernels sustain in device memory, bytes/s: the
   * memory-bound part of every step. The default is the fastest level below on-chip cache.
   */
  default double streamingBytesPerSecond(Accelerator accelerator) {
    for (MemoryLevel level : levels(accelerator)) {
      if (!level.name().equals("l2")) {
        return level.bandwidthBytesPerSecond();
      }
    }
    throw new IllegalStateException("memoryModel: no device-memory level for " + accelerator.id());
  }

  /** The analytical model with the catalog's bandwidths and efficiencies. */
  static MemoryHierarchyModel analytical() {
    return RooflineMemoryModel.INSTANCE;
  }
}
