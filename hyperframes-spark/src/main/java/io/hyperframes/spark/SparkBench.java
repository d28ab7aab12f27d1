package io.hyperframes.spark;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import org.apache.spark.SparkConf;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.deeplearning4j.nn.multilayer.MultiLayerNetwork;
import org.deeplearning4j.spark.impl.multilayer.SparkDl4jMultiLayer;
import org.deeplearning4j.spark.api.RDDTrainingApproach;
import org.deeplearning4j.spark.impl.paramavg.ParameterAveragingTrainingMaster;
import org.nd4j.linalg.dataset.DataSet;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code java -jar hyperframes-spark.jar} (and {@code hyperframes bench compression --spark
 * MASTER}, which runs it in a process of its own): the example MLP trained data-parallel on a
 * Spark master, in one run: the same network in one process for the reference accuracy; DL4J's
 * parameter averaging with DL4J's default layers and with the fused ones (the fused network's
 * speed-up on Spark); and {@link EncodedDataParallel} with every codec asked for and with none,
 * the bytes per step counted from the messages that crossed.
 *
 * <p>Every side trains the same rows in the same order from the same initial weights, after an
 * untimed warm-up fit of its own on two steps' rows. Time is wall time of the fits, Spark's
 * scheduling included.
 */
@Command(name = "hyperframes-spark", mixinStandardHelpOptions = true,
    description = "The example MLP trained data-parallel on Spark: DL4J's parameter averaging"
        + " with default and fused layers, and encoded updates with each codec.")
public final class SparkBench implements Callable<Integer> {
  /** The global mini-batch of the example MLP. */
  static final int BATCH = 256;

  @Spec CommandLine.Model.CommandSpec spec;

  @Option(names = "--master", defaultValue = "local[2]",
      description = "Spark master: local[N] (N task threads in this process), local-cluster[N,"
          + "CORES,MB] (N executor processes on this machine; needs SPARK_HOME and"
          + " SPARK_SCALA_VERSION) or a cluster's URL.")
  String master;

  @Option(names = "--workers", defaultValue = "2", description = "Data-parallel workers.")
  int workers;

  @Option(names = "--epochs", defaultValue = "2", description = "Epochs each side trains.")
  int epochs;

  @Option(names = "--hidden", defaultValue = "2048",
      description = "Units in each hidden layer (the example MLP has 2048).")
  int hidden;

  @Option(names = "--rows", defaultValue = "8192", description = "Training rows.")
  int rows;

  @Option(names = "--codecs", defaultValue = "topk-0.01-ef,int8,sign-ef", split = ",",
      description = "Codecs for the encoded updates (none is always run).")
  List<String> codecs;

  @Option(names = "--format", defaultValue = "table", description = "table or json.")
  String format;

  /** Entry point: exit status 0, 1 on an error, 2 on a bad command line. */
  public static void main(String[] args) {
    if (System.getProperty("log4j2.configurationFile") == null) {
      System.setProperty("log4j2.configurationFile", "hyperframes-spark-log4j2.properties");
    }
    CommandLine cli = new CommandLine(new SparkBench());
    cli.setExecutionExceptionHandler((e, line, parsed) -> {
      if (e instanceof IllegalArgumentException) {
        line.getErr().println(e.getMessage());
        return 2;
      }
      throw e;
    });
    System.exit(cli.execute(args));
  }

  private record Side(double accuracy, double samplesPerSecond) {}

  private record CodecRun(String codec, double accuracy, double bytesPerStep,
      double samplesPerSecond) {}

  @Override
  public Integer call() throws Exception {
    check("--workers", workers, 1, 64);
    check("--epochs", epochs, 1, 1000);
    check("--hidden", hidden, 8, 8192);
    check("--rows", rows, 2 * BATCH, 10_000_000);
    if (BATCH % workers != 0) {
      throw new IllegalArgumentException("--workers: " + workers + " does not divide the global"
          + " batch " + BATCH);
    }
    if (!format.equals("table") && !format.equals("json")) {
      throw new IllegalArgumentException("--format: " + format + " is not table or json");
    }
    for (String c : codecs) {
      io.hyperframes.nd4j.compress.GradientCodec.named(c);
    }
    SparkConf conf = new SparkConf().setMaster(master).setAppName("hyperframes-spark-bench")
        .set("spark.ui.enabled", "false");
    if (master.startsWith("local")) {
      conf.set("spark.driver.host", "127.0.0.1").set("spark.driver.bindAddress", "127.0.0.1");
    }
    if (master.startsWith("local-cluster")) {
      if (System.getenv("SPARK_HOME") == null || System.getenv("SPARK_SCALA_VERSION") == null) {
        throw new IllegalArgumentException("--master " + master + ": Spark's launcher needs"
            + " SPARK_HOME (a folder with a jars subfolder) and SPARK_SCALA_VERSION=2.12 in the"
            + " environment");
      }
      java.nio.file.Files.createDirectories(java.nio.file.Path.of(System.getenv("SPARK_HOME"),
          "jars"));
      conf.set("spark.executor.extraClassPath", System.getProperty("java.class.path"))
          .set("spark.executor.extraJavaOptions", String.join(" ", JvmOptions.SPARK_ON_JAVA_17));
    }
    int perWorker = BATCH / workers;
    int steps = rows / BATCH;
    ExampleData data = new ExampleData(20261130);
    List<DataSet> global = data.batches(steps, BATCH);
    List<DataSet> test = data.batches(8, BATCH);
    List<DataSet> shares = new ArrayList<>();
    for (DataSet d : global) {
      for (DataSet part : d.batchBy(perWorker)) {
        shares.add(part);
      }
    }
    PrintWriter err = spec.commandLine().getErr();
    Side single = single(global, test);
    err.printf(Locale.ROOT, "one process: accuracy %.2f %%%n", 100 * single.accuracy());
    err.flush();
    Side[] averaging = new Side[2];
    List<CodecRun> encoded = new ArrayList<>();
    try (JavaSparkContext sc = new JavaSparkContext(conf)) {
      JavaRDD<DataSet> rdd = sc.parallelize(shares, workers).cache();
      JavaRDD<DataSet> warm = sc.parallelize(shares.subList(0, 2 * workers), workers).cache();
      for (int fused = 0; fused < 2; fused++) {
        averaging[fused] = averaging(sc, rdd, warm, fused == 1, perWorker, test);
        err.printf(Locale.ROOT, "parameter averaging, %s layers: accuracy %.2f %%%n",
            fused == 1 ? "fused" : "default", 100 * averaging[fused].accuracy());
        err.flush();
      }
      List<String> all = new ArrayList<>();
      all.add("none");
      all.addAll(codecs);
      for (String c : all) {
        // Lineage checkpoints every 4 steps: at most 4 steps' messages (W dense FP32 updates a
        // step without a codec) stay in memory.
        EncodedDataParallel dp = EncodedDataParallel.on(sc, ExampleData.mlp(hidden, true))
            .codec(c).workers(workers).truncateLineageEvery(4).build();
        EncodedDataParallel warmUp = EncodedDataParallel.on(sc, ExampleData.mlp(hidden, true))
            .codec(c).workers(workers).build();
        warmUp.fit(warm, 1);
        EncodedDataParallel.Result r = dp.fit(rdd, epochs);
        encoded.add(new CodecRun(c, ExampleData.accuracy(dp.network(), test),
            (double) r.bytesExchanged() / r.steps(), r.samplesPerSecond()));
        err.printf(Locale.ROOT, "encoded %s: accuracy %.2f %%%n", c,
            100 * encoded.get(encoded.size() - 1).accuracy());
        err.flush();
      }
    }
    print(single, averaging, encoded);
    return 0;
  }

  private Side single(List<DataSet> global, List<DataSet> test) {
    MultiLayerNetwork net = new MultiLayerNetwork(ExampleData.mlp(hidden, true));
    net.init();
    MultiLayerNetwork warm = new MultiLayerNetwork(ExampleData.mlp(hidden, true));
    warm.init();
    warm.fit(global.get(0));
    long start = System.nanoTime();
    for (int e = 0; e < epochs; e++) {
      for (DataSet d : global) {
        net.fit(d);
      }
    }
    double seconds = (System.nanoTime() - start) / 1e9;
    return new Side(ExampleData.accuracy(net, test),
        (double) epochs * global.size() * BATCH / seconds);
  }

  private Side averaging(JavaSparkContext sc, JavaRDD<DataSet> rdd, JavaRDD<DataSet> warm,
      boolean fused, int perWorker, List<DataSet> test) {
    ParameterAveragingTrainingMaster.Builder tm = new ParameterAveragingTrainingMaster.Builder(
        perWorker).batchSizePerWorker(perWorker).averagingFrequency(1)
        .workerPrefetchNumBatches(0).saveUpdater(true).rngSeed(12345);
    if (!master.startsWith("local[")) {
      // DL4J's default (Export) writes the batches to the default file system, which executors
      // in other processes cannot share when it is this machine's: hand them over directly.
      // Its storage level is the one the batches are already cached at.
      tm.rddTrainingApproach(RDDTrainingApproach.Direct)
          .storageLevel(org.apache.spark.storage.StorageLevel.MEMORY_ONLY());
    }
    new SparkDl4jMultiLayer(sc, ExampleData.mlp(hidden, fused), tm.build()).fit(warm);
    SparkDl4jMultiLayer net = new SparkDl4jMultiLayer(sc, ExampleData.mlp(hidden, fused),
        tm.build());
    long start = System.nanoTime();
    for (int e = 0; e < epochs; e++) {
      net.fit(rdd);
    }
    double seconds = (System.nanoTime() - start) / 1e9;
    return new Side(ExampleData.accuracy(net.getNetwork(), test),
        (double) epochs * rdd.count() * perWorker / seconds);
  }

  private void print(Side single, Side[] averaging, List<CodecRun> encoded) throws Exception {
    PrintWriter out = spec.commandLine().getOut();
    double dense = encoded.get(0).bytesPerStep();
    double speedup = averaging[1].samplesPerSecond() / averaging[0].samplesPerSecond();
    if (format.equals("json")) {
      ObjectMapper m = new ObjectMapper();
      ObjectNode root = m.createObjectNode();
      root.put("master", master);
      root.put("workers", workers);
      root.put("epochs", epochs);
      root.put("hidden", hidden);
      root.put("globalBatch", BATCH);
      root.put("trainRows", rows / BATCH * BATCH);
      root.set("singleProcess", side(m, single));
      ObjectNode avg = root.putObject("parameterAveraging");
      avg.set("default", side(m, averaging[0]));
      avg.set("fused", side(m, averaging[1]));
      avg.put("fusedSpeedup", speedup);
      ArrayNode rowsOut = root.putArray("encoded");
      for (CodecRun e : encoded) {
        ObjectNode o = rowsOut.addObject();
        o.put("codec", e.codec());
        o.put("accuracy", e.accuracy());
        o.put("accuracyDelta", e.accuracy() - single.accuracy());
        o.put("bytesPerStep", e.bytesPerStep());
        o.put("ratio", dense / e.bytesPerStep());
        o.put("samplesPerSecond", e.samplesPerSecond());
      }
      out.println(m.writerWithDefaultPrettyPrinter().writeValueAsString(root));
    } else {
      out.printf(Locale.ROOT, "%s, %d workers, %d epochs of %d rows, hidden %d%n", master,
          workers, epochs, rows / BATCH * BATCH, hidden);
      out.printf(Locale.ROOT, "one process: accuracy %.2f %%, %.0f samples/s%n",
          100 * single.accuracy(), single.samplesPerSecond());
      out.printf(Locale.ROOT, "parameter averaging: default %.2f %% at %.0f samples/s, fused"
          + " %.2f %% at %.0f samples/s, fused speed-up %.2fx%n", 100 * averaging[0].accuracy(),
          averaging[0].samplesPerSecond(), 100 * averaging[1].accuracy(),
          averaging[1].samplesPerSecond(), speedup);
      out.printf(Locale.ROOT, "%-16s %9s %8s %14s %9s %10s%n", "encoded codec", "accuracy",
          "delta", "bytes/step", "ratio", "samples/s");
      for (CodecRun e : encoded) {
        out.printf(Locale.ROOT, "%-16s %8.2f%% %+8.2f %14.4g %9.1f %10.0f%n", e.codec(),
            100 * e.accuracy(), 100 * (e.accuracy() - single.accuracy()), e.bytesPerStep(),
            dense / e.bytesPerStep(), e.samplesPerSecond());
      }
    }
    out.flush();
  }

  private static ObjectNode side(ObjectMapper m, Side s) {
    ObjectNode o = m.createObjectNode();
    o.put("accuracy", s.accuracy());
    o.put("samplesPerSecond", s.samplesPerSecond());
    return o;
  }

  private static void check(String option, int value, int low, int high) {
    if (value < low || value > high) {
      throw new IllegalArgumentException(option + ": must be in [" + low + ", " + high
          + "], got " + value);
    }
  }
}
