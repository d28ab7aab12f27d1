package io.hyperframes.hardware;

import static com.google.common.base.Preconditions.checkArgument;

/**
 * What training kernels sustain on one accelerator generation in one number format: the fitted
 * constants of the compute model (see docs/model-reference.md, "Kernel efficiency").
 *
 * <p>A matmul of m×k by k×n runs at {@code matmul · m/(m + halfRows) · n/(n + halfDim) ·
 * k/(k + halfDim)} of the format's dense peak (tile and wave quantization, NVIDIA "Matrix
 * Multiplication Background User's Guide"). A fused attention kernel runs at {@code attention} of
 * the peak on its executed FLOPs; 0 means it is modelled as two batched matmuls instead. Every
 * layer of every micro-batch also pays {@code layerOverheadSeconds} for its forward and backward
 * passes together: kernel launches, synchronisation and the small kernels the roofline does not
 * see. While communication overlaps compute, the compute runs slower (the collective's kernels
 * take SMs and memory bandwidth); {@code overlapCost} is the share of its throughput the
 * compute loses while a collective runs beside it, so a collective of c seconds over a compute
 * window of w exposes {@code max(c − w, overlapCost·c)}: the slowed compute's loss where the
 * collective is the shorter, nothing more where it outlasts the slowed compute. Serving adds two: every layer of every decode step pays
 * {@code servingLayerOverheadSeconds} (kernel launches and synchronisation, which a decode step's
 * small kernels do not hide; a prefill's large kernels do), and the decode attention reads
 * the KV cache at {@code kvBandwidthFraction} of the sustained memory bandwidth (paged attention
 * kernels stream many short, scattered blocks). Every request also pays
 * {@code servingRequestSeconds} once before its first token: the serving path outside the model's
 * kernels (scheduling the request, sampling the first token, the device-to-host copy and the
 * server's response path), which a short prompt's prefill does not hide. The optimizer step
 * streams its states at {@code optimizerBandwidthFraction} of the sustained memory bandwidth:
 * 1 for an engine whose fused optimizer kernel streams like any element-wise kernel (the
 * catalog's generations), less where the engine's optimizer moves more bytes than the estimator
 * counts or shares the cores (a measured host: {@code hyperframes probe} times HyperFrames'
 * {@code FusedAdam} right after a oneDNN call, as in a training step).
 *
 * @param matmul large-matrix fraction of peak, in (0, 1]
 * @param halfDim weight dimension (n or k) of half efficiency, ≥ 0
 * @param halfRows token dimension (m) of half efficiency, ≥ 0
 * @param attention fused-attention fraction of peak, in [0, 1]; 0 when not fitted
 * @param layerOverheadSeconds fixed seconds per layer per micro-batch (forward + backward), ≥ 0
 * @param overlapCost share of compute throughput lost while a collective runs beside it, in
 *     [0, 1]
 * @param servingLayerOverheadSeconds fixed seconds per layer per decode step, ≥ 0
 * @param kvBandwidthFraction fraction of sustained bandwidth of decode KV-cache reads, in (0, 1]
 * @param servingRequestSeconds fixed seconds per request before its first token, ≥ 0
 * @param optimizerBandwidthFraction fraction of sustained bandwidth of the optimizer step, in
 *     (0, 1]
 * @param kvPerHeadBandwidthFraction fraction of sustained bandwidth at which a per-head decode
 *     attention kernel ({@code workload.decodeAttention: per-head}) streams the KV cache, in
 *     [0, 1]; 0 when not fitted (then {@code kvBandwidthFraction})
 * @param kvPerHeadRereadFraction share of a per-head kernel's repeated reads of a shared KV head
 *     that reach device memory (the rest hit in L2), in [0, 1]; 1 when not fitted
 * @param servingFirstTokenLayerSeconds fixed seconds per layer of a request's first-token pass
 *     beyond its prefill kernels (launches and synchronisation of the context phase), ≥ 0; part
 *     of the time to first token with {@code servingRequestSeconds}
 * @param elementwiseBandwidthFraction fraction of the sustained memory bandwidth at which a
 *     training layer's element-wise kernels stream their bytes (norms, residual adds, the MLP
 *     activation, the unfused attention core's passes), in (0, 1]: 1 when not fitted; less
 *     where the engine runs per-token work the estimator does not itemise (see
 *     docs/model-reference.md, "Element-wise bandwidth")
 * @param source where the constants come from: the cases they were fitted on, or the datasheet
 */
public record KernelEfficiency(double matmul, double halfDim, double halfRows, double attention,
    double layerOverheadSeconds, double overlapCost, double servingLayerOverheadSeconds,
    double kvBandwidthFraction, double servingRequestSeconds, double optimizerBandwidthFraction,
    double kvPerHeadBandwidthFraction, double kvPerHeadRereadFraction,
    double servingFirstTokenLayerSeconds, double elementwiseBandwidthFraction, String source) {

  /** Training constants only; serving uses no overhead and the full bandwidth. */
  public KernelEfficiency(double matmul, double halfDim, double halfRows, double attention,
      double layerOverheadSeconds, double overlapCost, String source) {
    this(matmul, halfDim, halfRows, attention, layerOverheadSeconds, overlapCost, 0.0, 1.0, 0.0,
        1.0, 0.0, 1.0, 0.0, 1.0, source);
  }


  public KernelEfficiency {
    checkArgument(Double.isFinite(matmul) && matmul > 0 && matmul <= 1,
        "kernel.matmulEfficiency: must be in (0, 1], got %s", matmul);
    Checks.nonNegative("kernel.matmulHalfDim", halfDim);
    Checks.nonNegative("kernel.matmulHalfRows", halfRows);
    checkArgument(Double.isFinite(attention) && attention >= 0 && attention <= 1,
        "kernel.attentionEfficiency: must be in [0, 1], got %s", attention);
    Checks.nonNegative("kernel.layerOverheadSeconds", layerOverheadSeconds);
    checkArgument(Double.isFinite(overlapCost) && overlapCost >= 0 && overlapCost <= 1,
        "kernel.overlapCost: must be in [0, 1], got %s", overlapCost);
    Checks.nonNegative("kernel.servingLayerOverheadSeconds", servingLayerOverheadSeconds);
    checkArgument(Double.isFinite(kvBandwidthFraction) && kvBandwidthFraction > 0
        && kvBandwidthFraction <= 1,
        "kernel.kvBandwidthFraction: must be in (0, 1], got %s", kvBandwidthFraction);
    Checks.nonNegative("kernel.servingRequestSeconds", servingRequestSeconds);
    Checks.fraction("kernel.optimizerBandwidthFraction", optimizerBandwidthFraction);
    Checks.share("kernel.kvPerHeadBandwidthFraction", kvPerHeadBandwidthFraction);
    Checks.share("kernel.kvPerHeadRereadFraction", kvPerHeadRereadFraction);
    Checks.nonNegative("kernel.servingFirstTokenLayerSeconds", servingFirstTokenLayerSeconds);
    Checks.fraction("kernel.elementwiseBandwidthFraction", elementwiseBandwidthFraction);
    source = source == null ? "" : source;
  }

  /** These constants with another large-matrix matmul efficiency. */
  public KernelEfficiency withMatmul(double value) {
    return with(f -> f.matmul = value);
  }

  /** These constants with another weight half dimension. */
  public KernelEfficiency withHalfDim(double value) {
    return with(f -> f.halfDim = value);
  }

  /** These constants with another fused-attention efficiency. */
  public KernelEfficiency withAttention(double value) {
    return with(f -> f.attention = value);
  }

  /** These constants with another per-layer overhead, seconds. */
  public KernelEfficiency withLayerOverhead(double seconds) {
    return with(f -> f.layerOverheadSeconds = seconds);
  }

  /** These constants with another overlap cost. */
  public KernelEfficiency withOverlapCost(double value) {
    return with(f -> f.overlapCost = value);
  }

  /** These constants with another serving per-layer overhead, seconds. */
  public KernelEfficiency withServingLayerOverhead(double seconds) {
    return with(f -> f.servingLayerOverheadSeconds = seconds);
  }

  /** These constants with another KV-cache bandwidth fraction. */
  public KernelEfficiency withKvBandwidthFraction(double value) {
    return with(f -> f.kvBandwidthFraction = value);
  }

  /** These constants with another per-request serving overhead, seconds. */
  public KernelEfficiency withServingRequest(double seconds) {
    return with(f -> f.servingRequestSeconds = seconds);
  }

  /** These constants with another optimizer bandwidth fraction. */
  public KernelEfficiency withOptimizerBandwidthFraction(double value) {
    return with(f -> f.optimizerBandwidthFraction = value);
  }

  /** These constants with another bandwidth fraction of the per-head decode-attention kernel (0: as the grouped kernel). */
  public KernelEfficiency withKvPerHeadBandwidthFraction(double value) {
    return with(f -> f.kvPerHeadBandwidthFraction = value);
  }

  /** These constants with another share of the per-head kernel's repeated KV reads that reach device memory. */
  public KernelEfficiency withKvPerHeadRereadFraction(double value) {
    return with(f -> f.kvPerHeadRereadFraction = value);
  }

  /** These constants with another per-layer first-token overhead, seconds. */
  public KernelEfficiency withServingFirstTokenLayer(double seconds) {
    return with(f -> f.servingFirstTokenLayerSeconds = seconds);
  }

  /** These constants with another element-wise bandwidth fraction. */
  public KernelEfficiency withElementwiseBandwidthFraction(double value) {
    return with(f -> f.elementwiseBandwidthFraction = value);
  }

  /**
   * These constants with the serving ones of {@code other}: the per-layer decode and first-token
   * overheads, the per-request path and the decode-attention bandwidth fractions (a catalog
   * entry's {@code servingFrom}: the serving engine's runtime carried from another entry where
   * none was fitted); the training constants are kept.
   */
  public KernelEfficiency withServingOf(KernelEfficiency other) {
    return with(f -> {
      f.servingLayerOverheadSeconds = other.servingLayerOverheadSeconds;
      f.kvBandwidthFraction = other.kvBandwidthFraction;
      f.servingRequestSeconds = other.servingRequestSeconds;
      f.kvPerHeadBandwidthFraction = other.kvPerHeadBandwidthFraction;
      f.kvPerHeadRereadFraction = other.kvPerHeadRereadFraction;
      f.servingFirstTokenLayerSeconds = other.servingFirstTokenLayerSeconds;
    });
  }

  /** The bandwidth fraction of the decode-attention kernel that reads per query head. */
  public double kvPerHeadBandwidth() {
    return kvPerHeadBandwidthFraction > 0 ? kvPerHeadBandwidthFraction : kvBandwidthFraction;
  }

  /** Matmul efficiency for an m×k by k×n product. */
  public double matmulAt(double m, double n, double k) {
    return matmul * m / (m + halfRows) * n / (n + halfDim) * k / (k + halfDim);
  }

  /** A copy with {@code change} made to its components (each wither names the one it sets). */
  private KernelEfficiency with(java.util.function.Consumer<Fields> change) {
    Fields f = new Fields(this);
    change.accept(f);
    return f.build();
  }

  /** The components as a mutable copy, listed once, in the record's order. */
  private static final class Fields {
    double matmul;
    double halfDim;
    double halfRows;
    double attention;
    double layerOverheadSeconds;
    double overlapCost;
    double servingLayerOverheadSeconds;
    double kvBandwidthFraction;
    double servingRequestSeconds;
    double optimizerBandwidthFraction;
    double kvPerHeadBandwidthFraction;
    double kvPerHeadRereadFraction;
    double servingFirstTokenLayerSeconds;
    double elementwiseBandwidthFraction;
    String source;

    Fields(KernelEfficiency k) {
      matmul = k.matmul;
      halfDim = k.halfDim;
      halfRows = k.halfRows;
      attention = k.attention;
      layerOverheadSeconds = k.layerOverheadSeconds;
      overlapCost = k.overlapCost;
      servingLayerOverheadSeconds = k.servingLayerOverheadSeconds;
      kvBandwidthFraction = k.kvBandwidthFraction;
      servingRequestSeconds = k.servingRequestSeconds;
      optimizerBandwidthFraction = k.optimizerBandwidthFraction;
      kvPerHeadBandwidthFraction = k.kvPerHeadBandwidthFraction;
      kvPerHeadRereadFraction = k.kvPerHeadRereadFraction;
      servingFirstTokenLayerSeconds = k.servingFirstTokenLayerSeconds;
      elementwiseBandwidthFraction = k.elementwiseBandwidthFraction;
      source = k.source;
    }

    KernelEfficiency build() {
      return new KernelEfficiency(matmul, halfDim, halfRows, attention, layerOverheadSeconds,
          overlapCost, servingLayerOverheadSeconds, kvBandwidthFraction, servingRequestSeconds,
          optimizerBandwidthFraction, kvPerHeadBandwidthFraction, kvPerHeadRereadFraction,
          servingFirstTokenLayerSeconds, elementwiseBandwidthFraction, source);
    }
  }
}
