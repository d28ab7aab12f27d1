package io.hyperframes.nd4j.probe;

import com.google.common.base.Preconditions;
import io.hyperframes.catalog.MachineProfile;
import io.hyperframes.nd4j.Activation;
import io.hyperframes.nd4j.FusedDense;
import io.hyperframes.nd4j.Kernels;
import io.hyperframes.nd4j.Matmul;
import io.hyperframes.nd4j.data.EncodedDataset;
import io.hyperframes.nd4j.data.PrefetchingDataSetIterator;
import io.hyperframes.nd4j.train.FusedAdam;
import io.hyperframes.precision.NumberFormat;
import io.hyperframes.runtime.BenchmarkRecord;
import java.io.BufferedWriter;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.function.Consumer;
import java.util.stream.Stream;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.factory.Nd4j;

/**
 * Measures this machine for the planner ({@code hyperframes probe}): matmul throughput per format
 * and shape (oneDNN through {@link Matmul}, FP32 accumulation), memory bandwidth (STREAM copy and
 * triad over arrays far larger than the caches, one thread per core), fused dense layers forward
 * and backward ({@link FusedDense}, the shapes of the example MLP, each call on cold caches as
 * in a training step), the optimizer step ({@link FusedAdam} over the MLP's largest layer,
 * right after its backward pass), and loader throughput per
 * worker ({@link PrefetchingDataSetIterator} over an {@link EncodedDataset}). Every figure is
 * the median of repeats with its range. There is no host-to-device copy to measure on a CPU
 * backend; the profile says so in its conditions.
 *
 * <p>The time budget is shared out over the measurements (half to matmuls, a quarter to the
 * dense layers, 5 % to the optimizer, 10 % each to memory and the loader); the repeats of the
 * matmuls, layers and optimizer are interleaved (round by round), so that a burst of other load
 * on a shared machine cannot take every repeat of one measurement; each repeat times at least
 * one call after a warm-up of three. The result is a {@link MachineProfile} whose accelerator is
 * this host as one device, fitted from these measurements.
 */
public final class HostProbe {

  /** Matmul shapes m×n×k: the example MLP's products and a spread of sizes for the fit. */
  static final int[][] MATMUL_SHAPES = {
      {256, 2048, 784}, {256, 784, 2048}, {784, 2048, 256}, {256, 2048, 2048},
      {2048, 2048, 256}, {256, 10, 2048}, {64, 1024, 1024}, {1024, 1024, 1024},
      {256, 256, 256}};

  /** Dense layers (batch, in, out): the example MLP 784-2048-2048-10 at batch 256. */
  static final int[][] LAYERS = {{256, 784, 2048}, {256, 2048, 2048}, {256, 2048, 10}};

  private static final int REPEATS = 5;
  private static final long STREAM_ELEMENTS = 1L << 23;
  /** 64 MiB of doubles: twice a 32 MiB last-level cache. */
  private static final int FLUSH_DOUBLES = 1 << 23;

  private final String id;
  private final double budgetSeconds;
  private final Consumer<String> progress;

  private HostProbe(String id, double budgetSeconds, Consumer<String> progress) {
    this.id = id;
    this.budgetSeconds = budgetSeconds;
    this.progress = progress;
  }

  /**
   * A probe that gives the host the accelerator id {@code id} and spends about
   * {@code budgetSeconds} measuring, reporting each step to {@code progress}.
   *
   * @throws IllegalArgumentException when the budget is not in [2, 600] seconds or an argument
   *     is missing
   */
  public static HostProbe of(String id, double budgetSeconds, Consumer<String> progress) {
    Preconditions.checkArgument(id != null, "id: must be given");
    Preconditions.checkArgument(budgetSeconds >= 2 && budgetSeconds <= 600,
        "budget: must be in [2, 600] seconds, got %s", budgetSeconds);
    Preconditions.checkArgument(progress != null, "progress: must be given");
    MachineProfile.builder(id); // validates the id
    return new HostProbe(id, budgetSeconds, progress);
  }

  /** Runs every measurement and fits the profile. */
  public MachineProfile run() throws IOException {
    Kernels kernels = Kernels.cpu();
    MachineProfile.Builder b = MachineProfile.builder(id).name(cpuModel())
        .memoryBytes(hostMemoryBytes());
    Map<String, String> conditions = new TreeMap<>(BenchmarkRecord.hostConditions());
    conditions.put("cpu", cpuModel());
    conditions.put("cpuFlags.avx512_bf16", Boolean.toString(cpuFlag("avx512_bf16")));
    conditions.put("cpuFlags.avx2", Boolean.toString(cpuFlag("avx2")));
    conditions.put("clockGhz", String.format(Locale.ROOT, "%.3f", clockGhz()));
    conditions.put("backend", kernels.name());
    kernels.capabilities().forEach((k, v) -> {
      if (!k.startsWith("impl.")) {
        conditions.put("kernels." + k, v);
      }
    });
    conditions.put("hostToDevice", "not measured: no device on the CPU backend");
    conditions.put("budgetSeconds", Double.toString(budgetSeconds));
    b.conditions(conditions);

    List<NumberFormat> formats = List.of(NumberFormat.BF16, NumberFormat.FP32);
    double perMatmul = 0.5 * budgetSeconds / (formats.size() * MATMUL_SHAPES.length);
    double perLayer = 0.25 * budgetSeconds / (formats.size() * LAYERS.length * 2);
    // Each call of the layers and the optimizer on cold caches: before it (untimed) a buffer
    // twice the size of a large last-level cache is written, as a training step's other layers
    // and its optimizer pass stream far more than the caches hold between a layer's forward and
    // its next one.
    double[] flush = new double[FLUSH_DOUBLES];
    double[] fill = {0};
    Runnable evict = () -> Arrays.fill(flush, fill[0]++);
    // Each kernel is set up now, timed below with the others, and then recorded by its entry
    // in `record`, which reads its samples.
    List<Timed> timed = new ArrayList<>();
    List<Runnable> record = new ArrayList<>();
    for (NumberFormat f : formats) {
      for (int[] sh : MATMUL_SHAPES) {
        Timed t = matmul(f, sh[0], sh[1], sh[2], perMatmul);
        timed.add(t);
        record.add(() -> b.matmul(f, sh[0], sh[1], sh[2], t.samples()));
      }
    }
    for (NumberFormat f : formats) {
      for (int[] l : LAYERS) {
        List<Timed> fb = dense(f, l[0], l[1], l[2], perLayer, evict);
        timed.addAll(fb);
        record.add(() -> b.denseLayer(f, l[0], l[1], l[2], fb.get(0).samples(),
            fb.get(1).samples()));
      }
    }
    int[] big = LAYERS[1];
    Timed adam = optimizer(big[0], big[1], big[2], 0.05 * budgetSeconds, evict);
    timed.add(adam);
    record.add(() -> b.optimizer((long) big[1] * big[2], adam.samples()));
    interleaved(timed, progress);
    record.forEach(Runnable::run);
    progress.accept("memory bandwidth (copy, triad)");
    double[][] stream = stream(0.1 * budgetSeconds);
    b.stream("copy", 16.0 * STREAM_ELEMENTS, stream[0]);
    b.stream("triad", 24.0 * STREAM_ELEMENTS, stream[1]);
    progress.accept("loader throughput per worker");
    loader(b, 0.1 * budgetSeconds);
    return b.build();
  }

  /**
   * One kernel to time: the call, what runs (untimed) before each call or null, the seconds of
   * its {@link #REPEATS} repeats together, and the seconds per call of each repeat, filled in as
   * the repeats run.
   */
  private record Timed(Runnable call, Runnable between, double seconds, double[] samples) {
    Timed(Runnable call, Runnable between, double seconds) {
      this(call, between, seconds, new double[REPEATS]);
    }
  }

  /**
   * Fills each kernel's seconds per call in each of {@link #REPEATS} repeats, after a warm-up
   * of three calls each. The repeats are interleaved: every round times one repeat of every
   * kernel, so that a burst of other load on a shared machine (seconds long, as on the 2-core
   * machines this project runs on) lands in one repeat of many kernels rather than in every
   * repeat of one, and the medians discard it. A repeat times calls until its share of the
   * kernel's seconds is spent, at least one.
   */
  private static void interleaved(List<Timed> kernels, Consumer<String> progress) {
    for (Timed k : kernels) {
      for (int i = 0; i < 3; i++) {
        k.call().run();
      }
    }
    for (int r = 0; r < REPEATS; r++) {
      progress.accept(String.format(Locale.ROOT, "kernels, round %d of %d (%d: matmuls, dense"
          + " layers and the optimizer)", r + 1, REPEATS, kernels.size()));
      for (Timed k : kernels) {
        k.samples()[r] = repeat(k);
      }
    }
  }

  private static double repeat(Timed k) {
    long perRepeat = (long) (k.seconds() / REPEATS * 1e9);
    long start = System.nanoTime();
    long inCalls = 0;
    int calls = 0;
    do {
      if (k.between() != null) {
        k.between().run();
      }
      long t0 = System.nanoTime();
      k.call().run();
      inCalls += System.nanoTime() - t0;
      calls++;
    } while (System.nanoTime() - start < perRepeat);
    return inCalls / 1e9 / calls;
  }

  /** Seconds per call of {@link #REPEATS} consecutive repeats, after a warm-up. */
  private static double[] time(Runnable call, double seconds) {
    Timed k = new Timed(call, null, seconds);
    interleaved(List.of(k), round -> { });
    return k.samples();
  }

  private static DataType type(NumberFormat f) {
    return f == NumberFormat.BF16 ? DataType.BFLOAT16 : DataType.FLOAT;
  }

  private static Timed matmul(NumberFormat f, int m, int n, int k, double seconds) {
    INDArray a = Nd4j.rand(DataType.FLOAT, m, k).castTo(type(f));
    INDArray w = Nd4j.rand(DataType.FLOAT, k, n).castTo(type(f));
    INDArray c = Nd4j.createUninitialized(DataType.FLOAT, m, n);
    return new Timed(() -> Matmul.gemm(a, false, w, false, c, 1f, 0f), null, seconds);
  }

  /** The forward and the backward pass of a fused dense layer, each on cold caches. */
  private static List<Timed> dense(NumberFormat f, int batch, int in, int out, double seconds,
      Runnable evict) {
    FusedDense layer = FusedDense.of(Activation.RELU,
        f == NumberFormat.BF16 ? FusedDense.Precision.BF16 : FusedDense.Precision.FP32);
    INDArray x = Nd4j.rand(DataType.FLOAT, batch, in);
    INDArray w = Nd4j.rand(DataType.FLOAT, in, out).subi(0.5).muli(0.05);
    INDArray bias = Nd4j.zeros(DataType.FLOAT, 1, out);
    INDArray y = Nd4j.createUninitialized(DataType.FLOAT, batch, out);
    INDArray z = Nd4j.createUninitialized(DataType.FLOAT, batch, out);
    INDArray dy = Nd4j.rand(DataType.FLOAT, batch, out);
    INDArray dx = Nd4j.createUninitialized(DataType.FLOAT, batch, in);
    INDArray dw = Nd4j.createUninitialized(DataType.FLOAT, in, out);
    INDArray db = Nd4j.createUninitialized(DataType.FLOAT, 1, out);
    return List.of(
        new Timed(() -> layer.forwardTrainingInto(x, w, bias, null, y, z),
            evict, seconds),
        new Timed(() -> layer.backwardInto(x, w, z, dy, dx, dw, db), evict,
            seconds));
  }

  /**
   * One {@link FusedAdam} step over the weights of an {@code in} × {@code out} layer, each
   * right after that layer's BF16 backward pass (untimed) on cold caches, as a training step
   * runs its optimizer: the oneDNN threads of the pass before still hold the cores for a while
   * (OpenMP's spin-wait), which a step's optimizer pays too (about 30 % of a 4 M-parameter step
   * on a 2-core host, docs/benchmarking.md).
   */
  private static Timed optimizer(int batch, int in, int out, double seconds, Runnable evict) {
    FusedDense layer = FusedDense.of(Activation.RELU, FusedDense.Precision.BF16);
    INDArray x = Nd4j.rand(DataType.FLOAT, batch, in);
    INDArray w = Nd4j.rand(DataType.FLOAT, in, out).subi(0.5).muli(0.05);
    INDArray z = Nd4j.rand(DataType.FLOAT, batch, out);
    INDArray dy = Nd4j.rand(DataType.FLOAT, batch, out).subi(0.5).muli(1e-3);
    INDArray dx = Nd4j.createUninitialized(DataType.FLOAT, batch, in);
    INDArray dw = Nd4j.createUninitialized(DataType.FLOAT, in, out);
    INDArray db = Nd4j.createUninitialized(DataType.FLOAT, 1, out);
    FusedAdam adam = FusedAdam.of(w, 1e-6);
    Runnable before = () -> {
      evict.run();
      layer.backwardInto(x, w, z, dy, dx, dw, db);
    };
    return new Timed(() -> adam.update(dw), before, seconds);
  }

  /**
   * STREAM copy ({@code c = a}) and triad ({@code a = b + s·c}) over FP64 arrays of 64 MiB each,
   * split over one thread per available processor (McCalpin's counting: 16 and 24 bytes per
   * element).
   */
  private static double[][] stream(double seconds) {
    int threads = Runtime.getRuntime().availableProcessors();
    int n = (int) STREAM_ELEMENTS;
    double[] a = new double[n];
    double[] bb = new double[n];
    double[] c = new double[n];
    Arrays.fill(a, 1.0);
    Arrays.fill(bb, 2.0);
    Arrays.fill(c, 0.5);
    ExecutorService pool = Executors.newFixedThreadPool(threads, r -> {
      Thread t = new Thread(r, "hyperframes-probe-stream");
      t.setDaemon(true);
      return t;
    });
    try {
      Runnable copy = () -> parallel(pool, threads, n, (lo, hi) -> {
        System.arraycopy(a, lo, c, lo, hi - lo);
      });
      Runnable triad = () -> parallel(pool, threads, n, (lo, hi) -> {
        for (int i = lo; i < hi; i++) {
          a[i] = bb[i] + 3.0 * c[i];
        }
      });
      return new double[][] {time(copy, seconds / 2), time(triad, seconds / 2)};
    } finally {
      pool.shutdownNow();
    }
  }

  private interface Range {
    void run(int lo, int hi);
  }

  private static void parallel(ExecutorService pool, int threads, int n, Range body) {
    List<Future<?>> parts = new ArrayList<>(threads);
    int chunk = (n + threads - 1) / threads;
    for (int t = 0; t < threads; t++) {
      int lo = t * chunk;
      int hi = Math.min(n, lo + chunk);
      parts.add(pool.submit(() -> body.run(lo, hi)));
    }
    try {
      for (Future<?> f : parts) {
        f.get();
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("probe interrupted", e);
    } catch (java.util.concurrent.ExecutionException e) {
      throw new IllegalStateException("probe: stream kernel failed", e.getCause());
    }
  }

  /** Samples per second per worker of one epoch over 4096 rows of 784 features, 1 and 2 workers. */
  private static void loader(MachineProfile.Builder b, double seconds) throws IOException {
    Path dir = Files.createTempDirectory("hyperframes-probe");
    try {
      Path csv = dir.resolve("rows.csv");
      int rows = 4096;
      int features = 784;
      SplittableRandom r = new SplittableRandom(7);
      try (BufferedWriter w = Files.newBufferedWriter(csv, StandardCharsets.UTF_8)) {
        StringBuilder line = new StringBuilder(features * 8);
        for (int i = 0; i < rows; i++) {
          line.setLength(0);
          for (int j = 0; j < features; j++) {
            line.append((float) r.nextDouble()).append(',');
          }
          w.write(line.append(r.nextInt(10)).append('\n').toString());
        }
      }
      Path encoded = dir.resolve("rows.hfds");
      EncodedDataset.encodeCsv(csv, encoded, -1, 10, false);
      try (EncodedDataset data = EncodedDataset.open(encoded)) {
        for (int workers : new int[] {1, 2}) {
          double[] perWorker = new double[REPEATS];
          long budget = (long) (seconds / 2 / REPEATS * 1e9);
          try (PrefetchingDataSetIterator it = PrefetchingDataSetIterator
              .builder(data.batches(256, 11)).workers(workers).depth(8).batchSize(256)
              .inputColumns(features).totalOutcomes(10).build()) {
            for (int rep = 0; rep < REPEATS; rep++) {
              long start = System.nanoTime();
              long samples = 0;
              do {
                it.reset();
                while (it.hasNext()) {
                  samples += it.next().numExamples();
                }
              } while (System.nanoTime() - start < budget);
              perWorker[rep] = samples / ((System.nanoTime() - start) / 1e9) / workers;
            }
          }
          b.measurement(new MachineProfile.Measurement("loader.workers" + workers
              + ".samplesPerSecondPerWorker", "samples/s", perWorker));
        }
      }
    } finally {
      try (Stream<Path> files = Files.walk(dir)) {
        files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
      }
    }
  }

  /** The CPU model from {@code /proc/cpuinfo}, else the architecture. */
  public static String cpuModel() {
    return cpuinfo("model name").orElse(System.getProperty("os.arch"));
  }

  /** Whether {@code /proc/cpuinfo} lists the flag (false where it cannot be read). */
  public static boolean cpuFlag(String flag) {
    return cpuinfo("flags").map(f -> List.of(f.split("\\s+")).contains(flag)).orElse(false);
  }

  /**
   * The clock in GHz that {@code /proc/cpuinfo} reports for the first core ("cpu MHz"; on a
   * virtual machine the host's nominal clock), else 2.0 (said in the profile's conditions).
   */
  public static double clockGhz() {
    return cpuinfo("cpu MHz").map(v -> Double.parseDouble(v) / 1000).orElse(2.0);
  }

  private static java.util.Optional<String> cpuinfo(String key) {
    Path info = Path.of("/proc/cpuinfo");
    if (!Files.isReadable(info)) {
      return java.util.Optional.empty();
    }
    try (Stream<String> lines = Files.lines(info)) {
      return lines.filter(l -> l.startsWith(key) && l.indexOf(':') > 0)
          .map(l -> l.substring(l.indexOf(':') + 1).strip()).findFirst();
    } catch (IOException | java.io.UncheckedIOException e) {
      return java.util.Optional.empty();
    }
  }

  /** Physical memory of the host (the JVM's view), else its maximum heap. */
  public static double hostMemoryBytes() {
    if (ManagementFactory.getOperatingSystemMXBean()
        instanceof com.sun.management.OperatingSystemMXBean os) {
      return os.getTotalMemorySize();
    }
    return Runtime.getRuntime().maxMemory();
  }
}
