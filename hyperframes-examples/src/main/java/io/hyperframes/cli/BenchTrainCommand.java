package io.hyperframes.cli;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.hyperframes.json.Json;
import io.hyperframes.nd4j.data.EncodedDataset;
import io.hyperframes.nd4j.data.PrefetchingDataSetIterator;
import io.hyperframes.runtime.BenchmarkRecord;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** {@code hyperframes bench train}: DL4J default against the HyperFrames baseline. */
@Command(name = "train", mixinStandardHelpOptions = true,
    description = "Train the same MLP with DL4J out of the box and with the HyperFrames baseline"
        + " (pre-encoded data, prefetching, fused layers); report throughput, data wait,"
        + " loss and accuracy, with ablations.")
final class BenchTrainCommand implements Callable<Integer> {

  @Spec CommandSpec spec;

  @Option(names = "--compare-default", defaultValue = "true", fallbackValue = "true",
      negatable = true,
      description = "Also run DL4J's default pipeline (default on).")
  boolean compareDefault;

  @Option(names = "--djl", negatable = true, defaultValue = "true", fallbackValue = "true",
      description = "Also train the same MLP in DJL on PyTorch (default on).")
  boolean djl;

  @Option(names = "--epochs", defaultValue = "2", description = "Epochs (default 2).")
  int epochs;

  @Option(names = "--rows", defaultValue = "8192", description = "Training rows (default 8192).")
  int rows;

  @Mixin FormatOption format;

  @Mixin RecordOption record;

  @Option(names = "--predict",
      description = "Also predict the HyperFrames step time with the planner on a profile of"
          + " this machine (--profile, else a probe of --probe-seconds) and on a generic CPU's"
          + " spec sheet, beside the measured step.")
  boolean predict;

  @Option(names = "--profile", paramLabel = "FILE",
      description = "Profile from hyperframes probe for --predict.")
  Path profile;

  @Option(names = "--probe-seconds", defaultValue = "30",
      description = "Budget of the probe --predict runs without --profile (default 30).")
  double probeSeconds;

  @Mixin PrecisionOption precision;

  @Option(names = "--fused-kernels", negatable = true, defaultValue = "true",
      fallbackValue = "true",
      description = "Run the HyperFrames side on the fused layers (default on); with"
          + " --no-fused-kernels it trains DL4J's own layers behind the same loader, the"
          + " baseline a regression check compares against.")
  boolean fusedKernels;

  /** The five measured sides of one run; {@code dflt} is null without the default pipeline. */
  private record Sides(TrainBench.Side hf, TrainBench.Side loaderOnly,
      TrainBench.Side dl4jAccelerated, TrainBench.Side kernelsOnly, TrainBench.Side dflt) {}

  @Override
  public Integer call() throws Exception {
    io.hyperframes.nd4j.FusedDense.Precision layers = checkedOptions();
    Path dir = Files.createTempDirectory("hyperframes-bench");
    try {
      TrainBench bench = new TrainBench(dir, rows, 2048);
      Sides sides = measure(bench, layers);
      ObjectNode root = json(sides);
      if (djl) {
        try (DjlBaseline baseline = DjlBaseline.create()) {
          DjlBaseline.Trained d = baseline.train(bench.csv(), rows, bench.testFeatures(),
              bench.testLabels(), epochs);
          ObjectNode o = root.putObject("djlPytorch");
          o.put("samplesPerSecond", d.samplesPerSecond());
          o.put("accuracy", d.accuracy());
          root.put("djlSpeedup", sides.hf().samplesPerSecond() / d.samplesPerSecond());
        }
      }
      limit(root, sides, layers);
      root.put("fusedKernels", fusedKernels);
      root.put("precision", precision.name());
      root.put("precisionRequested", precision.requested());
      if (predict) {
        root.set("prediction", prediction(sides.hf()));
      }
      root.put("epochs", epochs);
      root.put("trainRows", rows);
      root.set("machine", BenchKernelsCommand.machine());
      if (record.wanted()) {
        record(sides);
      }
      var out = spec.commandLine().getOut();
      if (format.json()) {
        out.println(Json.mapper().writerWithDefaultPrettyPrinter().writeValueAsString(root));
      } else {
        out.print(table(root));
      }
      out.flush();
      return 0;
    } finally {
      try (var files = Files.walk(dir)) {
        files.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
      }
    }
  }

  /**
   * The run against this machine's own limit: {@code flopsPerSample} (6 × the MLP's weights, the
   * matmul FLOPs of a forward and backward pass by the usual MFU convention),
   * {@code gflopsPerSecond} of the HyperFrames side (and of DJL's when it ran), the matmul
   * 1024³ of the layers' format measured now ({@code matmulLimitGflops}, oneDNN) and the
   * fractions of it.
   */
  private static void limit(ObjectNode root, Sides sides,
      io.hyperframes.nd4j.FusedDense.Precision layers) {
    double flops = 6.0 * TrainBench.WEIGHTS;
    double limit = new io.hyperframes.nd4j.KernelComparison(1.0, 5).matmulGflops(
        PrecisionOption.matmulType(layers), 1024, 1024, 1024);
    ObjectNode o = root.putObject("limit");
    o.put("flopsPerSample", flops);
    o.put("matmulLimitGflops", limit);
    double hf = sides.hf().samplesPerSecond() * flops / 1e9;
    o.put("gflopsPerSecond", hf);
    o.put("fractionOfLimit", hf / limit);
    if (root.has("djlPytorch")) {
      double d = root.get("djlPytorch").get("samplesPerSecond").asDouble() * flops / 1e9;
      o.put("djlGflopsPerSecond", d);
      o.put("djlFractionOfLimit", d / limit);
    }
  }

  /** The layers' precision, once the options are checked. */
  private io.hyperframes.nd4j.FusedDense.Precision checkedOptions() {
    io.hyperframes.nd4j.FusedDense.Precision layers = precision.resolved();
    if (profile != null && !predict) {
      throw new IllegalArgumentException("--profile: only used with --predict");
    }
    if (epochs < 1 || epochs > 100) {
      throw new IllegalArgumentException("--epochs: must be in [1, 100], got " + epochs);
    }
    if (rows < TrainBench.BATCH || rows > 1_000_000) {
      throw new IllegalArgumentException("--rows: must be in [" + TrainBench.BATCH
          + ", 1000000], got " + rows);
    }
    return layers;
  }

  /** Trains every side in turn: the three on the encoded data, then the CSV ones. */
  private Sides measure(TrainBench bench, io.hyperframes.nd4j.FusedDense.Precision layers)
      throws Exception {
    Path encoded = bench.encode();
    TrainBench.Side hf;
    TrainBench.Side loaderOnly;
    TrainBench.Side dl4jAccelerated;
    try (EncodedDataset data = EncodedDataset.open(encoded)) {
      try (PrefetchingDataSetIterator it = bench.encodedIterator(data)) {
        hf = fusedKernels ? bench.fused(it, epochs, layers) : bench.dl4j(it, epochs);
      }
      try (PrefetchingDataSetIterator it = bench.encodedIterator(data)) {
        loaderOnly = bench.dl4j(it, epochs);
      }
      try (PrefetchingDataSetIterator it = bench.encodedIterator(data)) {
        dl4jAccelerated = bench.dl4j(TrainBench.acceleratedDl4jNetwork(layers), it, epochs);
      }
    }
    TrainBench.Side kernelsOnly = bench.fused(bench.csvIterator(), epochs, layers);
    TrainBench.Side dflt = compareDefault ? bench.dl4j(bench.csvIterator(), epochs) : null;
    return new Sides(hf, loaderOnly, dl4jAccelerated, kernelsOnly, dflt);
  }

  private static ObjectNode json(Sides s) {
    ObjectNode root = Json.mapper().createObjectNode();
    put(root.putObject("hyperframes"), s.hf());
    ObjectNode ablations = root.putObject("ablations");
    put(ablations.putObject("loaderOnly"), s.loaderOnly());
    put(ablations.putObject("kernelsOnly"), s.kernelsOnly());
    put(ablations.putObject("dl4jAccelerated"), s.dl4jAccelerated());
    TrainBench.Side dflt = s.dflt();
    if (dflt != null) {
      put(root.putObject("default"), dflt);
      root.put("speedup", s.hf().samplesPerSecond() / dflt.samplesPerSecond());
      ablations.put("loaderOnlySpeedup", s.loaderOnly().samplesPerSecond()
          / dflt.samplesPerSecond());
      ablations.put("kernelsOnlySpeedup", s.kernelsOnly().samplesPerSecond()
          / dflt.samplesPerSecond());
      ablations.put("dl4jAcceleratedSpeedup", s.dl4jAccelerated().samplesPerSecond()
          / dflt.samplesPerSecond());
      root.put("accuracyDifference", s.hf().accuracy() - dflt.accuracy());
    }
    return root;
  }

  /** The step predicted from a machine profile (read, or probed now) beside the measured one. */
  private ObjectNode prediction(TrainBench.Side hf) throws java.io.IOException {
    io.hyperframes.catalog.MachineProfile p;
    String from;
    if (profile != null) {
      p = io.hyperframes.catalog.MachineProfile.read(profile);
      from = profile.toString();
    } else {
      var err = spec.commandLine().getErr();
      p = io.hyperframes.nd4j.probe.HostProbe.of("host", probeSeconds, step -> {
        err.println("probe: " + step);
        err.flush();
      }).run();
      from = "probed in this run (" + probeSeconds + " s)";
    }
    return StepPrediction.json(hf.meter(), epochs, p, from,
        precision.name().equals("fp32") ? "fp32" : "bf16-mixed");
  }

  private void record(Sides s) {
    java.util.Map<String, String> settings = new java.util.TreeMap<>();
    settings.put("fusedKernels", Boolean.toString(fusedKernels));
    settings.put("precision", precision.name());
    settings.put("epochs", Integer.toString(epochs));
    settings.put("trainRows", Integer.toString(rows));
    settings.put("batch", Integer.toString(TrainBench.BATCH));
    java.util.Map<String, BenchmarkRecord.Metric> metrics = new java.util.TreeMap<>();
    BenchmarkRecord.addSteps(metrics, "hyperframes.", s.hf().meter());
    BenchmarkRecord.addSteps(metrics, "loaderOnly.", s.loaderOnly().meter());
    BenchmarkRecord.addSteps(metrics, "kernelsOnly.", s.kernelsOnly().meter());
    BenchmarkRecord.addSteps(metrics, "dl4jAccelerated.", s.dl4jAccelerated().meter());
    if (s.dflt() != null) {
      BenchmarkRecord.addSteps(metrics, "default.", s.dflt().meter());
    }
    record.write(settings, metrics);
  }

  private static void put(ObjectNode o, TrainBench.Side s) {
    o.put("samplesPerSecond", s.samplesPerSecond());
    o.put("dataWaitShare", s.dataWaitShare());
    o.put("finalLoss", s.finalLoss());
    o.put("accuracy", s.accuracy());
  }

  private static String table(ObjectNode root) {
    StringBuilder b = new StringBuilder();
    b.append(String.format(Locale.ROOT, "%-14s %12s %10s %10s %9s%n", "pipeline", "samples/s",
        "data wait", "test loss", "accuracy"));
    for (String name : new String[] {"default", "hyperframes"}) {
      if (root.has(name)) {
        row(b, name, root.get(name));
      }
    }
    row(b, "loader only", root.get("ablations").get("loaderOnly"));
    row(b, "kernels only", root.get("ablations").get("kernelsOnly"));
    row(b, "DL4J adapter", root.get("ablations").get("dl4jAccelerated"));
    if (root.has("djlPytorch")) {
      b.append(String.format(Locale.ROOT, "%-14s %12.1f %10s %10s %8.2f%%%n", "DJL PyTorch",
          root.get("djlPytorch").get("samplesPerSecond").asDouble(), "in memory", "",
          100 * root.get("djlPytorch").get("accuracy").asDouble()));
    }
    if (root.has("speedup")) {
      b.append(String.format(Locale.ROOT, "speedup %.2fx (loader only %.2fx, kernels only"
          + " %.2fx, DL4J fit with Dl4jAdapter and the loader %.2fx)%n",
          root.get("speedup").asDouble(),
          root.get("ablations").get("loaderOnlySpeedup").asDouble(),
          root.get("ablations").get("kernelsOnlySpeedup").asDouble(),
          root.get("ablations").get("dl4jAcceleratedSpeedup").asDouble()));
    }
    if (root.has("limit")) {
      var l = root.get("limit");
      b.append(String.format(Locale.ROOT, "hyperframes %.1f GFLOP/s (%.3g MFLOP a sample) = %.1f %%"
          + " of this machine's matmul 1024^3, %.1f GFLOP/s%s%n",
          l.get("gflopsPerSecond").asDouble(), l.get("flopsPerSample").asDouble() / 1e6,
          100 * l.get("fractionOfLimit").asDouble(), l.get("matmulLimitGflops").asDouble(),
          l.has("djlFractionOfLimit") ? String.format(Locale.ROOT, "; DJL PyTorch %.1f %%",
              100 * l.get("djlFractionOfLimit").asDouble()) : ""));
    }
    if (root.has("prediction")) {
      var p = root.get("prediction");
      b.append(String.format(Locale.ROOT, "step: measured %.1f ms; predicted on the probed"
          + " profile %.1f ms (%+.1f %%), on a generic CPU's spec sheet %.1f ms (%+.1f %%)%n",
          1e3 * p.get("measuredStepSeconds").asDouble(),
          1e3 * p.get("profileStepSeconds").asDouble(), 100 * p.get("profileError").asDouble(),
          1e3 * p.get("genericStepSeconds").asDouble(),
          100 * p.get("genericError").asDouble()));
      var parts = p.get("parts");
      b.append(String.format(Locale.ROOT, "  compute / optimizer / loader: measured %.1f / %.1f"
          + " / %.1f ms (data wait), profile %.1f / %.1f / %.1f ms, generic %.1f / %.1f / %.1f"
          + " ms%n", 1e3 * part(parts, "measured", "computeSeconds"),
          1e3 * part(parts, "measured", "optimizerSeconds"),
          1e3 * part(parts, "measured", "loaderSeconds"),
          1e3 * part(parts, "profile", "computeSeconds"),
          1e3 * part(parts, "profile", "optimizerSeconds"),
          1e3 * part(parts, "profile", "loaderSeconds"),
          1e3 * part(parts, "generic", "computeSeconds"),
          1e3 * part(parts, "generic", "optimizerSeconds"),
          1e3 * part(parts, "generic", "loaderSeconds")));
    }
    if (root.has("djlSpeedup")) {
      b.append(String.format(Locale.ROOT, "speedup over DJL on PyTorch %.2fx%n",
          root.get("djlSpeedup").asDouble()));
    }
    return b.toString();
  }

  private static void row(StringBuilder b, String name, com.fasterxml.jackson.databind.JsonNode n) {
    b.append(String.format(Locale.ROOT, "%-14s %12.1f %9.1f%% %10.4f %8.2f%%%n", name,
        n.get("samplesPerSecond").asDouble(), 100 * n.get("dataWaitShare").asDouble(),
        n.get("finalLoss").asDouble(), 100 * n.get("accuracy").asDouble()));
  }

  private static double part(com.fasterxml.jackson.databind.JsonNode parts, String who,
      String what) {
    return parts.get(who).get(what).asDouble();
  }
}
