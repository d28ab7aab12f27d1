package io.hyperframes.cli;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.hyperframes.calibrate.Calibration;
import io.hyperframes.calibrate.Calibration.Constant;
import io.hyperframes.calibrate.Calibration.Fitted;
import io.hyperframes.calibrate.LeaveOneSourceOut;
import io.hyperframes.catalog.Catalog;
import io.hyperframes.catalog.CatalogFile;
import io.hyperframes.json.Json;
import io.hyperframes.validate.CaseResult;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** {@code hyperframes calibrate}: fit the catalog's efficiency constants to measured runs. */
@Command(name = "calibrate", mixinStandardHelpOptions = true,
    description = "Fit kernel and fabric efficiencies to your measured runs (format of"
        + " published-runs.json) and write a catalog override for --catalog.")
final class CalibrateCommand implements Callable<Integer> {

  @Spec CommandSpec spec;

  @Option(names = "--cases", required = true, paramLabel = "FILE", description = "Cases JSON.")
  Path cases;

  @Option(names = "--catalog", paramLabel = "FILE",
      description = "Catalog override to start from (default: the built-in catalog).")
  Path catalog;

  @Option(names = "--out", paramLabel = "FILE",
      description = "Write the fitted constants as a catalog override file.")
  Path out;

  @Option(names = "--intervals",
      description = "With --out: also write the step-time intervals of the regimes your"
          + " training cases fall in, from their leave-one-source-out residuals under this fit"
          + " (the rules of validate --write-intervals), so that estimates with --catalog carry"
          + " bands measured on your runs; other regimes keep the catalog's.")
  boolean intervals;

  @Option(names = "--fit", split = ",", paramLabel = "CONSTANT",
      description = "Constants to fit: matmul, attention, halfdim, overhead, elementwise,"
          + " overlap, serving-overhead, request-overhead, first-token-overhead, kv-bandwidth,"
          + " kv-per-head, kv-reread, fabric, memory (default: matmul, attention, overhead,"
          + " fabric).")
  List<String> fit;

  @Option(names = "--scope", paramLabel = "GENERATION@ENGINE=CONSTANT[,CONSTANT...]",
      description = "Fit an engine's kernels apart on a generation (repeatable), e.g."
          + " hopper@fsdp=matmul: the cases that engine runs on that generation fit these"
          + " constants as their own catalog entry (kernels with \"engine\"), not the"
          + " generation's.")
  List<String> scope;

  /**
   * The scopes named on the command line ({@code --scope generation@engine=c1,c2}).
   *
   * @throws IllegalArgumentException naming the option and the value when one is malformed
   */
  static Map<String, java.util.Set<Constant>> scopes(List<String> values) {
    Map<String, java.util.Set<Constant>> out = new java.util.LinkedHashMap<>();
    for (String v : values == null ? List.<String>of() : values) {
      int eq = v.indexOf('=');
      if (eq <= 0 || eq == v.length() - 1 || !v.substring(0, eq).contains("@")) {
        throw new IllegalArgumentException("--scope: expected GENERATION@ENGINE=CONSTANT[,...]"
            + " (e.g. hopper@fsdp=matmul), got '" + v + "'");
      }
      out.put(v.substring(0, eq).trim(), constants(List.of(v.substring(eq + 1).split(","))));
    }
    return out;
  }

  /** The constants named on the command line ({@code --fit}, {@code --refit}). */
  static EnumSet<Constant> constants(List<String> names) {
    EnumSet<Constant> constants = EnumSet.noneOf(Constant.class);
    for (String f : names) {
      constants.add(switch (f.trim().toLowerCase(Locale.ROOT)) {
        case "matmul" -> Constant.MATMUL_EFFICIENCY;
        case "attention" -> Constant.ATTENTION_EFFICIENCY;
        case "overhead" -> Constant.LAYER_OVERHEAD;
        case "elementwise" -> Constant.ELEMENTWISE_BANDWIDTH;
        case "halfdim" -> Constant.MATMUL_HALF_DIM;
        case "overlap" -> Constant.OVERLAP_COST;
        case "serving-overhead" -> Constant.SERVING_OVERHEAD;
        case "request-overhead" -> Constant.SERVING_REQUEST;
        case "first-token-overhead" -> Constant.SERVING_FIRST_TOKEN_LAYER;
        case "kv-bandwidth" -> Constant.KV_BANDWIDTH;
        case "kv-per-head" -> Constant.KV_PER_HEAD_BANDWIDTH;
        case "kv-reread" -> Constant.KV_PER_HEAD_REREAD;
        case "fabric" -> Constant.FABRIC_EFFICIENCY;
        case "memory" -> Constant.MEMORY_EFFICIENCY;
        default -> throw new IllegalArgumentException("--fit: unknown constant '" + f
            + "' (known: matmul, attention, halfdim, overhead, elementwise, overlap,"
            + " serving-overhead, request-overhead, first-token-overhead, kv-bandwidth,"
            + " kv-per-head, kv-reread, fabric, memory)");
      });
    }
    return constants;
  }

  @Override
  public Integer call() throws IOException {
    Catalog start = catalog == null ? Catalog.builtIn() : Catalog.builtIn().withOverrides(catalog);
    EnumSet<Constant> constants = constants(fit == null
        ? List.of("matmul", "attention", "overhead", "fabric") : fit);
    if (intervals && out == null) {
      throw new IllegalArgumentException("--intervals: needs --out (the file the intervals are"
          + " written to)");
    }
    String text = Files2.read("--cases", cases);
    Map<String, java.util.Set<Constant>> scopes = scopes(scope);
    Calibration.Result r = Calibration.fit(text, start, constants, scopes);
    var o = spec.commandLine().getOut();
    o.printf(Locale.ROOT, "fitted on %d cases%n", r.cases().size());
    for (Fitted f : r.fitted()) {
      o.printf(Locale.ROOT, "  %-22s %-20s %10.4g -> %10.4g%n", f.target(), f.constant().field(),
          f.before(), f.after());
    }
    Map<String, CaseResult> loo = new HashMap<>();
    r.leaveOneOut().cases().stream().filter(CaseResult::point)
        .forEach(c -> loo.putIfAbsent(c.id() + " " + c.metric(), c));
    o.printf(Locale.ROOT, "%-46s %-26s %10s %10s %12s%n", "case", "metric", "before", "after",
        "left out");
    for (int i = 0; i < r.after().cases().size(); i++) {
      CaseResult a = r.after().cases().get(i);
      if (!a.point()) {
        continue;
      }
      CaseResult b = r.before().cases().get(i);
      CaseResult l = loo.get(a.id() + " " + a.metric());
      o.printf(Locale.ROOT, "%-46s %-26s %+9.2f%% %+9.2f%% %+11.2f%%%n", a.id(), a.metric(),
          100 * b.relativeError(), 100 * a.relativeError(),
          l == null ? Double.NaN : 100 * l.relativeError());
    }
    o.printf(Locale.ROOT, "mean |error|: before %.2f %%, after %.2f %% (in sample),"
            + " %.2f %% leave-one-source-out%n", 100 * r.before().meanAbsRelativeError(),
        100 * r.after().meanAbsRelativeError(), 100 * r.leaveOneOut().meanAbsRelativeError());
    if (out != null) {
      String fitted = r.toCatalogJson();
      if (catalog != null) {
        // The input override's entries stay, under the fitted ones: a chain of fits keeps what
        // the earlier ones fitted (an accelerator's memory efficiency, another generation).
        CatalogFile merged = CatalogFile.overlay(
            Json.read("--catalog", Files2.read("--catalog", catalog), CatalogFile.class),
            Json.read("calibrated catalog", fitted, CatalogFile.class));
        fitted = Json.mapper().writerWithDefaultPrettyPrinter().writeValueAsString(merged);
      }
      if (intervals) {
        fitted = withIntervals(fitted, LeaveOneSourceOut.of(text, start, r, constants, scopes),
            start, o);
      }
      Files.writeString(out, fitted, StandardCharsets.UTF_8);
      o.printf(Locale.ROOT, "wrote %s (use it with --catalog)%s%n", out,
          catalog == null ? ""
              : "; it keeps the entries of " + catalog + " that were not refitted");
    }
    o.flush();
    return 0;
  }

  /**
   * {@code fitted} (a catalog file) with the step-time intervals of {@code report}'s regimes
   * that have cases: a regime none of the cases falls in keeps the catalog's band rather than
   * one borrowed from other regimes of these runs.
   */
  private static String withIntervals(String fitted, LeaveOneSourceOut.Report report,
      Catalog start, java.io.PrintWriter o) throws IOException {
    ObjectNode all = report.intervals(start, "hyperframes calibrate --intervals");
    ArrayNode kept = Json.mapper().createArrayNode();
    all.get("intervals").forEach(e -> {
      if (e.get("cases").asInt() > 0) {
        kept.add(e);
      }
    });
    if (kept.isEmpty()) {
      o.printf(Locale.ROOT, "no training step time among the cases: no intervals written%n");
      return fitted;
    }
    all.set("intervals", kept);
    CatalogFile merged = CatalogFile.overlay(
        Json.read("calibrated catalog", fitted, CatalogFile.class),
        Json.read("intervals", all.toString(), CatalogFile.class));
    var pooled = report.regimes().get(0);
    o.printf(Locale.ROOT, "intervals: %d regime(s) from %d leave-one-source-out residuals; the"
        + " band made without a case's source covers %d of %d%n", kept.size(),
        report.residuals().size(), pooled.covered(), pooled.cases());
    return Json.mapper().writerWithDefaultPrettyPrinter().writeValueAsString(merged);
  }
}
