package io.hyperframes.cli;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.hyperframes.json.Json;
import io.hyperframes.nd4j.compress.Encoded;
import io.hyperframes.nd4j.compress.GradientCodec;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import org.deeplearning4j.nn.multilayer.MultiLayerNetwork;
import org.deeplearning4j.nn.updater.BaseMultiLayerUpdater;
import org.deeplearning4j.nn.workspace.LayerWorkspaceMgr;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.dataset.DataSet;
import org.nd4j.linalg.dataset.api.iterator.DataSetIterator;
import org.nd4j.linalg.factory.Nd4j;
import org.nd4j.linalg.indexing.NDArrayIndex;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code hyperframes bench compression}: every gradient codec against uncompressed
 * data-parallel training of the example MLP (784-2048-2048-10, Adam 1e-3, global batch 256), in
 * one run.
 *
 * <p>Data parallelism is synchronous and simulated in one JVM, the way DL4J's
 * {@code ParallelWrapper} shares gradients: each of the W workers is a replica of the network
 * with its own Adam state; it computes the gradient of its 256/W rows, its updater turns it into
 * an update, it encodes the update with its own codec (its own error-feedback residual), and
 * every replica applies the mean of the decoded updates, so the replicas keep equal weights.
 * Every codec sees the same batches in the same order from the same initial weights, so the
 * final test accuracy measures what the compression costs; the bytes per step are the sum of the
 * W messages' serialized sizes. The workers run one after another on
 * this machine, so {@code samplesPerSecond} is the simulation's (compute plus encoding and
 * decoding), not a cluster's. Encode+decode throughput is timed apart, on one thread, on a real
 * gradient of the network (the first step's), as the median of repeats.
 */
@Command(name = "compression", mixinStandardHelpOptions = true,
    description = "Gradient codecs against uncompressed data-parallel training of the example"
        + " MLP: ratio, encode+decode GB/s per core, accuracy, bytes per step.")
final class BenchCompressionCommand implements Callable<Integer> {

  /** The codecs of the JSON contract, in its order. */
  static final String CODECS = "topk-0.01-ef,randomk-0.01-ef,int8,sign-ef,bf16,dl4j-threshold";

  @Spec CommandSpec spec;

  @Option(names = "--codecs", defaultValue = CODECS, split = ",",
      description = "Codecs to compare (default: " + CODECS + ").")
  List<String> codecs;

  @Option(names = "--workers", defaultValue = "4", description = "Data-parallel workers.")
  int workers;

  @Option(names = "--steps", defaultValue = "300", description = "Training steps per codec.")
  int steps;

  @Option(names = "--hidden", defaultValue = "2048",
      description = "Units in each hidden layer (the example MLP has 2048).")
  int hidden;

  @Option(names = "--rows", defaultValue = "8192", description = "Training rows.")
  int rows;

  @Option(names = "--repeats", defaultValue = "9",
      description = "Timed encode+decode repeats per codec (median reported).")
  int repeats;

  @Option(names = "--spark", paramLabel = "MASTER",
      description = "Train on Spark instead, in a process of its own: local[N] (N task threads),"
          + " local-cluster[N,CORES,MB] (N executor processes on this machine) or a cluster's"
          + " URL. Runs the example MLP in one process, in DL4J's parameter averaging with"
          + " default and fused layers, and with encoded updates per codec, whole epochs of"
          + " --rows (at least --steps steps); --repeats does not apply (docs/distributed.md).")
  String spark;

  @Option(names = "--spark-jar", paramLabel = "PATH",
      description = "The Spark module's runnable jar (default " + SparkRun.JAR + ").")
  Path sparkJar;

  @Mixin FormatOption format;

  @Mixin RecordOption record;

  /** One codec's figures. */
  record Row(String codec, double ratio, double encodeDecodeGBps, double reconstructionError,
      double accuracy, double bytesPerStep, double samplesPerSecond, double[] roundTripSeconds,
      double[] stepSeconds) {}

  /** Round-trip throughput, error and every timed round trip of one codec. */
  private record Timing(double gbps, double error, double[] seconds) {}

  @Override
  public Integer call() throws Exception {
    check("--workers", workers, 1, 64);
    check("--steps", steps, 1, 100_000);
    check("--hidden", hidden, 8, 8192);
    check("--repeats", repeats, 1, 1000);
    check("--rows", rows, TrainBench.BATCH, 1_000_000);
    if (TrainBench.BATCH % workers != 0) {
      throw new IllegalArgumentException("--workers: " + workers + " does not divide the global"
          + " batch " + TrainBench.BATCH);
    }
    if (spark != null) {
      return onSpark();
    }
    List<GradientCodec> probes = new ArrayList<>();
    for (String c : codecs) {
      probes.add(GradientCodec.named(c));
    }
    Path dir = Files.createTempDirectory("hf-compression");
    try {
      TrainBench data = new TrainBench(dir, rows, 2048);
      List<DataSet> batches = new ArrayList<>();
      DataSetIterator it = data.csvIterator();
      while (it.hasNext()) {
        DataSet ds = it.next();
        if (ds.numExamples() == TrainBench.BATCH) {
          batches.add(ds);
        }
      }
      INDArray sample = firstGradient(batches.get(0));
      var err = spec.commandLine().getErr();
      Row baseline = train("none", data, batches, sample);
      err.printf(Locale.ROOT, "none: accuracy %.2f %% (%d of %d codecs)%n",
          100 * baseline.accuracy(), 0, probes.size());
      List<Row> rowsOut = new ArrayList<>();
      for (GradientCodec p : probes) {
        Row r = train(p.id(), data, batches, sample);
        rowsOut.add(r);
        err.printf(Locale.ROOT, "%s: accuracy %.2f %%, ratio %.1f (%d of %d codecs)%n", r.codec(),
            100 * r.accuracy(), r.ratio(), rowsOut.size(), probes.size());
        err.flush();
      }
      print(baseline, rowsOut, sample.length());
      if (record.wanted()) {
        java.util.Map<String, io.hyperframes.runtime.BenchmarkRecord.Metric> metrics =
            new java.util.TreeMap<>();
        List<Row> all = new ArrayList<>(rowsOut);
        all.add(0, baseline);
        for (Row r : all) {
          metrics.put(r.codec() + ".roundTripSeconds", RecordOption.seconds(r.roundTripSeconds()));
          metrics.put(r.codec() + ".stepSeconds", RecordOption.seconds(r.stepSeconds()));
        }
        record.write(java.util.Map.of(
            "workers", Integer.toString(workers), "steps", Integer.toString(steps),
            "hidden", Integer.toString(hidden), "trainRows", Integer.toString(rows),
            "codecs", String.join(",", codecs)), metrics);
      }
    } finally {
      try (var files = Files.walk(dir)) {
        files.sorted(java.util.Comparator.reverseOrder()).forEach(f -> f.toFile().delete());
      }
    }
    return 0;
  }

  /** {@code --spark}: the same comparison on a Spark master, by the Spark module's jar. */
  private int onSpark() throws Exception {
    if (spark.isBlank()) {
      throw new IllegalArgumentException("--spark: a master must be given (local[2],"
          + " local-cluster[2,1,2048] or a cluster's URL)");
    }
    if (record.wanted()) {
      throw new IllegalArgumentException("--record: not available with --spark (the Spark run"
          + " reports throughput and bytes, not per-step samples)");
    }
    Path jar = SparkRun.jar(sparkJar);
    int stepsPerEpoch = rows / TrainBench.BATCH;
    int epochs = (steps + stepsPerEpoch - 1) / stepsPerEpoch;
    List<String> sparkCodecs = new ArrayList<>();
    for (String c : codecs) {
      if (!c.equals("none") && !c.equals("dl4j-threshold")) {
        sparkCodecs.add(c);
      }
    }
    if (sparkCodecs.isEmpty()) {
      throw new IllegalArgumentException("--codecs: none of " + codecs + " runs on Spark"
          + " (dl4j-threshold cannot: its state lives in DL4J's encoder; none always runs)");
    }
    List<String> args = List.of("--workers", Integer.toString(workers), "--epochs",
        Integer.toString(epochs), "--hidden", Integer.toString(hidden), "--rows",
        Integer.toString(rows), "--codecs", String.join(",", sparkCodecs), "--format",
        format.json() ? "json" : "table");
    return SparkRun.run(jar, spark, args, spec.commandLine().getOut());
  }

  private static void check(String option, int value, int low, int high) {
    if (value < low || value > high) {
      throw new IllegalArgumentException(option + ": must be in [" + low + ", " + high
          + "], got " + value);
    }
  }

  /** The gradient of the untrained network on one batch: what the codecs are timed on. */
  private INDArray firstGradient(DataSet batch) {
    MultiLayerNetwork net = TrainBench.dl4jNetwork(hidden);
    net.setInput(batch.getFeatures());
    net.setLabels(batch.getLabels());
    net.computeGradientAndScore();
    return net.getFlattenedGradients().dup().reshape(-1);
  }

  private Row train(String id, TrainBench data, List<DataSet> batches, INDArray sample) {
    Timing timing = time(id, sample);
    double[] stepSeconds = new double[steps];
    // One replica per worker, from the same seed: the same weights, each with its own Adam
    // state, as ParallelWrapper's workers have.
    MultiLayerNetwork[] net = new MultiLayerNetwork[workers];
    BaseMultiLayerUpdater<?>[] updater = new BaseMultiLayerUpdater<?>[workers];
    GradientCodec[] worker = new GradientCodec[workers];
    for (int w = 0; w < workers; w++) {
      net[w] = TrainBench.dl4jNetwork(hidden);
      updater[w] = (BaseMultiLayerUpdater<?>) net[w].getUpdater();
      worker[w] = GradientCodec.named(id);
    }
    long elements = net[0].getFlattenedGradients().length();
    INDArray sum = Nd4j.create(DataType.FLOAT, net[0].getFlattenedGradients().shape());
    INDArray applied = sum.reshape(net[0].params().shape());
    int share = TrainBench.BATCH / workers;
    long bytes = 0;
    long start = System.nanoTime();
    for (int step = 0; step < steps; step++) {
      long stepStart = System.nanoTime();
      DataSet batch = batches.get(step % batches.size());
      sum.assign(0);
      for (int w = 0; w < workers; w++) {
        var rows = NDArrayIndex.interval(w * share, (w + 1) * share);
        net[w].setInput(batch.getFeatures().get(rows, NDArrayIndex.all()));
        net[w].setLabels(batch.getLabels().get(rows, NDArrayIndex.all()));
        net[w].computeGradientAndScore();
        // The worker's own Adam turns its gradient into its update, in place; the update is
        // what is encoded, as DL4J's EncodedGradientsAccumulator does.
        updater[w].update(net[w].gradient(), step, 0, share, LayerWorkspaceMgr.noWorkspaces());
        Encoded m = worker[w].encode(net[w].getFlattenedGradients());
        bytes += m.bytes();
        worker[w].decodeAdd(m, sum);
      }
      sum.divi(workers);
      for (int w = 0; w < workers; w++) {
        net[w].params().subi(applied);
      }
      stepSeconds[step] = (System.nanoTime() - stepStart) / 1e9;
    }
    double seconds = (System.nanoTime() - start) / 1e9;
    double bytesPerStep = (double) bytes / steps;
    double ratio = 4.0 * elements * workers / bytesPerStep;
    return new Row(id, ratio, timing.gbps(), timing.error(), data.accuracy(net[0]), bytesPerStep,
        steps * (double) TrainBench.BATCH / seconds, timing.seconds(), stepSeconds);
  }

  /**
   * Median single-thread encode+decode throughput (GB/s of FP32 gradient) of a fresh codec on
   * {@code g}, and the relative L2 error of one round trip.
   */
  private Timing time(String id, INDArray g) {
    GradientCodec c = GradientCodec.named(id);
    INDArray out = Nd4j.create(DataType.FLOAT, g.length());
    Encoded first = c.encode(g);
    c.decodeAdd(first, out);
    double error = out.sub(g).norm2Number().doubleValue()
        / Math.max(1e-30, g.norm2Number().doubleValue());
    double[] seconds = new double[repeats];
    // Warm-up: at least 20 round trips and one second, so that the JIT has compiled the loops.
    long warm = System.nanoTime();
    for (int i = 0; i < 20 || System.nanoTime() - warm < 1_000_000_000L; i++) {
      c.decodeAdd(c.encode(g), out);
    }
    for (int i = 0; i < repeats; i++) {
      long t = System.nanoTime();
      Encoded m = c.encode(g);
      c.decodeAdd(m, out);
      seconds[i] = (System.nanoTime() - t) / 1e9;
    }
    Arrays.sort(seconds);
    return new Timing(4.0 * g.length() / seconds[repeats / 2] / 1e9, error, seconds);
  }

  private void print(Row baseline, List<Row> rowsOut, long elements) throws Exception {
    var out = spec.commandLine().getOut();
    if (format.json()) {
      ObjectNode root = Json.mapper().createObjectNode();
      root.put("workers", workers);
      root.put("steps", steps);
      root.put("globalBatch", TrainBench.BATCH);
      root.put("gradientElements", elements);
      root.set("uncompressed", node(baseline, baseline));
      ArrayNode results = root.putArray("results");
      rowsOut.forEach(r -> results.add(node(r, baseline)));
      out.println(Json.mapper().writerWithDefaultPrettyPrinter().writeValueAsString(root));
    } else {
      out.printf(Locale.ROOT, "%d workers, %d steps of %d rows, %d gradient elements%n", workers,
          steps, TrainBench.BATCH, elements);
      out.printf(Locale.ROOT, "%-16s %9s %12s %10s %9s %8s %14s %10s%n", "codec", "ratio",
          "enc+dec GB/s", "rel. error", "accuracy", "delta", "bytes/step", "samples/s");
      for (Row r : concat(baseline, rowsOut)) {
        out.printf(Locale.ROOT, "%-16s %9.1f %12.2f %10.2e %8.2f%% %+7.2f %14.4g %10.0f%n",
            r.codec(), r.ratio(), r.encodeDecodeGBps(), r.reconstructionError(),
            100 * r.accuracy(), 100 * (r.accuracy() - baseline.accuracy()), r.bytesPerStep(),
            r.samplesPerSecond());
      }
    }
    out.flush();
  }

  private static List<Row> concat(Row first, List<Row> rest) {
    List<Row> all = new ArrayList<>(rest.size() + 1);
    all.add(first);
    all.addAll(rest);
    return all;
  }

  private static ObjectNode node(Row r, Row baseline) {
    ObjectNode o = Json.mapper().createObjectNode();
    o.put("codec", r.codec());
    o.put("ratio", r.ratio());
    o.put("encodeDecodeGBps", r.encodeDecodeGBps());
    o.put("reconstructionError", r.reconstructionError());
    o.put("accuracy", r.accuracy());
    o.put("accuracyDelta", r.accuracy() - baseline.accuracy());
    o.put("bytesPerStep", r.bytesPerStep());
    o.put("samplesPerSecond", r.samplesPerSecond());
    return o;
  }
}
