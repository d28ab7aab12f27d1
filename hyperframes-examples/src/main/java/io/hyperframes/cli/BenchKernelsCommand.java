package io.hyperframes.cli;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.hyperframes.json.Json;
import io.hyperframes.nd4j.KernelComparison;
import io.hyperframes.nd4j.Kernels;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** {@code hyperframes bench kernels}: fused oneDNN kernels beside ND4J, on this machine. */
@Command(name = "kernels", mixinStandardHelpOptions = true,
    description = "Time the fused and mixed-precision kernels beside their ND4J baselines"
        + " (one process, same inputs) and print GFLOP/s and speedups.")
final class BenchKernelsCommand implements Callable<Integer> {

  @Spec CommandSpec spec;

  @Mixin FormatOption format;

  @Option(names = "--budget", defaultValue = "1.0", paramLabel = "SECONDS",
      description = "Measuring time per kernel and per baseline (default 1.0).")
  double budget;

  @Mixin RecordOption record;

  @Override
  public Integer call() throws JsonProcessingException {
    if (!(budget > 0) || budget > 600) {
      throw new IllegalArgumentException("--budget: must be in (0, 600] seconds, got " + budget);
    }
    List<KernelComparison.Row> rows = new KernelComparison(budget, 3).runStandard();
    if (record.wanted()) {
      Map<String, io.hyperframes.runtime.BenchmarkRecord.Metric> metrics = new java.util.TreeMap<>();
      for (KernelComparison.Row r : rows) {
        metrics.put(String.join(".", r.kernel(), r.precision(), r.shape(), r.activation(),
            "seconds"), RecordOption.seconds(r.seconds()));
      }
      record.write(Map.of("budgetSeconds", Double.toString(budget)),
          metrics);
    }
    var out = spec.commandLine().getOut();
    if (format.json()) {
      out.println(Json.mapper().writerWithDefaultPrettyPrinter()
          .writeValueAsString(json(rows)));
    } else {
      out.print(table(rows));
    }
    out.flush();
    return 0;
  }

  static ObjectNode machine() {
    ObjectNode m = Json.mapper().createObjectNode();
    m.put("os", System.getProperty("os.name") + " " + System.getProperty("os.version"));
    m.put("arch", System.getProperty("os.arch"));
    m.put("cores", Runtime.getRuntime().availableProcessors());
    m.put("cpu", cpuModel());
    m.put("java", System.getProperty("java.version"));
    for (Map.Entry<String, String> e : Kernels.cpu().capabilities().entrySet()) {
      if (!e.getKey().startsWith("impl.")) {
        m.put(e.getKey(), e.getValue());
      }
    }
    return m;
  }

  static ObjectNode json(List<KernelComparison.Row> rows) {
    ObjectNode root = Json.mapper().createObjectNode();
    root.set("machine", machine());
    ArrayNode results = root.putArray("results");
    for (KernelComparison.Row r : rows) {
      ObjectNode o = results.addObject();
      o.put("kernel", r.kernel());
      o.put("precision", r.precision());
      o.put("shape", r.shape());
      o.put("activation", r.activation());
      o.put("gflops", r.gflops());
      o.put("implementation", r.implementation());
      o.put("medianSeconds", r.medianSeconds());
      ObjectNode b = o.putObject("baselines");
      r.baselines().forEach(b::put);
      ObjectNode s = o.putObject("speedups");
      r.speedups().forEach(s::put);
    }
    return root;
  }

  static String table(List<KernelComparison.Row> rows) {
    StringBuilder b = new StringBuilder();
    ObjectNode m = machine();
    b.append(String.format(Locale.ROOT, "machine: %s, %d cores, %s, oneDNN %s (%s)%n",
        m.path("cpu").asText(), m.path("cores").asInt(), m.path("arch").asText(),
        m.path("onednn.version").asText("-"), m.path("onednn.isa").asText("-")));
    b.append(String.format(Locale.ROOT, "%-15s %-5s %-15s %-10s %9s  %-28s %s%n", "kernel",
        "prec", "shape", "act", "GFLOP/s", "implementation", "speedup vs baseline (GFLOP/s)"));
    for (KernelComparison.Row r : rows) {
      StringBuilder s = new StringBuilder();
      r.baselines().forEach((name, g) -> s.append(String.format(Locale.ROOT,
          "%s %.2fx (%.1f)  ", name, r.speedups().get(name), g)));
      b.append(String.format(Locale.ROOT, "%-15s %-5s %-15s %-10s %9.1f  %-28s %s%n",
          r.kernel(), r.precision(), r.shape(), r.activation(), r.gflops(),
          r.implementation(), s.toString().strip()));
    }
    return b.toString();
  }

  private static String cpuModel() {
    return io.hyperframes.nd4j.probe.HostProbe.cpuModel();
  }
}
