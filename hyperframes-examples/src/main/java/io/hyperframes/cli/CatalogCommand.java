package io.hyperframes.cli;

import io.hyperframes.hardware.Accelerator;
import io.hyperframes.catalog.Catalog;
import io.hyperframes.hardware.NodeTemplate;
import io.hyperframes.model.TransformerSpec;
import io.hyperframes.precision.NumberFormat;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/** {@code hyperframes catalog}: lists catalog entries with their sources. */
@Command(name = "catalog", mixinStandardHelpOptions = true,
    description = "List accelerators, models or clusters (node templates) of the catalog.")
final class CatalogCommand implements Callable<Integer> {

  enum Part { accelerators, models, clusters }

  @Spec CommandSpec spec;

  @Parameters(index = "0", description = "accelerators, models or clusters")
  Part part;

  @Override
  public Integer call() {
    Catalog c = Catalog.builtIn();
    var out = spec.commandLine().getOut();
    switch (part) {
      case accelerators -> {
        out.printf("%-16s %9s %9s %8s %9s  %s%n", "id", "bf16 TF", "fp8 TF", "mem GiB",
            "HBM GB/s", "source");
        for (Accelerator a : c.accelerators().values()) {
          out.printf(Locale.ROOT, "%-16s %9s %9s %8.1f %9.0f  %s%n", a.id(),
              tf(a, NumberFormat.BF16, NumberFormat.FP16), tf(a, NumberFormat.FP8_E4M3, null),
              a.memoryBytes() / (1L << 30), a.memoryBandwidthBytesPerSecond() / 1e9, a.source());
        }
      }
      case models -> {
        out.printf("%-12s %7s %6s %6s %5s %3s %6s %7s %6s  %s%n", "id", "params", "layers",
            "hidden", "heads", "kv", "ffn", "vocab", "seq", "source");
        for (var e : c.models().entrySet()) {
          TransformerSpec m = e.getValue();
          out.printf(Locale.ROOT, "%-12s %6.2fB %6d %6d %5d %3d %6d %7d %6d  %s%n", e.getKey(),
              m.parameters() / 1e9, m.layers(), m.hidden(), m.heads(), m.kvHeads(),
              m.ffnHidden(), m.vocab(), m.seqLen(), c.modelSource(e.getKey()));
        }
      }
      case clusters -> {
        out.printf("%-16s %-16s %5s %5s %14s  %s%n", "id", "accelerator", "/node", "/host",
            "net GB/s/dev", "source");
        for (NodeTemplate n : c.nodes().values()) {
          out.printf(Locale.ROOT, "%-16s %-16s %5d %5d %14.2f  %s%n", n.id(), n.accelerator(),
              n.devicesPerNode(), n.devicesPerHost(),
              n.interNode().bandwidthBytesPerSecond() / 1e9, n.source());
        }
      }
      default -> throw new AssertionError(part);
    }
    out.flush();
    return 0;
  }

  private static String tf(Accelerator a, NumberFormat f, NumberFormat alt) {
    if (a.supports(f)) {
      return String.format(Locale.ROOT, "%.1f", a.peakFlops(f) / 1e12);
    }
    if (alt != null && a.supports(alt)) {
      return String.format(Locale.ROOT, "%.1f*", a.peakFlops(alt) / 1e12);
    }
    return "-";
  }
}
