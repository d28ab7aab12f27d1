package io.hyperframes.cli;

import io.hyperframes.catalog.MachineProfile;
import io.hyperframes.nd4j.probe.HostProbe;
import io.hyperframes.precision.NumberFormat;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** {@code hyperframes probe}: measure this machine and write a profile the planner can use. */
@Command(name = "probe", mixinStandardHelpOptions = true,
    description = "Measure this machine (matmul per format and shape, memory bandwidth, fused"
        + " dense layers, loader throughput per worker; each the median of repeats with its"
        + " range) and fit a profile: estimate | plan --profile FILE then plan on the measured"
        + " host as accelerator 'host'.")
final class ProbeCommand implements Callable<Integer> {

  @Spec CommandSpec spec;

  @Option(names = "--out", paramLabel = "FILE", description = "Write the profile (JSON) here.")
  Path out;

  @Option(names = "--seconds", defaultValue = "60",
      description = "Measuring budget in seconds, 2 to 600 (default 60).")
  double seconds;

  @Option(names = "--id", defaultValue = "host",
      description = "Accelerator id to give this host (default host; its node is ID-node).")
  String id;

  @Mixin FormatOption format;

  @Override
  public Integer call() throws Exception {
    PrintWriter err = spec.commandLine().getErr();
    HostProbe probe = HostProbe.of(id, seconds, step -> {
      err.println("probe: " + step);
      err.flush();
    });
    MachineProfile profile = probe.run();
    if (out != null) {
      profile.write(out);
      err.println("profile written to " + out + " (use: estimate|plan --profile " + out
          + ", cluster {\"template\": \"" + profile.nodeId() + "\"})");
    }
    PrintWriter o = spec.commandLine().getOut();
    if (format.json()) {
      o.println(profile.toJson());
    } else {
      o.print(table(profile));
    }
    o.flush();
    return 0;
  }

  static String table(MachineProfile p) {
    StringBuilder b = new StringBuilder();
    b.append(String.format(Locale.ROOT, "%s (%s, %s)%n", p.accelerator().name(),
        p.conditions().getOrDefault("kernels.onednn.isa", "-"),
        p.conditions().getOrDefault("processors", "?") + " processors"));
    b.append(String.format(Locale.ROOT, "%-44s %12s %12s %12s %s%n", "measurement", "median",
        "low", "high", "unit"));
    for (MachineProfile.Measurement m : p.measurements()) {
      boolean time = m.unit().equals("s");
      double scale = time ? 1e3 : 1;
      b.append(String.format(Locale.ROOT, "%-44s %12.4g %12.4g %12.4g %s%n", m.name(),
          m.median() * scale, m.low() * scale, m.high() * scale, time ? "ms" : m.unit()));
    }
    b.append("fitted (the planner's accelerator '").append(p.acceleratorId()).append("'):\n");
    for (NumberFormat f : p.accelerator().peakFlopsPerSecond().keySet()) {
      var k = p.accelerator().kernel(f);
      b.append(String.format(Locale.ROOT,
          "  %-5s peak %.1f GFLOP/s, half dimension %.0f, half rows %.0f, layer overhead"
              + " %.1f us%n", f.id(), p.accelerator().peakFlops(f) / 1e9, k.halfDim(),
          k.halfRows(), k.layerOverheadSeconds() * 1e6));
    }
    var fp32 = p.accelerator().kernel(NumberFormat.FP32);
    b.append(String.format(Locale.ROOT, "  memory %.1f GB/s (triad); optimizer step at %.2f of"
        + " it%n", p.accelerator().memoryBandwidthBytesPerSecond() / 1e9,
        fp32.optimizerBandwidthFraction()));
    return b.toString();
  }
}
