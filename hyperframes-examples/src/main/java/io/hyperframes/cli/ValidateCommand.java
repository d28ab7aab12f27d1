package io.hyperframes.cli;

import com.fasterxml.jackson.core.JsonProcessingException;
import io.hyperframes.calibrate.LeaveOneSourceOut;
import io.hyperframes.calibrate.ServingIntervals;
import io.hyperframes.catalog.Catalog;
import io.hyperframes.json.Json;
import io.hyperframes.validate.CaseResult;
import io.hyperframes.validate.ValidationReport;
import io.hyperframes.validate.Validator;
import java.nio.file.Path;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** {@code hyperframes validate}: the planner against a file of measured cases. */
@Command(name = "validate", mixinStandardHelpOptions = true,
    description = "Compare predictions with measured cases (format of published-runs.json).")
final class ValidateCommand implements Callable<Integer> {

  @Spec CommandSpec spec;

  @Option(names = "--cases", required = true, paramLabel = "FILE",
      description = "Cases JSON; repeat it to validate several files' cases together.")
  java.util.List<Path> cases;

  @Mixin Catalogs catalogs;

  private Format format = Format.table;

  @Option(names = "--format", defaultValue = "table", paramLabel = "FORMAT",
      description = "table (default), json or markdown.")
  void format(Format f) {
    format = FormatOption.check(spec, f, Format.table, Format.json, Format.markdown);
  }

  @Option(names = "--leave-one-source-out",
      description = "Also refit the kernel constants (by default the matmul half dimension and"
          + " the fused-attention efficiency per generation and format family) without each"
          + " source in turn and predict it; print the"
          + " in-sample and out-of-sample error per source and the residual range per regime.")
  boolean leaveOneSourceOut;

  @Option(names = "--keep-priors", negatable = true, defaultValue = "true",
      fallbackValue = "true",
      description = "With --leave-one-source-out (the default since 2026-12-08): start each"
          + " refit from the shipped kernel entries with only the refitted constants reset,"
          + " keeping the kernel priors (fused-attention and matmul priors from kernel"
          + " measurements), so that the left-out figures are of the shipped model."
          + " --no-keep-priors starts the refit from the accelerators' own constants instead.")
  boolean keepPriors;

  @Option(names = "--serving-intervals",
      description = "Print, per accelerator generation, predicted / measured output tokens per"
          + " second of the serving throughput cases with role check (measured / predicted time"
          + " per token) and how often the band fitted without a case's source covers it.")
  boolean servingIntervals;

  @Option(names = "--write-intervals", paramLabel = "FILE",
      description = "With --leave-one-source-out: write the step-time intervals those residuals"
          + " give, per accelerator generation and regime, as a catalog file (the shipped"
          + " catalog's intervals are this output): a regime's own 5th-95th percentile band"
          + " with at least 5 cases from 4 sources; with fewer, the pooled band widened to the"
          + " regime's own extremes; with none, the whole pooled range, said so. With"
          + " --serving-intervals: the serving intervals (regime serving), by the same rules.")
  Path writeIntervals;

  @Override
  public Integer call() throws JsonProcessingException {
    if (leaveOneSourceOut && servingIntervals) {
      throw new IllegalArgumentException("--serving-intervals: give it or"
          + " --leave-one-source-out, not both");
    }
    if (!leaveOneSourceOut && spec.commandLine().getParseResult().hasMatchedOption(
        "--keep-priors")) {
      throw new IllegalArgumentException((keepPriors ? "--keep-priors" : "--no-keep-priors")
          + ": needs --leave-one-source-out");
    }
    if (writeIntervals != null && !leaveOneSourceOut && !servingIntervals) {
      throw new IllegalArgumentException("--write-intervals: needs --leave-one-source-out or"
          + " --serving-intervals");
    }
    String text = casesText();
    if (leaveOneSourceOut) {
      return leaveOneSourceOut(text);
    }
    if (servingIntervals) {
      return servingIntervals(text);
    }
    Validator v = catalogs.builtIn() ? Validator.analytical() : Validator.on(catalogs.load());
    ValidationReport r = v.run(text);
    var out = spec.commandLine().getOut();
    switch (format) {
      case json -> out.println(Json.mapper().writerWithDefaultPrettyPrinter()
          .writeValueAsString(r.toJson()));
      case markdown -> out.print(markdown(r));
      default -> out.print(table(r));
    }
    out.flush();
    return 0;
  }

  @Option(names = "--refit", split = ",", paramLabel = "CONSTANT",
      defaultValue = "halfdim,elementwise",
      description = "Constants refitted by --leave-one-source-out (as calibrate --fit;"
          + " default halfdim,elementwise, the constants the shipped catalog fits).")
  java.util.List<String> refit;

  @Option(names = "--scope", paramLabel = "GENERATION@ENGINE=CONSTANT[,CONSTANT...]",
      description = "Engine-scoped constants refitted by --leave-one-source-out (as calibrate"
          + " --scope; default hopper@fsdp=matmul, the scope the shipped catalog fits).")
  java.util.List<String> scope = new java.util.ArrayList<>(java.util.List.of(
      "hopper@fsdp=matmul"));

  private java.util.EnumSet<io.hyperframes.calibrate.Calibration.Constant> constants() {
    return CalibrateCommand.constants(refit);
  }

  private int leaveOneSourceOut(String text) throws JsonProcessingException {
    Catalog shipped = catalogs.load();
    LeaveOneSourceOut.Report report = LeaveOneSourceOut.run(text, shipped, constants(),
        CalibrateCommand.scopes(scope), keepPriors);
    var out = spec.commandLine().getOut();
    write(report.intervals(shipped, "hyperframes validate --leave-one-source-out"
        + (keepPriors ? "" : " --no-keep-priors") + " --write-intervals"));
    if (format == Format.json) {
      out.println(Json.mapper().writerWithDefaultPrettyPrinter()
          .writeValueAsString(report.toJson()));
      out.flush();
      return 0;
    }
    out.printf(Locale.ROOT, "| source | cases | in-sample mean / max | leave-one-source-out mean"
        + " / max | held out |%n");
    out.printf(Locale.ROOT, "|---|---:|---:|---:|---|%n");
    for (LeaveOneSourceOut.SourceRow r : report.sources()) {
      var why = r.inSampleBecause();
      out.printf(Locale.ROOT, "| %s | %d | %.1f %% / %.1f %% | %.1f %% / %.1f %% | %s |%n",
          r.source(), r.cases(), 100 * r.inSampleMean(), 100 * r.inSampleMax(),
          100 * r.leftOutMean(), 100 * r.leftOutMax(), r.heldOut() ? "yes"
              : "no: " + why.get(0) + (why.size() > 1 ? " (and " + (why.size() - 1) + " more)"
                  : ""));
    }
    out.printf(Locale.ROOT, "%nLeave-one-source-out mean |error| %.2f %% over %d cases (every"
        + " source, in sample or not).%n", 100 * report.leftOutMean(), report.cases());
    if (report.heldOutCases() == 0) {
      out.printf(Locale.ROOT, "Out of sample: no source is held out (each helped fit a shipped"
          + " constant this run does not refit, or a modelling decision).%n%n");
    } else {
      out.printf(Locale.ROOT, "Out of sample (sources no shipped constant or modelling decision"
          + " was fitted on: %s): mean |error| %.2f %% over %d cases.%n",
          String.join(", ", report.heldOutSources()), 100 * report.heldOutMean(),
          report.heldOutCases());
      out.printf(Locale.ROOT, "The same cases under the shipped catalog (not refitted; what a"
          + " user of the shipped catalog meets out of sample): mean |error| %.2f %%.%n%n",
          100 * report.heldOutShippedMean());
    }
    out.print(regimes(report.regimes(), "measured / predicted step time"));
    out.flush();
    return 0;
  }

  /** The cases of every --cases file as one document (one file: its text as it is). */
  private String casesText() {
    if (cases.size() == 1) {
      return Files2.read("--cases", cases.get(0));
    }
    com.fasterxml.jackson.databind.node.ObjectNode all = Json.mapper().createObjectNode();
    com.fasterxml.jackson.databind.node.ArrayNode list = all.putArray("cases");
    for (Path p : cases) {
      var doc = Json.parseObject("--cases " + p, Files2.read("--cases", p));
      if (!doc.path("cases").isArray()) {
        throw new IllegalArgumentException("--cases " + p + ": no cases array");
      }
      doc.get("cases").forEach(list::add);
    }
    return all.toString();
  }

  private int servingIntervals(String text) throws JsonProcessingException {
    Catalog shipped = catalogs.load();
    ServingIntervals.Report report = ServingIntervals.run(text, shipped);
    write(report.intervals(shipped));
    var out = spec.commandLine().getOut();
    if (format == Format.json) {
      out.println(Json.mapper().writerWithDefaultPrettyPrinter()
          .writeValueAsString(report.toJson()));
    } else {
      out.print(regimes(report.regimes(), "predicted / measured output tokens per second"));
      for (ServingIntervals.InSample i : report.inSample()) {
        out.printf(Locale.ROOT, "Left out, in sample: %s (%d check figures): %s%n", i.source(),
            i.cases(), String.join("; ", i.because()));
      }
    }
    out.flush();
    return 0;
  }

  /** The coverage table of {@code rows}, the residual named {@code what}. */
  private static String regimes(java.util.List<LeaveOneSourceOut.RegimeRow> rows, String what) {
    StringBuilder b = new StringBuilder();
    b.append(String.format(Locale.ROOT, "| regime | cases | %s: 5th, 50th, 95th percentile"
        + " | covered by the interval fitted without the case's source |%n", what));
    b.append(String.format(Locale.ROOT, "|---|---:|---|---:|%n"));
    for (LeaveOneSourceOut.RegimeRow r : rows) {
      b.append(String.format(Locale.ROOT, "| %s | %d | %.3f, %.3f, %.3f | %d of %d (%.0f %%)"
          + " |%n", r.regime(), r.cases(), r.p5(), r.p50(), r.p95(), r.covered(), r.cases(),
          100.0 * r.covered() / r.cases()));
    }
    return b.toString();
  }

  /** Writes {@code intervals} to --write-intervals, when given. */
  private void write(com.fasterxml.jackson.databind.node.ObjectNode intervals) {
    if (writeIntervals == null) {
      return;
    }
    try {
      java.nio.file.Files.writeString(writeIntervals, Json.mapper()
          .writerWithDefaultPrettyPrinter().writeValueAsString(intervals) + "\n");
    } catch (java.io.IOException e) {
      throw new IllegalArgumentException("--write-intervals: cannot write " + writeIntervals
          + " (" + e.getMessage() + ")", e);
    }
  }

  static String table(ValidationReport r) {
    StringBuilder b = new StringBuilder();
    b.append(String.format(Locale.ROOT, "%-46s %-28s %13s %13s %9s  %s%n", "case", "metric",
        "expected", "predicted", "error", "note"));
    for (CaseResult c : r.cases()) {
      b.append(String.format(Locale.ROOT, "%-46s %-28s %13.5g %13s %9s  %s%n", c.id(),
          c.metric(), c.expected(), c.compared() ? String.format(Locale.ROOT, "%.5g",
              c.predicted()) : "-", error(c), note(c)));
    }
    b.append(String.format(Locale.ROOT, "mean |error| %.2f %%, max |error| %.2f %% (point cases)%n",
        100 * r.meanAbsRelativeError(), 100 * r.maxAbsRelativeError()));
    return b.toString();
  }

  static String markdown(ValidationReport r) {
    StringBuilder b = new StringBuilder();
    b.append("| case | metric | expected | predicted | error | note |\n");
    b.append("|---|---|---:|---:|---:|---|\n");
    for (CaseResult c : r.cases()) {
      b.append(String.format(Locale.ROOT, "| %s | %s | %.5g | %s | %s | %s |%n", c.id(),
          c.metric(), c.expected(), c.compared() ? String.format(Locale.ROOT, "%.5g",
              c.predicted()) : "-", error(c), note(c)));
    }
    b.append(String.format(Locale.ROOT,
        "%nMean |error| %.2f %%, max |error| %.2f %% over point cases.%n",
        100 * r.meanAbsRelativeError(), 100 * r.maxAbsRelativeError()));
    return b.toString();
  }

  private static String error(CaseResult c) {
    return c.compared() ? String.format(Locale.ROOT, "%+.2f %%", 100 * c.relativeError()) : "-";
  }

  private static String note(CaseResult c) {
    if (c.bound().equals("point")) {
      return c.note();
    }
    return (c.boundMet() ? "met: " : "NOT met: ") + c.bound() + "; " + c.note();
  }
}
