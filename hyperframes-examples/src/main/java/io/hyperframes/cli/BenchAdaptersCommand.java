package io.hyperframes.cli;

import ai.djl.Model;
import ai.djl.ndarray.NDManager;
import ai.djl.ndarray.types.Shape;
import ai.djl.training.EasyTrain;
import ai.djl.training.Trainer;
import ai.djl.training.dataset.Dataset;
import ai.djl.training.dataset.RandomAccessDataset;
import ai.djl.training.dataset.Record;
import ai.djl.util.Progress;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.hyperframes.djl.DjlTrainer;
import io.hyperframes.djl.HyperFramesListener;
import io.hyperframes.djl.PrefetchingDataset;
import io.hyperframes.examples.DjlTrainingExample;
import io.hyperframes.examples.SameDiffTrainingExample;
import io.hyperframes.nd4j.data.PrefetchingDataSetIterator;
import io.hyperframes.nd4j.samediff.SameDiffMeterListener;
import io.hyperframes.runtime.BatchSource;
import io.hyperframes.json.Json;
import java.util.Arrays;
import java.util.Locale;
import java.util.concurrent.Callable;
import org.nd4j.autodiff.samediff.SameDiff;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.dataset.DataSet;
import org.nd4j.linalg.dataset.api.iterator.DataSetIterator;
import org.nd4j.linalg.factory.Nd4j;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code hyperframes bench adapters}: what wrapping a DJL loop costs and gains, in one run. The
 * example's MLP ({@link DjlTrainingExample}, 128-256-256-10, batch 256) trains epoch after epoch,
 * the variants interleaved round by round so that the machine's drift hits them alike: plain
 * {@code EasyTrain.fit}, {@code EasyTrain.fit} with the {@link HyperFramesListener} metering it,
 * and {@link DjlTrainer}. Then the same with a slow dataset (every sample costs a fixed time of
 * CPU before it is read, as a decoder would): DJL's sequential iteration against a
 * {@link PrefetchingDataset} with two workers.
 */
@Command(name = "adapters", mixinStandardHelpOptions = true,
    description = "DJL adapter costs and gains: metering overhead against EasyTrain.fit, and the"
        + " prefetching dataset on a slow dataset (CPU-bound and waiting reads).")
final class BenchAdaptersCommand implements Callable<Integer> {

  static final int BATCH = 256;

  /** The timed variants, in the JSON's names. */
  static final String[] VARIANTS = {"easyTrain", "metered", "djlTrainer", "djlTrainerNoGuard"};

  @Spec CommandSpec spec;

  @Option(names = "--rounds", defaultValue = "9",
      description = "Interleaved rounds (one epoch of each variant per round).")
  int rounds;

  @Option(names = "--rows", defaultValue = "16384", description = "Training rows.")
  int rows;

  @Option(names = "--sample-micros", defaultValue = "40",
      description = "CPU cost of reading one sample of the slow dataset, microseconds.")
  int sampleMicros;

  @Mixin RecordOption record;

  private final java.util.Map<String, io.hyperframes.runtime.BenchmarkRecord.Metric> recorded =
      new java.util.TreeMap<>();

  @Mixin FormatOption format;

  @Override
  public Integer call() throws Exception {
    if (rounds < 3 || rounds > 1000) {
      throw new IllegalArgumentException("--rounds: must be in [3, 1000], got " + rounds);
    }
    if (rows < BATCH * 4 || rows > 1_000_000) {
      throw new IllegalArgumentException("--rows: must be in [" + BATCH * 4 + ", 1000000], got "
          + rows);
    }
    if (sampleMicros < 1 || sampleMicros > 100_000) {
      throw new IllegalArgumentException("--sample-micros: must be in [1, 100000], got "
          + sampleMicros);
    }
    System.setProperty("ai.djl.offline", "true");
    float[][] data = DjlTrainingExample.rows(rows, 1);
    ObjectNode root = Json.mapper().createObjectNode();
    ObjectNode djl = root.putObject("djl");
    djl.put("model", "mlp 128-256-256-10").put("batch", BATCH).put("rows", rows)
        .put("rounds", rounds);
    djlEpochs(djl, data);
    djlSlowData(djl.putObject("slowData"), data);
    // SameDiff prints each gradient op it adds to System.out; keep stdout for the report.
    java.io.PrintStream stdout = System.out;
    System.setOut(new java.io.PrintStream(java.io.OutputStream.nullOutputStream()));
    try {
      sameDiff(root.putObject("samediff"), data);
    } finally {
      System.setOut(stdout);
    }

    if (record.wanted()) {
      record.write(java.util.Map.of("rows", Integer.toString(rows),
          "rounds", Integer.toString(rounds), "sampleMicros", Integer.toString(sampleMicros),
          "batch", Integer.toString(BATCH)), recorded);
    }
    var out = spec.commandLine().getOut();
    if (format.json()) {
      out.println(Json.mapper().writerWithDefaultPrettyPrinter().writeValueAsString(root));
    } else {
      table(out, root);
    }
    out.flush();
    return 0;
  }

  /**
   * DJL's plain EasyTrain epochs against the metered and {@code DjlTrainer} variants,
   * interleaved after one warm-up epoch of each, and the metering cost per step.
   */
  private void djlEpochs(ObjectNode djl, float[][] data) throws Exception {
    double[][] epoch = new double[VARIANTS.length][rounds];
    HyperFramesListener listener = new HyperFramesListener();
    try (Model model = DjlTrainingExample.model(7);
        Trainer trainer = model.newTrainer(DjlTrainingExample.config()
            .addTrainingListeners(listener))) {
      trainer.initialize(new Shape(BATCH, DjlTrainingExample.FEATURES));
      var ds = DjlTrainingExample.dataset(model.getNDManager(), data, BATCH);
      Dataset metered = listener.metered(ds);
      // Warm-up: one epoch of each.
      for (int v = 0; v < VARIANTS.length; v++) {
        run(trainer, v, ds, metered, listener);
      }
      for (int r = 0; r < rounds; r++) {
        for (int v = 0; v < VARIANTS.length; v++) {
          int variant = (r + v) % VARIANTS.length;
          epoch[variant][r] = run(trainer, variant, ds, metered, listener);
        }
      }
    }
    double base = median(epoch[0]);
    double stepSeconds = base * BATCH / rows;
    double meteringNanos = meteringNanosPerStep();
    djl.putObject("metering").put("nanosPerStep", meteringNanos)
        .put("shareOfStep", meteringNanos * 1e-9 / stepSeconds);
    for (int v = 0; v < VARIANTS.length; v++) {
      recorded.put("djl." + VARIANTS[v] + ".epochSeconds", RecordOption.seconds(epoch[v]));
      double m = median(epoch[v]);
      ObjectNode o = djl.putObject(VARIANTS[v]).put("epochSeconds", m)
          .put("samplesPerSecond", rows / m).put("relativeIqr", relativeIqr(epoch[v]));
      if (v > 0) {
        o.put("overhead", m / base - 1);
      }
    }
  }

  /** The slow dataset on CPU, on CPU with the engine leaving cores, and waiting. */
  private void djlSlowData(ObjectNode slow, float[][] data) throws Exception {
    slow.put("sampleMicros", sampleMicros).put("workers", 2);
    int engineThreads = ai.djl.pytorch.jni.JniUtils.getNumThreads();
    int cores = Runtime.getRuntime().availableProcessors();
    int spare = Math.max(1, cores - 2);
    slow.put("cores", cores).put("engineThreads", engineThreads);
    slow(slow.putObject("cpu"), "djl.slowData.cpu", data, true);
    // The same with the engine leaving the workers their cores (torch.set_num_threads).
    ai.djl.pytorch.jni.JniUtils.setNumThreads(spare);
    try {
      slow(slow.putObject("cpuSpareCores").put("engineThreads", spare),
          "djl.slowData.cpuSpareCores", data, true);
    } finally {
      ai.djl.pytorch.jni.JniUtils.setNumThreads(engineThreads);
    }
    slow(slow.putObject("wait"), "djl.slowData.wait", data, false);
  }

  private void table(java.io.PrintWriter out, ObjectNode root) {
    ObjectNode djl = (ObjectNode) root.get("djl");
    var slow = djl.get("slowData");
    out.printf(Locale.ROOT, "DJL %s, batch %d, %d rows, median of %d interleaved epochs%n",
        djl.get("model").asText(), BATCH, rows, rounds);
    out.printf(Locale.ROOT, "  metering: %.0f ns per step = %.4f %% of a step%n",
        djl.get("metering").get("nanosPerStep").asDouble(),
        100 * djl.get("metering").get("shareOfStep").asDouble());
    for (String v : VARIANTS) {
      ObjectNode o = (ObjectNode) djl.get(v);
      out.printf(Locale.ROOT, "  %-17s %8.0f samples/s (IQR %4.1f %%)%s%n", v,
          o.get("samplesPerSecond").asDouble(), 100 * o.get("relativeIqr").asDouble(),
          o.has("overhead") ? String.format(Locale.ROOT, "  overhead %+.2f %%",
              100 * o.get("overhead").asDouble()) : "");
    }
    for (String k : new String[] {"cpu", "cpuSpareCores", "wait"}) {
      var o = slow.get(k);
      out.printf(Locale.ROOT, "slow dataset (%d µs of %s per sample, engine threads %d):"
          + " EasyTrain %.0f samples/s, PrefetchingDataset (2 workers) %.0f samples/s, speedup"
          + " %.2f×%n", sampleMicros, k.equals("wait") ? "waiting" : "CPU",
          (o.has("engineThreads") ? o : slow).get("engineThreads").asInt(),
          o.get("easyTrain").get("samplesPerSecond").asDouble(),
          o.get("prefetching").get("samplesPerSecond").asDouble(), o.get("speedup").asDouble());
    }
    var sd = root.get("samediff");
    out.printf(Locale.ROOT, "SameDiff %s: fit %.0f samples/s, metered %.0f samples/s (overhead"
        + " %+.2f %%), metering %.0f ns per step = %.4f %% of a step%n",
        sd.get("model").asText(), sd.get("fit").get("samplesPerSecond").asDouble(),
        sd.get("metered").get("samplesPerSecond").asDouble(),
        100 * sd.get("metered").get("overhead").asDouble(),
        sd.get("metering").get("nanosPerStep").asDouble(),
        100 * sd.get("metering").get("shareOfStep").asDouble());
    for (String k : new String[] {"cpu", "cpuSpareCores", "wait"}) {
      var o = sd.get("slowData").get(k);
      out.printf(Locale.ROOT, "  slow source (%d µs of %s per sample, ND4J threads %d): fit %.0f"
          + " samples/s, PrefetchingDataSetIterator (2 workers) %.0f samples/s, speedup"
          + " %.2f×%n", sampleMicros, k.equals("wait") ? "waiting" : "CPU",
          (o.has("engineThreads") ? o : sd.get("slowData")).get("engineThreads").asInt(),
          o.get("fit").get("samplesPerSecond").asDouble(),
          o.get("prefetching").get("samplesPerSecond").asDouble(), o.get("speedup").asDouble());
    }
  }

  /**
   * One slow-data comparison: DJL's own sequential iteration of the slow rows against the
   * prefetching dataset, alternating, medians.
   */
  private void slow(ObjectNode into, String path, float[][] data, boolean cpu) throws Exception {
    try (Model model = DjlTrainingExample.model(7);
        Trainer trainer = model.newTrainer(DjlTrainingExample.config())) {
      trainer.initialize(new Shape(BATCH, DjlTrainingExample.FEATURES));
      SlowRows source = new SlowRows(data, sampleMicros * 1000L, cpu);
      try (PrefetchingDataset prefetching = PrefetchingDataset.builder(source).batchSize(BATCH)
          .workers(2).depth(8).build()) {
        EasyTrain.fit(trainer, 1, prefetching, null);
        prefetchSpeedup(into, path, "easyTrain", () -> EasyTrain.fit(trainer, 1, source, null),
            () -> EasyTrain.fit(trainer, 1, prefetching, null));
      }
    }
  }


  /**
   * What the listener adds to one step, measured directly: the metered iterator's hasNext and
   * next and the listener's onTrainingBatch around real batches, against the bare iteration.
   */
  private static double meteringNanosPerStep() throws Exception {
    try (Model model = DjlTrainingExample.model(7);
        Trainer trainer = model.newTrainer(DjlTrainingExample.config())) {
      var ds = DjlTrainingExample.dataset(model.getNDManager(),
          DjlTrainingExample.rows(BATCH * 4, 3), BATCH);
      java.util.List<ai.djl.training.dataset.Batch> batches = new java.util.ArrayList<>();
      ds.getData(model.getNDManager()).forEach(batches::add);
      Dataset list = new Dataset() {
        @Override
        public Iterable<ai.djl.training.dataset.Batch> getData(NDManager manager) {
          return batches;
        }

        @Override
        public void prepare(Progress progress) {}
      };
      var data = new ai.djl.training.listener.TrainingListener.BatchData(batches.get(0),
          java.util.Map.of(), java.util.Map.of());
      HyperFramesListener listener = new HyperFramesListener();
      Dataset metered = listener.metered(list);
      int passes = 50_000;
      double best = Double.MAX_VALUE;
      for (int rep = 0; rep < 5; rep++) {
        long t0 = System.nanoTime();
        long sink = 0;
        for (int p = 0; p < passes; p++) {
          for (var b : list.getData(null)) {
            sink += b.getSize();
          }
        }
        long t1 = System.nanoTime();
        for (int p = 0; p < passes; p++) {
          for (var b : metered.getData(null)) {
            sink += b.getSize();
            listener.onTrainingBatch(trainer, data);
          }
        }
        long t2 = System.nanoTime();
        if (sink == 42) {
          System.out.print("");
        }
        best = Math.min(best, ((t2 - t1) - (t1 - t0)) / (double) (passes * batches.size()));
      }
      batches.forEach(ai.djl.training.dataset.Batch::close);
      return Math.max(0, best);
    }
  }

  /**
   * The same comparison for {@code SameDiff.fit}: plain against the {@link SameDiffMeterListener}
   * (interleaved epochs, and its callbacks timed directly), and a slow source read on the
   * training thread against a {@link PrefetchingDataSetIterator} with two workers.
   */
  private void sameDiff(ObjectNode sd, float[][] data) throws Exception {
    sd.put("model", "mlp 128-256-256-10").put("batch", BATCH).put("rows", rows)
        .put("rounds", rounds);
    BatchSource<DataSet> source = SameDiffTrainingExample.batches(data, BATCH);
    SameDiff graph = SameDiffTrainingExample.mlp(7);
    SameDiffMeterListener listener = new SameDiffMeterListener();
    DataSetIterator plain = SameDiffTrainingExample.iterator(source, BATCH);
    graph.fit(plain, 1);
    graph.fit(plain, 1, listener);
    double[][] epoch = new double[2][rounds];
    for (int r = 0; r < rounds; r++) {
      for (int v = 0; v < 2; v++) {
        int variant = (r + v) % 2;
        long t0 = System.nanoTime();
        if (variant == 0) {
          graph.fit(plain, 1);
        } else {
          graph.fit(plain, 1, listener);
        }
        epoch[variant][r] = (System.nanoTime() - t0) / 1e9;
      }
    }
    recorded.put("samediff.fit.epochSeconds", RecordOption.seconds(epoch[0]));
    recorded.put("samediff.metered.epochSeconds", RecordOption.seconds(epoch[1]));
    double base = median(epoch[0]);
    double meteringNanos = sameDiffMeteringNanos();
    sd.putObject("metering").put("nanosPerStep", meteringNanos)
        .put("shareOfStep", meteringNanos * 1e-9 / (base * BATCH / rows));
    sd.putObject("fit").put("epochSeconds", base).put("samplesPerSecond", rows / base)
        .put("relativeIqr", relativeIqr(epoch[0]));
    double m = median(epoch[1]);
    sd.putObject("metered").put("epochSeconds", m).put("samplesPerSecond", rows / m)
        .put("overhead", m / base - 1).put("relativeIqr", relativeIqr(epoch[1]));

    ObjectNode slow = sd.putObject("slowData").put("sampleMicros", sampleMicros)
        .put("workers", 2);
    int threads = Nd4j.getEnvironment().maxThreads();
    int cores = Runtime.getRuntime().availableProcessors();
    slow.put("cores", cores).put("engineThreads", threads);
    sameDiffSlow(slow.putObject("cpu"), "samediff.slowData.cpu", source, true);
    Nd4j.getEnvironment().setMaxThreads(Math.max(1, cores - 2));
    try {
      sameDiffSlow(slow.putObject("cpuSpareCores").put("engineThreads", Math.max(1, cores - 2)),
          "samediff.slowData.cpuSpareCores",
          source, true);
    } finally {
      Nd4j.getEnvironment().setMaxThreads(threads);
    }
    sameDiffSlow(slow.putObject("wait"), "samediff.slowData.wait", source, false);
  }

  private void sameDiffSlow(ObjectNode into, String path, BatchSource<DataSet> fast,
      boolean cpu)
      throws Exception {
    long nanos = sampleMicros * 1000L * BATCH;
    BatchSource<DataSet> source = fast.preparing(b -> cost(nanos, cpu));
    SameDiff graph = SameDiffTrainingExample.mlp(7);
    try (PrefetchingDataSetIterator prefetching = PrefetchingDataSetIterator.builder(source)
        .workers(2).depth(8).batchSize(BATCH).inputColumns(DjlTrainingExample.FEATURES)
        .totalOutcomes(DjlTrainingExample.CLASSES).build()) {
      DataSetIterator sequential = new SourceIterator(source);
      graph.fit(prefetching, 1);
      prefetchSpeedup(into, path, "fit", () -> graph.fit(sequential, 1), () -> graph.fit(prefetching, 1));
    }
  }

  /** One epoch of training, timed. */
  @FunctionalInterface
  private interface Epoch {
    void run() throws Exception;
  }

  /**
   * The framework's own epoch ({@code plain}, reported under {@code plainName}) against the
   * prefetching one, alternating, medians, and their ratio as {@code speedup}.
   */
  private void prefetchSpeedup(ObjectNode into, String path, String plainName, Epoch plain,
      Epoch prefetching) throws Exception {
    double[][] epoch = new double[2][Math.max(3, rounds / 3)];
    for (int r = 0; r < epoch[0].length; r++) {
      long t0 = System.nanoTime();
      plain.run();
      long t1 = System.nanoTime();
      prefetching.run();
      long t2 = System.nanoTime();
      epoch[0][r] = (t1 - t0) / 1e9;
      epoch[1][r] = (t2 - t1) / 1e9;
    }
    recorded.put(path + "." + plainName + ".epochSeconds", RecordOption.seconds(epoch[0]));
    recorded.put(path + ".prefetching.epochSeconds", RecordOption.seconds(epoch[1]));
    double a = median(epoch[0]);
    double b = median(epoch[1]);
    into.putObject(plainName).put("epochSeconds", a).put("samplesPerSecond", rows / a);
    into.putObject("prefetching").put("epochSeconds", b).put("samplesPerSecond", rows / b);
    into.put("speedup", a / b);
  }


  /** The listener's callbacks for one iteration, timed on their own. */
  private static double sameDiffMeteringNanos() {
    SameDiffMeterListener l = new SameDiffMeterListener();
    org.nd4j.autodiff.listeners.At at = org.nd4j.autodiff.listeners.At.defaultAt();
    org.nd4j.linalg.dataset.MultiDataSet mds = new org.nd4j.linalg.dataset.MultiDataSet(
        Nd4j.zeros(DataType.FLOAT, BATCH, 4), Nd4j.zeros(DataType.FLOAT, BATCH, 2));
    l.epochStart(null, at);
    int n = 200_000;
    double best = Double.MAX_VALUE;
    for (int rep = 0; rep < 5; rep++) {
      long t0 = System.nanoTime();
      for (int i = 0; i < n; i++) {
        l.iterationStart(null, at, mds, 0);
        l.preUpdate(null, at, null, null);
        l.preUpdate(null, at, null, null);
        l.iterationDone(null, at, mds, null);
      }
      best = Math.min(best, (System.nanoTime() - t0) / (double) n);
    }
    return best;
  }

  /** Spends {@code nanos} of CPU or of waiting. */
  static void cost(long nanos, boolean cpu) {
    long end = System.nanoTime() + nanos;
    if (cpu) {
      while (System.nanoTime() < end) {
        Thread.onSpinWait();
      }
    } else {
      for (long left = nanos; left > 0; left = end - System.nanoTime()) {
        java.util.concurrent.locks.LockSupport.parkNanos(left);
      }
    }
  }

  /** A source's batches built on the training thread, in order: DL4J's usual iterator. */
  static final class SourceIterator implements DataSetIterator {
    private static final long serialVersionUID = 1L;
    private final transient BatchSource<DataSet> source;
    private int next;
    private transient org.nd4j.linalg.dataset.api.DataSetPreProcessor pre;

    SourceIterator(BatchSource<DataSet> source) {
      this.source = source;
    }

    @Override
    public boolean hasNext() {
      return next < source.batches();
    }

    @Override
    public DataSet next() {
      if (!hasNext()) {
        throw new java.util.NoSuchElementException("epoch finished");
      }
      try {
        DataSet d = source.batch(0, next++);
        if (pre != null) {
          pre.preProcess(d);
        }
        return d;
      } catch (Exception e) {
        throw new IllegalStateException("batch " + (next - 1) + ": " + e, e);
      }
    }

    @Override
    public DataSet next(int num) {
      return next();
    }

    @Override
    public int inputColumns() {
      return DjlTrainingExample.FEATURES;
    }

    @Override
    public int totalOutcomes() {
      return DjlTrainingExample.CLASSES;
    }

    @Override
    public boolean resetSupported() {
      return true;
    }

    @Override
    public boolean asyncSupported() {
      return false;
    }

    @Override
    public void reset() {
      next = 0;
    }

    @Override
    public int batch() {
      return BATCH;
    }

    @Override
    public void setPreProcessor(org.nd4j.linalg.dataset.api.DataSetPreProcessor p) {
      this.pre = p;
    }

    @Override
    public org.nd4j.linalg.dataset.api.DataSetPreProcessor getPreProcessor() {
      return pre;
    }

    @Override
    public java.util.List<String> getLabels() {
      return null;
    }
  }

  private static double run(Trainer trainer, int variant, Dataset plain, Dataset metered,
      HyperFramesListener listener) throws Exception {
    long t0 = System.nanoTime();
    switch (variant) {
      case 0 -> EasyTrain.fit(trainer, 1, plain, null);
      case 1 -> EasyTrain.fit(trainer, 1, metered, null);
      case 2 -> DjlTrainer.train(trainer).data(plain).listener(listener).fit();
      default -> DjlTrainer.train(trainer).data(plain).listener(listener)
          .skipNonFiniteSteps(false).fit();
    }
    return (System.nanoTime() - t0) / 1e9;
  }

  /** Interquartile range over the median: the run-to-run noise the overheads sit in. */
  private static double relativeIqr(double[] v) {
    double[] s = v.clone();
    Arrays.sort(s);
    double q1 = s[(int) Math.floor(0.25 * (s.length - 1))];
    double q3 = s[(int) Math.ceil(0.75 * (s.length - 1))];
    return (q3 - q1) / median(v);
  }

  private static double median(double[] v) {
    double[] s = v.clone();
    Arrays.sort(s);
    return s.length % 2 == 1 ? s[s.length / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
  }

  /**
   * Rows whose every read first spends {@code nanos} of CPU (a decoder's work) or of waiting
   * (a read from remote storage).
   */
  static final class SlowRows extends RandomAccessDataset {
    private final float[] x;
    private final float[] y;
    private final long nanos;
    private final boolean cpu;

    SlowRows(float[][] rows, long nanos, boolean cpu) {
      super(new Settings().setSampling(BATCH, true));
      this.x = rows[0];
      this.y = rows[1];
      this.nanos = nanos;
      this.cpu = cpu;
    }

    private static final class Settings extends BaseBuilder<Settings> {
      @Override
      protected Settings self() {
        return this;
      }
    }

    @Override
    public Record get(NDManager manager, long index) {
      cost(nanos, cpu);
      int f = DjlTrainingExample.FEATURES;
      float[] row = Arrays.copyOfRange(x, (int) index * f, (int) index * f + f);
      return new Record(new ai.djl.ndarray.NDList(manager.create(row)),
          new ai.djl.ndarray.NDList(manager.create(y[(int) index])));
    }

    @Override
    protected long availableSize() {
      return y.length;
    }

    @Override
    public void prepare(Progress progress) {}
  }
}
