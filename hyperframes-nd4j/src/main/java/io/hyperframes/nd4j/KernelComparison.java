package io.hyperframes.nd4j;

import com.google.common.collect.ImmutableList;
import com.google.common.collect.ImmutableMap;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.nd4j.linalg.activations.IActivation;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.factory.Nd4j;

/**
 * Runs each HyperFrames kernel beside its ND4J baselines in the same process and reports GFLOP/s
 * (2·M·N·K per matmul) and speedups. Timing: warm-up calls, then the median of timed calls within a
 * time budget per kernel (at least {@code minRuns}). This is the engine of
 * {@code hyperframes bench kernels}; the JMH benchmarks in hyperframes-bench measure the same
 * code with JMH's harness.
 */
public final class KernelComparison {

  /**
   * One measured kernel.
   *
   * @param kernel "matmul", "dense-forward", "dense-forward-training" or "dense-backward"
   * @param precision "fp32", "bf16" or "fp16"
   * @param shape "MxNxK"
   * @param activation activation of dense rows ("identity" for matmul)
   * @param gflops achieved GFLOP/s of the HyperFrames kernel
   * @param implementation oneDNN implementation used (or "nd4j" on the fallback)
   * @param baselines GFLOP/s of each ND4J baseline by name
   * @param speedups kernel GFLOP/s over each baseline's
   * @param medianSeconds median time of one call of the kernel
   * @param seconds every timed call of the kernel, sorted (for benchmark records)
   */
  public record Row(String kernel, String precision, String shape, String activation,
      double gflops, String implementation, Map<String, Double> baselines,
      Map<String, Double> speedups, double medianSeconds, double[] seconds) {
    public Row {
      seconds = seconds.clone();
    }

    @Override
    public double[] seconds() {
      return seconds.clone();
    }
  }

  private final double budgetSeconds;
  private final int minRuns;

  /**
   * @param budgetSeconds time to spend measuring each kernel or baseline (after warm-up)
   * @param minRuns timed calls at least, even beyond the budget
   */
  public KernelComparison(double budgetSeconds, int minRuns) {
    if (!(budgetSeconds > 0) || Double.isInfinite(budgetSeconds)) {
      throw new IllegalArgumentException("budgetSeconds: must be > 0, got " + budgetSeconds);
    }
    if (minRuns < 1) {
      throw new IllegalArgumentException("minRuns: must be >= 1, got " + minRuns);
    }
    this.budgetSeconds = budgetSeconds;
    this.minRuns = minRuns;
  }

  /** The acceptance set: matmul 1024³ and the 256×1024·1024×1024 GELU dense layer. */
  public List<Row> runStandard() {
    List<Row> rows = new ArrayList<>();
    rows.add(matmul(DataType.BFLOAT16, 1024, 1024, 1024));
    rows.add(matmul(DataType.FLOAT, 1024, 1024, 1024));
    for (FusedDense.Precision p : FusedDense.Precision.values()) {
      rows.add(denseForward(p, Activation.GELU_TANH, 256, 1024, 1024));
    }
    for (FusedDense.Precision p : FusedDense.Precision.values()) {
      rows.add(denseForwardTraining(p, Activation.GELU_TANH, 256, 1024, 1024));
    }
    for (FusedDense.Precision p : FusedDense.Precision.values()) {
      rows.add(denseBackward(p, Activation.GELU_TANH, 256, 1024, 1024));
    }
    return ImmutableList.copyOf(rows);
  }

  /** Matmul of [m, k]·[k, n] inputs of {@code type} into FP32. */
  public Row matmul(DataType type, int m, int n, int k) {
    INDArray a = Nd4j.rand(DataType.FLOAT, m, k).castTo(type);
    INDArray b = Nd4j.rand(DataType.FLOAT, k, n).castTo(type);
    INDArray c = Nd4j.create(DataType.FLOAT, m, n);
    INDArray a32 = a.castTo(DataType.FLOAT);
    INDArray b32 = b.castTo(DataType.FLOAT);
    INDArray a16 = a.castTo(DataType.BFLOAT16);
    INDArray b16 = b.castTo(DataType.BFLOAT16);
    String precision = name(type);
    return new Timed(2.0 * m * n * k, () -> Matmul.gemm(a, false, b, false, c, 1f, 0f))
        .against("nd4j-fp32-mmul", () -> a32.mmul(b32))
        .against("nd4j-bf16-mmul", () -> a16.mmul(b16))
        .row("matmul", precision, "identity", m, n, k,
            Kernels.cpu().implementation("matmul." + precision));
  }

  /**
   * The matmul of {@link #matmul} alone, without the ND4J baselines: the machine's limit for a
   * format, as a benchmark measures it beside its own figure (GFLOP/s, the median call).
   */
  public double matmulGflops(DataType type, int m, int n, int k) {
    INDArray a = Nd4j.rand(DataType.FLOAT, m, k).castTo(type);
    INDArray b = Nd4j.rand(DataType.FLOAT, k, n).castTo(type);
    INDArray c = Nd4j.create(DataType.FLOAT, m, n);
    return 2.0 * m * n * k / median(() -> Matmul.gemm(a, false, b, false, c, 1f, 0f)) / 1e9;
  }

  /**
   * Baseline: the same layer writing into outputs the caller allocated once ({@code forwardInto},
   * {@code forwardTrainingInto}, {@code backwardInto}), as the matmul limit writes into its own:
   * the kernel's row allocates its outputs on every call, memory the pool hands back cold.
   */
  public static final String INTO = "hyperframes-into";

  /**
   * Baseline of a BF16 forward: {@link #INTO} with x and W already in BF16, as the BF16 matmul
   * limit takes its operands: what remains is the matmul and its epilogue (bias, activation,
   * residual).
   */
  public static final String INTO_BF16 = "hyperframes-into-bf16-operands";

  /** Inputs of a dense layer: x [m, k], W [k, n], b [1, n], residual r [m, n], dY [m, n]. */
  private record DenseInputs(INDArray x, INDArray w, INDArray b, INDArray r, INDArray dY) {
    static DenseInputs random(int m, int n, int k) {
      return new DenseInputs(Nd4j.rand(DataType.FLOAT, m, k).subi(0.5),
          Nd4j.rand(DataType.FLOAT, k, n).subi(0.5).muli(0.05), Nd4j.rand(DataType.FLOAT, 1, n),
          Nd4j.rand(DataType.FLOAT, m, n), Nd4j.rand(DataType.FLOAT, m, n).subi(0.5));
    }
  }

  /** Dense forward y = act(x·W + b) + r with x [m, k], W [k, n]. */
  public Row denseForward(FusedDense.Precision precision, Activation act, int m, int n, int k) {
    DenseInputs in = DenseInputs.random(m, n, k);
    FusedDense layer = FusedDense.of(act, precision);
    IActivation nd4j = Baselines.nd4jActivation(act);
    INDArray y = Nd4j.create(DataType.FLOAT, m, n);
    Timed t = new Timed(2.0 * m * n * k, () -> layer.forward(in.x(), in.w(), in.b(), in.r()))
        .against("nd4j-fp32-unfused",
            () -> Baselines.unfusedForward(nd4j, in.x(), in.w(), in.b(), in.r()))
        .against("nd4j-fp32-xw-plus-b",
            () -> Baselines.xwPlusBForward(nd4j, in.x(), in.w(), in.b(), in.r()))
        .against("nd4j-fp32-mmul", () -> in.x().mmul(in.w()))
        .against(INTO, () -> layer.forwardInto(in.x(), in.w(), in.b(), in.r(), y));
    if (precision == FusedDense.Precision.BF16) {
      INDArray x16 = in.x().castTo(DataType.BFLOAT16);
      INDArray w16 = in.w().castTo(DataType.BFLOAT16);
      t.against(INTO_BF16, () -> layer.forwardInto(x16, w16, in.b(), in.r(), y));
    }
    return t.dense("dense-forward", precision, act, m, n, k, "dense.forward.");
  }

  /**
   * The training forward ({@link FusedDense#forwardTraining}: output and pre-activation) beside
   * the inference forward of the same layer ({@code hyperframes-forward}) and the unfused ND4J
   * layer.
   */
  public Row denseForwardTraining(FusedDense.Precision precision, Activation act, int m, int n,
      int k) {
    DenseInputs in = DenseInputs.random(m, n, k);
    FusedDense layer = FusedDense.of(act, precision);
    IActivation nd4j = Baselines.nd4jActivation(act);
    INDArray y = Nd4j.create(DataType.FLOAT, m, n);
    INDArray z = Nd4j.create(DataType.FLOAT, m, n);
    return new Timed(2.0 * m * n * k,
        () -> layer.forwardTraining(in.x(), in.w(), in.b(), in.r()))
        .against("hyperframes-forward", () -> layer.forward(in.x(), in.w(), in.b(), in.r()))
        .against("nd4j-fp32-unfused",
            () -> Baselines.unfusedForward(nd4j, in.x(), in.w(), in.b(), in.r()))
        .against(INTO, () -> layer.forwardTrainingInto(in.x(), in.w(), in.b(), in.r(), y, z))
        .dense("dense-forward-training", precision, act, m, n, k, "dense.forward.");
  }

  /** Dense backward (dX, dW, db) of the same layer; 4·m·n·k FLOPs. */
  public Row denseBackward(FusedDense.Precision precision, Activation act, int m, int n, int k) {
    DenseInputs in = DenseInputs.random(m, n, k);
    FusedDense layer = FusedDense.of(act, precision);
    INDArray z = layer.forwardTraining(in.x(), in.w(), in.b(), null).preActivation();
    IActivation nd4j = Baselines.nd4jActivation(act);
    INDArray dX = Nd4j.create(DataType.FLOAT, m, k);
    INDArray dW = Nd4j.create(DataType.FLOAT, k, n);
    INDArray db = Nd4j.create(DataType.FLOAT, 1, n);
    return new Timed(4.0 * m * n * k, () -> layer.backward(in.x(), in.w(), z, in.dY()))
        .against("nd4j-fp32-unfused",
            () -> Baselines.unfusedBackward(nd4j, in.x(), in.w(), z, in.dY()))
        .against(INTO, () -> layer.backwardInto(in.x(), in.w(), z, in.dY(), dX, dW, db))
        .dense("dense-backward", precision, act, m, n, k, "dense.backward.data.");
  }

  /**
   * One kernel's timed calls and its baselines' GFLOP/s, all at the kernel's FLOP count: the
   * kernel is timed first, then each baseline in the order given, each after its own warm-up.
   */
  private final class Timed {
    private final double flops;
    private final double[] samples;
    private final Map<String, Double> baselines = new LinkedHashMap<>();

    Timed(double flops, Runnable kernel) {
      this.flops = flops;
      this.samples = timeCalls(kernel);
    }

    Timed against(String name, Runnable baseline) {
      baselines.put(name, flops / median(baseline) / 1e9);
      return this;
    }

    Row dense(String kernel, FusedDense.Precision precision, Activation act, int m, int n, int k,
        String implementationKey) {
      String type = precision.name().toLowerCase(Locale.ROOT);
      return row(kernel, type, activationName(act), m, n, k,
          Kernels.cpu().implementation(implementationKey + type));
    }

    Row row(String kernel, String precision, String act, int m, int n, int k, String impl) {
      double seconds = medianOf(samples);
      double gflops = flops / seconds / 1e9;
      Map<String, Double> speedups = new LinkedHashMap<>();
      baselines.forEach((name, g) -> speedups.put(name, gflops / g));
      return new Row(kernel, precision, m + "x" + n + "x" + k, act, gflops, impl,
          ImmutableMap.copyOf(baselines), ImmutableMap.copyOf(speedups), seconds, samples);
    }
  }

  /**
   * Median time of one call, after a warm-up as long as the measurement (at least two calls):
   * the JIT compiles the call path and the output memory reaches reuse before timing starts, the
   * same for a kernel and its baselines.
   */
  private double median(Runnable r) {
    return medianOf(timeCalls(r));
  }

  private static double medianOf(double[] sorted) {
    int n = sorted.length;
    return n % 2 == 1 ? sorted[n / 2] : 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]);
  }

  /** Every timed call, sorted, after the warm-up (see {@link #median}). */
  private double[] timeCalls(Runnable r) {
    long warm = System.nanoTime() + (long) (budgetSeconds * 1e9);
    for (int i = 0; i < 2 || (System.nanoTime() < warm && i < 10_000); i++) {
      r.run();
    }
    List<Double> times = new ArrayList<>();
    long deadline = System.nanoTime() + (long) (budgetSeconds * 1e9);
    while (times.size() < minRuns || System.nanoTime() < deadline) {
      long t0 = System.nanoTime();
      r.run();
      times.add((System.nanoTime() - t0) / 1e9);
      if (times.size() >= 10_000) {
        break;
      }
    }
    double[] sorted = times.stream().mapToDouble(Double::doubleValue).toArray();
    Arrays.sort(sorted);
    return sorted;
  }

  private static String name(DataType t) {
    if (t == DataType.FLOAT) {
      return "fp32";
    } else if (t == DataType.BFLOAT16) {
      return "bf16";
    }
    return "fp16";
  }

  private static String activationName(Activation a) {
    return a.name().toLowerCase(Locale.ROOT).replace('_', '-');
  }
}
