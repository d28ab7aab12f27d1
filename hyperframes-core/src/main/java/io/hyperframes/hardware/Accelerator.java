package io.hyperframes.hardware;

import static com.google.common.base.Preconditions.checkArgument;

import com.google.common.collect.ImmutableMap;
import com.google.common.collect.Maps;
import io.hyperframes.precision.NumberFormat;
import java.util.Map;

/**
 * One accelerator model: dense peak FLOP/s per number format (never the structured-sparsity
 * figure), memory capacity and bandwidth, its intra-node fabric and the efficiencies training
 * kernels sustain on it.
 *
 * @param id catalog identifier ("a100-sxm-80gb")
 * @param name marketing name
 * @param peakFlopsPerSecond dense peak per format; a format absent here is unsupported
 * @param memoryBytes device memory in bytes
 * @param memoryBandwidthBytesPerSecond device memory bandwidth
 * @param l2Bytes last-level on-chip cache
 * @param matmulEfficiency fraction of peak that large training matmuls sustain, in (0, 1]
 * @param matmulHalfDim weight dimension (n or k) at which a matmul runs at half of
 *     {@code matmulEfficiency} along that dimension (tile/wave quantization)
 * @param matmulHalfRows the same for the token dimension m
 * @param memoryEfficiency fraction of memory bandwidth that streaming kernels sustain, in (0, 1]
 * @param powerWatts board power
 * @param intraNode fabric between devices of one node
 * @param defaultNode node template used when a request names only the accelerator
 * @param fusedAttention whether training on it defaults to fused (flash) attention, the
 *     framework default of its generation (see the catalog's notes)
 * @param generation architecture generation ("volta", "ampere", "hopper", "blackwell", "ada",
 *     "cdna3"); the catalog's kernel efficiencies are fitted per generation and format
 * @param kernels fitted kernel efficiencies by compute format; a format without an entry uses
 *     {@code matmulEfficiency}, {@code matmulHalfDim} and {@code matmulHalfRows}
 * @param intervals step-time uncertainty by regime ({@link StepInterval#regime}); a regime
 *     without one has {@link StepInterval#NONE}
 * @param source where the numbers come from
 */
public record Accelerator(
    String id,
    String name,
    Map<NumberFormat, Double> peakFlopsPerSecond,
    double memoryBytes,
    double memoryBandwidthBytesPerSecond,
    double l2Bytes,
    double matmulEfficiency,
    double matmulHalfDim,
    double matmulHalfRows,
    double memoryEfficiency,
    double powerWatts,
    Fabric intraNode,
    String defaultNode,
    boolean fusedAttention,
    String generation,
    Map<NumberFormat, KernelEfficiency> kernels,
    Map<String, StepInterval> intervals,
    String source) {

  public Accelerator {
    checkArgument(id != null && !id.isBlank(), "accelerator: id must be given");
    // Enum-keyed maps: the estimator looks the format up for every matmul of every layout.
    peakFlopsPerSecond = Maps.immutableEnumMap(peakFlopsPerSecond);
    for (Map.Entry<NumberFormat, Double> e : peakFlopsPerSecond.entrySet()) {
      Checks.positive(id + ".peak." + e.getKey().id(), e.getValue());
    }
    Checks.positive(id + ".memoryBytes", memoryBytes);
    Checks.positive(id + ".memoryBandwidth", memoryBandwidthBytesPerSecond);
    Checks.nonNegative(id + ".l2Bytes", l2Bytes);
    checkArgument(matmulEfficiency > 0 && matmulEfficiency <= 1,
        "%s.matmulEfficiency: must be in (0, 1], got %s", id, matmulEfficiency);
    Checks.nonNegative(id + ".matmulHalfDim", matmulHalfDim);
    Checks.nonNegative(id + ".matmulHalfRows", matmulHalfRows);
    checkArgument(memoryEfficiency > 0 && memoryEfficiency <= 1,
        "%s.memoryEfficiency: must be in (0, 1], got %s", id, memoryEfficiency);
    Checks.nonNegative(id + ".powerWatts", powerWatts);
    checkArgument(intraNode != null, "%s.intraNode: must be given", id);
    generation = generation == null ? "" : generation;
    Map<NumberFormat, KernelEfficiency> k = new java.util.EnumMap<>(NumberFormat.class);
    KernelEfficiency baseline = new KernelEfficiency(matmulEfficiency, matmulHalfDim,
        matmulHalfRows, 0.0, 0.0, 0.0, source);
    for (NumberFormat f : peakFlopsPerSecond.keySet()) {
      KernelEfficiency given = kernels == null ? null : kernels.get(f);
      k.put(f, given != null ? given : baseline);
    }
    kernels = Maps.immutableEnumMap(k);
    intervals = intervals == null ? ImmutableMap.of() : ImmutableMap.copyOf(intervals);
  }

  /** The step-time interval of a regime on this accelerator. */
  public StepInterval interval(String regime) {
    return intervals.getOrDefault(regime, StepInterval.NONE);
  }

  /** This accelerator with other step-time intervals (catalog resolution). */
  public Accelerator withIntervals(Map<String, StepInterval> byRegime) {
    return with(f -> f.intervals = byRegime);
  }

  /**
   * The kernel efficiencies in this compute format (the accelerator's matmul constants when the
   * catalog has none fitted for its generation and the format).
   */
  public KernelEfficiency kernel(NumberFormat format) {
    KernelEfficiency k = kernels.get(format);
    return k != null ? k : new KernelEfficiency(matmulEfficiency, matmulHalfDim, matmulHalfRows,
        0.0, 0.0, 0.0, source);
  }

  /** This accelerator with other kernel efficiencies (catalog resolution and calibration). */
  public Accelerator withKernels(Map<NumberFormat, KernelEfficiency> fitted) {
    return with(f -> f.kernels = fitted);
  }

  /** This accelerator with another intra-node fabric (calibration of that fabric). */
  public Accelerator withIntraNode(Fabric fabric) {
    return with(f -> f.intraNode = fabric);
  }

  /**
   * This accelerator with {@code bytes} of device memory (a what-if: a smaller card of the same
   * chip, or memory another process holds).
   */
  public Accelerator withMemoryBytes(double bytes) {
    return with(f -> f.memoryBytes = bytes);
  }

  /** This accelerator with another sustained memory-bandwidth fraction (calibration). */
  public Accelerator withMemoryEfficiency(double efficiency) {
    return with(f -> f.memoryEfficiency = efficiency);
  }

  /**
   * Dense peak in this format.
   *
   * @throws IllegalArgumentException when the accelerator does not compute in the format
   */
  public double peakFlops(NumberFormat format) {
    Double peak = peakFlopsPerSecond.get(format);
    if (peak == null) {
      throw new IllegalArgumentException(
          "precision: accelerator " + id + " has no " + format.id() + " tensor throughput");
    }
    return peak;
  }

  /** Whether the accelerator computes in this format. */
  public boolean supports(NumberFormat format) {
    return peakFlopsPerSecond.containsKey(format);
  }

  /** A copy with {@code change} made to its components (each wither names the one it sets). */
  private Accelerator with(java.util.function.Consumer<Fields> change) {
    Fields f = new Fields(this);
    change.accept(f);
    return f.build();
  }

  /** The components as a mutable copy, listed once, in the record's order. */
  private static final class Fields {
    final String id;
    final String name;
    final Map<NumberFormat, Double> peakFlopsPerSecond;
    double memoryBytes;
    final double memoryBandwidthBytesPerSecond;
    final double l2Bytes;
    final double matmulEfficiency;
    final double matmulHalfDim;
    final double matmulHalfRows;
    double memoryEfficiency;
    final double powerWatts;
    Fabric intraNode;
    final String defaultNode;
    final boolean fusedAttention;
    final String generation;
    Map<NumberFormat, KernelEfficiency> kernels;
    Map<String, StepInterval> intervals;
    final String source;

    Fields(Accelerator a) {
      id = a.id;
      name = a.name;
      peakFlopsPerSecond = a.peakFlopsPerSecond;
      memoryBytes = a.memoryBytes;
      memoryBandwidthBytesPerSecond = a.memoryBandwidthBytesPerSecond;
      l2Bytes = a.l2Bytes;
      matmulEfficiency = a.matmulEfficiency;
      matmulHalfDim = a.matmulHalfDim;
      matmulHalfRows = a.matmulHalfRows;
      memoryEfficiency = a.memoryEfficiency;
      powerWatts = a.powerWatts;
      intraNode = a.intraNode;
      defaultNode = a.defaultNode;
      fusedAttention = a.fusedAttention;
      generation = a.generation;
      kernels = a.kernels;
      intervals = a.intervals;
      source = a.source;
    }

    Accelerator build() {
      return new Accelerator(id, name, peakFlopsPerSecond, memoryBytes,
          memoryBandwidthBytesPerSecond, l2Bytes, matmulEfficiency, matmulHalfDim,
          matmulHalfRows, memoryEfficiency, powerWatts, intraNode, defaultNode, fusedAttention,
          generation, kernels, intervals, source);
    }
  }
}
