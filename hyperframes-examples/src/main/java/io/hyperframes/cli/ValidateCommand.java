package io.hyperframes.cli;

import com.fasterxml.jackson.core.JsonProcessingException;
import io.hyperframes.json.Json;
import io.hyperframes.validate.CaseResult;
import io.hyperframes.validate.ValidationReport;
import io.hyperframes.validate.Validator;
import java.nio.file.Path;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** {@code hyperframes validate}: the planner against a file of measured cases. */
@Command(name = "validate", mixinStandardHelpOptions = true,
    description = "Compare predictions with measured cases (format of published-runs.json).")
final class ValidateCommand implements Callable<Integer> {

  @Spec CommandSpec spec;

  @Option(names = "--cases", required = true, paramLabel = "FILE", description = "Cases JSON.")
  Path cases;

  @Option(names = "--catalog", paramLabel = "FILE",
      description = "Catalog override (for example written by calibrate).")
  Path catalog;

  @Option(names = "--format", defaultValue = "table",
      description = "table (default), json or markdown.")
  Format format;

  @Option(names = "--leave-one-source-out",
      description = "Also refit the kernel constants (by default the matmul half dimension and"
          + " the fused-attention efficiency per generation and format family) without each"
          + " source in turn and predict it; print the"
          + " in-sample and out-of-sample error per source and the residual range per regime.")
  boolean leaveOneSourceOut;

  @Option(names = "--write-intervals", paramLabel = "FILE",
      description = "With --leave-one-source-out: write the step-time intervals those residuals"
          + " give, per accelerator generation and regime, as a catalog file (the shipped"
          + " catalog's intervals are this output): a regime's own 5th-95th percentile band"
          + " with at least 5 cases from 4 sources; with fewer, the pooled band widened to the"
          + " regime's own extremes; with none, the whole pooled range, said so.")
  Path writeIntervals;

  @Override
  public Integer call() throws JsonProcessingException {
    if (leaveOneSourceOut) {
      return leaveOneSourceOut(Files2.read("--cases", cases));
    }
    Validator v = catalog == null ? Validator.analytical()
        : Validator.on(io.hyperframes.catalog.Catalog.builtIn().withOverrides(catalog));
    ValidationReport r = v.run(Files2.read("--cases", cases));
    var out = spec.commandLine().getOut();
    switch (format) {
      case json -> out.println(Json.mapper().writerWithDefaultPrettyPrinter()
          .writeValueAsString(r.toJson()));
      case markdown -> out.print(markdown(r));
      case table -> out.print(table(r));
      default -> throw new IllegalArgumentException("--format: " + format + " is not available for validate");
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

  private int leaveOneSourceOut(String text) {
    io.hyperframes.catalog.Catalog shipped = catalog == null
        ? io.hyperframes.catalog.Catalog.builtIn()
        : io.hyperframes.catalog.Catalog.builtIn().withOverrides(catalog);
    var result = io.hyperframes.calibrate.Calibration.fit(text, shipped.withoutKernels(),
        constants(), CalibrateCommand.scopes(scope));
    java.util.Map<String, CaseResult> inSample = new java.util.HashMap<>();
    Validator.on(shipped).run(text).cases().stream().filter(CaseResult::point)
        .forEach(c -> inSample.putIfAbsent(c.id() + " " + c.metric(), c));
    var root = Json.parseObject("cases", text);
    java.util.Map<String, String> regimes = new java.util.HashMap<>();
    for (var c : root.get("cases")) {
      var req = c.path("request");
      if (!"training".equals(req.path("workload").path("type").asText())) {
        continue; // intervals are for training step times
      }
      // The regime of the case's estimate under the shipped catalog: its layout, or
      // communication-bound when exposed communication is half its step or more.
      var r = io.hyperframes.request.Requests.fromJson(req, shipped);
      var e = io.hyperframes.plan.TrainingEstimator.analytical().estimate(r);
      regimes.put(c.path("id").asText(), r.cluster().accelerator().generation() + " "
          + io.hyperframes.hardware.StepInterval.regime(e.layout().tp(), e.layout().pp(),
              e.layout().zeroStage(), e.commShare()));
    }
    java.util.Map<String, java.util.List<double[]>> bySource = new java.util.TreeMap<>();
    // measured / predicted step time (a throughput figure counts inverted), with its source
    java.util.List<Object[]> factors = new java.util.ArrayList<>();
    for (CaseResult l : result.leaveOneOut().cases()) {
      CaseResult in = inSample.get(l.id() + " " + l.metric());
      String source = io.hyperframes.calibrate.Calibration.sourceOf(l.id());
      bySource.computeIfAbsent(source, k -> new java.util.ArrayList<>()).add(new double[] {
          in == null ? Double.NaN : Math.abs(in.relativeError()), Math.abs(l.relativeError())});
      String regime = regimes.get(l.id());
      if (regime != null) {
        boolean time = l.metric().endsWith("Seconds");
        factors.add(new Object[] {regime, source,
            time ? l.expected() / l.predicted() : l.predicted() / l.expected()});
      }
    }
    // A source that a shipped constant this run does not refit, or a modelling decision, was
    // fitted on is in sample whatever the refit does (catalog fittedOn and decisions).
    java.util.Map<String, java.util.List<String>> tainted =
        io.hyperframes.calibrate.Calibration.inSampleSources(shipped, constants(),
            CalibrateCommand.scopes(scope));
    var out = spec.commandLine().getOut();
    out.printf(Locale.ROOT, "| source | cases | in-sample mean / max | leave-one-source-out mean"
        + " / max | held out |%n");
    out.printf(Locale.ROOT, "|---|---:|---:|---:|---|%n");
    double sum = 0;
    int n = 0;
    double heldSum = 0;
    int heldN = 0;
    java.util.List<String> held = new java.util.ArrayList<>();
    for (var e : bySource.entrySet()) {
      var rows = e.getValue();
      double im = rows.stream().mapToDouble(x -> x[0]).average().orElse(Double.NaN);
      double ix = rows.stream().mapToDouble(x -> x[0]).max().orElse(Double.NaN);
      double lm = rows.stream().mapToDouble(x -> x[1]).average().orElse(Double.NaN);
      double lx = rows.stream().mapToDouble(x -> x[1]).max().orElse(Double.NaN);
      sum += rows.stream().mapToDouble(x -> x[1]).sum();
      n += rows.size();
      var why = tainted.get(e.getKey());
      if (why == null) {
        held.add(e.getKey());
        heldSum += rows.stream().mapToDouble(x -> x[1]).sum();
        heldN += rows.size();
      }
      out.printf(Locale.ROOT, "| %s | %d | %.1f %% / %.1f %% | %.1f %% / %.1f %% | %s |%n",
          e.getKey(), rows.size(), 100 * im, 100 * ix, 100 * lm, 100 * lx, why == null ? "yes"
              : "no: " + why.get(0) + (why.size() > 1 ? " (and " + (why.size() - 1) + " more)"
                  : ""));
    }
    out.printf(Locale.ROOT, "%nLeave-one-source-out mean |error| %.2f %% over %d cases (every"
        + " source, in sample or not).%n", 100 * sum / Math.max(1, n), n);
    if (heldN == 0) {
      out.printf(Locale.ROOT, "Out of sample: no source is held out (each helped fit a shipped"
          + " constant this run does not refit, or a modelling decision).%n%n");
    } else {
      out.printf(Locale.ROOT, "Out of sample (sources no shipped constant or modelling decision"
          + " was fitted on: %s): mean |error| %.2f %% over %d cases.%n%n",
          String.join(", ", held), 100 * heldSum / heldN, heldN);
    }
    out.printf(Locale.ROOT, "| regime | cases | measured / predicted step time: 5th, 50th,"
        + " 95th percentile | covered by the interval fitted without the case's source |%n");
    out.printf(Locale.ROOT, "|---|---:|---|---:|%n");
    java.util.Map<String, java.util.List<Object[]>> byRegime = new java.util.TreeMap<>();
    for (Object[] f : factors) {
      byRegime.computeIfAbsent((String) f[0], k -> new java.util.ArrayList<>()).add(f);
      byRegime.computeIfAbsent("* all", k -> new java.util.ArrayList<>()).add(f);
      if (!tainted.containsKey((String) f[1])) {
        byRegime.computeIfAbsent("* held-out sources", k -> new java.util.ArrayList<>()).add(f);
      }
    }
    for (var e : byRegime.entrySet()) {
      double[] v = e.getValue().stream().mapToDouble(f -> (double) f[2]).sorted().toArray();
      int covered = 0;
      for (Object[] f : e.getValue()) {
        Band band = band(factors, (String) f[0], (String) f[1]);
        double x = (double) f[2];
        covered += x >= band.low() && x <= band.high() ? 1 : 0;
      }
      out.printf(Locale.ROOT, "| %s | %d | %.3f, %.3f, %.3f | %d of %d (%.0f %%) |%n", e.getKey(),
          v.length, percentile(v, 5), percentile(v, 50), percentile(v, 95), covered,
          e.getValue().size(), 100.0 * covered / e.getValue().size());
    }
    out.flush();
    if (writeIntervals != null) {
      writeIntervals(factors, shipped, text);
    }
    return 0;
  }

  /** What a regime's band rests on. */
  enum Evidence { OWN, THIN, NONE }

  /** A step-time band, the cases of its own regime it rests on, and on what evidence. */
  record Band(double low, double high, int cases, Evidence evidence) {}

  /**
   * The band of a regime from the factors of every source but {@code without} (null: every
   * source): the regime's own 5th-95th percentiles when at least five cases from at least four
   * sources remain (fewer sources hide the between-source spread a new source shows); with
   * fewer, the pooled 5th-95th percentiles widened to the regime's own extremes (thin evidence);
   * with none, the pooled minimum and maximum (no evidence: the widest band seen, not a narrow
   * borrowed one). The coverage above and the intervals written are both this band.
   */
  static Band band(java.util.List<Object[]> factors, String regime, String without) {
    double[] own = factors.stream().filter(f -> f[0].equals(regime) && !f[1].equals(without))
        .mapToDouble(f -> (double) f[2]).sorted().toArray();
    long sources = factors.stream().filter(f -> f[0].equals(regime) && !f[1].equals(without))
        .map(f -> f[1]).distinct().count();
    double[] pooled = factors.stream().filter(f -> !f[1].equals(without))
        .mapToDouble(f -> (double) f[2]).sorted().toArray();
    double low;
    double high;
    Evidence evidence;
    if (own.length >= 5 && sources >= 4) {
      low = percentile(own, 5);
      high = percentile(own, 95);
      evidence = Evidence.OWN;
    } else if (own.length > 0) {
      low = Math.min(percentile(pooled, 5), own[0]);
      high = Math.max(percentile(pooled, 95), own[own.length - 1]);
      evidence = Evidence.THIN;
    } else {
      low = pooled[0];
      high = pooled[pooled.length - 1];
      evidence = Evidence.NONE;
    }
    return new Band(Math.min(1.0, low), Math.max(1.0, high), own.length, evidence);
  }

  /**
   * Writes the intervals of every accelerator generation of the catalog and every regime, from
   * all sources' residuals, as a catalog file ({@code --write-intervals}).
   */
  private void writeIntervals(java.util.List<Object[]> factors,
      io.hyperframes.catalog.Catalog shipped, String text) {
    java.util.Set<String> generations = new java.util.TreeSet<>();
    shipped.accelerators().values().forEach(a -> generations.add(a.generation()));
    long sources = factors.stream().map(f -> f[1]).distinct().count();
    var root = Json.mapper().createObjectNode();
    root.put("version", 1);
    var list = root.putArray("intervals");
    for (String g : generations) {
      for (String r : io.hyperframes.hardware.StepInterval.REGIMES) {
        Band b = band(factors, g + " " + r, null);
        var e = list.addObject();
        e.put("generation", g);
        e.put("regime", r);
        e.put("low", Math.round(b.low() * 1000) / 1000.0);
        e.put("high", Math.round(b.high() * 1000) / 1000.0);
        e.put("cases", b.cases());
        e.put("source", switch (b.evidence()) {
          case OWN -> String.format(Locale.ROOT, "5th and 95th percentile of measured /"
              + " predicted step time over the %d leave-one-source-out cases of %s %s", b.cases(),
              g, r);
          case THIN -> String.format(Locale.ROOT, "thin evidence: %d leave-one-source-out"
              + " case(s) of %s %s, fewer than 5 from 4 sources; the pooled 5th-95th percentile"
              + " band of %d cases from %d sources widened to include them", b.cases(), g, r,
              factors.size(), sources);
          case NONE -> String.format(Locale.ROOT, "no evidence: no published run of %s %s; the"
              + " whole range of the %d pooled leave-one-source-out cases from %d sources", g,
              r, factors.size(), sources);
        } + " (hyperframes validate --leave-one-source-out --write-intervals; docs/validation.md)");
      }
    }
    try {
      java.nio.file.Files.writeString(writeIntervals, Json.mapper()
          .writerWithDefaultPrettyPrinter().writeValueAsString(root) + "\n");
    } catch (java.io.IOException e) {
      throw new IllegalArgumentException("--write-intervals: cannot write " + writeIntervals
          + " (" + e.getMessage() + ")", e);
    }
  }

  private static double percentile(double[] sorted, double p) {
    var q = new org.apache.commons.math3.stat.descriptive.rank.Percentile();
    q.setData(sorted);
    return q.evaluate(p);
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
