package io.hyperframes.cli;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.hyperframes.json.Json;
import io.hyperframes.nd4j.train.FusedMlp;
import java.util.Locale;
import java.util.concurrent.Callable;
import org.deeplearning4j.nn.multilayer.MultiLayerNetwork;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.factory.Nd4j;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** {@code hyperframes bench infer}: output() latency of DL4J's MLP against the fused one. */
@Command(name = "infer", mixinStandardHelpOptions = true,
    description = "Batch-1 and batch-32 output() latency (p50/p99) of the benchmark MLP: DL4J"
        + " default against fused layers.")
final class BenchInferCommand implements Callable<Integer> {

  @Spec CommandSpec spec;

  @Option(names = "--runs", defaultValue = "400", description = "Timed calls per case.")
  int runs;

  @Option(names = "--djl", negatable = true, defaultValue = "true", fallbackValue = "true",
      description = "Also time the same MLP in DJL on PyTorch (default on).")
  boolean djl;

  @Mixin FormatOption format;

  @Mixin RecordOption record;

  @Mixin PrecisionOption precision;

  @Override
  public Integer call() throws Exception {
    java.util.Map<String, io.hyperframes.runtime.BenchmarkRecord.Metric> metrics =
        new java.util.TreeMap<>();
    if (runs < 20 || runs > 100_000) {
      throw new IllegalArgumentException("--runs: must be in [20, 100000], got " + runs);
    }
    io.hyperframes.nd4j.FusedDense.Precision layers = precision.resolved();
    MultiLayerNetwork dl4j = TrainBench.dl4jNetwork();
    FusedMlp fused = TrainBench.fusedNetwork(layers);
    MultiLayerNetwork adapted = TrainBench.acceleratedDl4jNetwork(layers);
    ObjectNode root = Json.mapper().createObjectNode();
    for (int batch : new int[] {1, 32}) {
      INDArray x = Nd4j.rand(DataType.FLOAT, batch, TrainBench.FEATURES);
      double[] ds = TrainBench.latencySamples(() -> dl4j.output(x), runs);
      double[] hs = TrainBench.latencySamples(() -> fused.output(x), runs);
      double[] as = TrainBench.latencySamples(() -> adapted.output(x), runs);
      metrics.put("batch" + batch + ".default.seconds", RecordOption.seconds(ds));
      metrics.put("batch" + batch + ".hyperframes.seconds", RecordOption.seconds(hs));
      metrics.put("batch" + batch + ".dl4jAccelerated.seconds", RecordOption.seconds(as));
      double[] d = TrainBench.percentiles(ds);
      double[] h = TrainBench.percentiles(hs);
      double[] a = TrainBench.percentiles(as);
      ObjectNode o = batch == 32 ? root : root.putObject("batch1");
      o.putObject("default").put("p50Seconds", d[0]).put("p99Seconds", d[1]);
      o.putObject("hyperframes").put("p50Seconds", h[0]).put("p99Seconds", h[1]);
      o.put("p99Reduction", 1 - h[1] / d[1]);
      // DL4J's own output() on the Dl4jAdapter configuration (an addition to the contract).
      o.putObject("dl4jAccelerated").put("p50Seconds", a[0]).put("p99Seconds", a[1])
          .put("p99Reduction", 1 - a[1] / d[1]);
    }
    if (djl) {
      // Last, in the same JVM: once PyTorch is loaded its thread pool shares the cores with
      // everything measured after it, so nothing of ours is measured after it.
      try (DjlBaseline baseline = DjlBaseline.create()) {
        for (int batch : new int[] {1, 32}) {
          var input = baseline.input(batch);
          double[] ps = TrainBench.latencySamples(() -> baseline.infer(input), runs);
          metrics.put("batch" + batch + ".djlPytorch.seconds", RecordOption.seconds(ps));
          double[] p = TrainBench.percentiles(ps);
          ObjectNode o = batch == 32 ? root : (ObjectNode) root.get("batch1");
          o.putObject("djlPytorch").put("p50Seconds", p[0]).put("p99Seconds", p[1]);
          o.put("djlP99Ratio", o.get("hyperframes").get("p99Seconds").asDouble() / p[1]);
        }
      }
    }
    root.put("batch", 32);
    root.put("precision", precision.name());
    root.put("precisionRequested", precision.requested());
    if (record.wanted()) {
      record.write(java.util.Map.of("runs", Integer.toString(runs),
          "djl", Boolean.toString(djl), "precision", precision.name()), metrics);
    }
    var out = spec.commandLine().getOut();
    if (format.json()) {
      out.println(Json.mapper().writerWithDefaultPrettyPrinter().writeValueAsString(root));
    } else {
      out.printf(Locale.ROOT, "fused layers: %s (asked: %s)%n", precision.name(),
          precision.requested());
      for (String k : new String[] {"batch1", ""}) {
        var o = k.isEmpty() ? root : root.get(k);
        out.printf(Locale.ROOT, "batch %s: default p50 %.3f ms p99 %.3f ms; hyperframes p50 %.3f"
            + " ms p99 %.3f ms; p99 reduction %.0f %%; DL4J adapter p50 %.3f ms p99 %.3f ms"
            + " (%.0f %%)%n", k.isEmpty() ? "32" : "1",
            1e3 * o.get("default").get("p50Seconds").asDouble(),
            1e3 * o.get("default").get("p99Seconds").asDouble(),
            1e3 * o.get("hyperframes").get("p50Seconds").asDouble(),
            1e3 * o.get("hyperframes").get("p99Seconds").asDouble(),
            100 * o.get("p99Reduction").asDouble(),
            1e3 * o.get("dl4jAccelerated").get("p50Seconds").asDouble(),
            1e3 * o.get("dl4jAccelerated").get("p99Seconds").asDouble(),
            100 * o.get("dl4jAccelerated").get("p99Reduction").asDouble());
        if (o.has("djlPytorch")) {
          out.printf(Locale.ROOT, "  DJL on PyTorch p50 %.3f ms p99 %.3f ms; hyperframes p99 /"
              + " DJL p99 %.2f%n", 1e3 * o.get("djlPytorch").get("p50Seconds").asDouble(),
              1e3 * o.get("djlPytorch").get("p99Seconds").asDouble(),
              o.get("djlP99Ratio").asDouble());
        }
      }
    }
    out.flush();
    return 0;
  }
}
