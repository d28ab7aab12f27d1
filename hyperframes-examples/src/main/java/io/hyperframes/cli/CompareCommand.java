package io.hyperframes.cli;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.hyperframes.json.Json;
import io.hyperframes.runtime.BenchmarkRecord;
import io.hyperframes.diagnose.Finding;
import io.hyperframes.runtime.Comparison;
import io.hyperframes.runtime.RecordFindings;
import java.util.List;
import java.nio.file.Path;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code hyperframes compare A.json B.json}: two benchmark records ({@link BenchmarkRecord}),
 * metric by metric, with the Mann–Whitney test ({@link Comparison}), and the troubleshooting
 * findings of B ({@link RecordFindings}); exit status 1 when a metric regressed, so that CI can
 * gate on it.
 */
@Command(name = "compare", mixinStandardHelpOptions = true,
    description = "Compare two benchmark records (B against A): median change, Mann-Whitney"
        + " p-value, differing conditions; exits 1 on a regression.")
final class CompareCommand implements Callable<Integer> {

  @Spec CommandSpec spec;

  @Parameters(index = "0", paramLabel = "A.json", description = "The baseline record.")
  Path a;

  @Parameters(index = "1", paramLabel = "B.json", description = "The record to judge.")
  Path b;

  @Option(names = "--alpha", defaultValue = "0.05",
      description = "Significance level of the Mann-Whitney test (default 0.05).")
  double alpha;

  @Option(names = "--threshold", defaultValue = "0.01",
      description = "Smallest median change, as a fraction, that counts as a regression"
          + " (default 0.01).")
  double threshold;

  private Format format = Format.table;

  @Option(names = "--format", defaultValue = "table", paramLabel = "FORMAT",
      description = "table (default), json or html (self-contained, every sample charted).")
  void format(Format f) {
    format = FormatOption.check(spec, f, Format.table, Format.json, Format.html);
  }

  @Option(names = "--metric", split = ",", paramLabel = "GLOB",
      description = "Compare only the metrics whose names match (globs with *, comma-separated"
          + " or repeated), e.g. 'hyperframes.*': gate on the pipeline you ship.")
  List<String> metricGlobs;

  @Override
  public Integer call() throws Exception {
    BenchmarkRecord judged = only(BenchmarkRecord.read(b), "B");
    BenchmarkRecord baseline = only(BenchmarkRecord.read(a), "A");
    Comparison c = Comparison.of(baseline, judged, alpha, threshold);
    List<Finding> findings = RecordFindings.of(judged);
    var out = spec.commandLine().getOut();
    if (format == Format.json) {
      ObjectNode root = Json.mapper().createObjectNode();
      root.put("regressed", c.regressed());
      root.put("alpha", alpha);
      root.put("threshold", threshold);
      ArrayNode metrics = root.putArray("metrics");
      for (Comparison.MetricChange m : c.metrics()) {
        ObjectNode o = metrics.addObject();
        o.put("name", m.name());
        o.put("unit", m.unit());
        o.put("medianA", m.medianA());
        o.put("medianB", m.medianB());
        o.put("change", m.change());
        o.put("pValue", m.pValue());
        o.put("significant", m.significant());
        o.put("regression", m.regression());
        o.put("batch", m.batch());
      }
      c.onlyInOne().forEach(root.putArray("onlyInOne")::add);
      c.conditionDifferences().forEach(root.putArray("conditionDifferences")::add);
      ArrayNode f = root.putArray("findings");
      for (Finding x : findings) {
        f.addObject().put("id", x.id()).put("severity", x.severity().name()
            .toLowerCase(Locale.ROOT)).put("title", x.title()).put("evidence", x.evidence())
            .put("remedy", x.remedy());
      }
      out.println(Json.mapper().writerWithDefaultPrettyPrinter().writeValueAsString(root));
    } else if (format == Format.table) {
      out.printf(Locale.ROOT, "%-28s %14s %14s %9s %9s %5s  %s%n", "metric", "median A",
          "median B", "change", "p", "batch", "verdict");
      for (Comparison.MetricChange m : c.metrics()) {
        out.printf(Locale.ROOT, "%-28s %14.6g %14.6g %+8.2f%% %9.2g %5d  %s%n",
            m.name() + " (" + m.unit() + ")", m.medianA(), m.medianB(), 100 * m.change(),
            m.pValue(), m.batch(), m.regression() ? "REGRESSION" : m.significant() ? "changed" : "no change");
      }
      c.onlyInOne().forEach(n -> out.println("not compared: " + n));
      if (!c.conditionDifferences().isEmpty()) {
        out.println("warning: the runs' conditions differ, which can explain a change:");
        c.conditionDifferences().forEach(d -> out.println("  " + d));
      }
      for (Finding x : findings) {
        out.printf(Locale.ROOT, "[%s] %s — %s (%s)%n", x.severity().name()
            .toLowerCase(Locale.ROOT), x.title(), x.remedy(), x.evidence());
      }
    } else {
      out.print(io.hyperframes.report.ComparisonReport.render("HyperFrames compare: "
          + b.getFileName() + " against " + a.getFileName(), baseline, judged, c, findings));
    }
    out.flush();
    return c.regressed() ? 1 : 0;
  }

  /** The record with only the metrics {@code --metric} selects (all without it). */
  private BenchmarkRecord only(BenchmarkRecord r, String which) {
    if (metricGlobs == null || metricGlobs.isEmpty()) {
      return r;
    }
    List<java.util.regex.Pattern> patterns = new java.util.ArrayList<>();
    for (String g : metricGlobs) {
      if (g.isBlank()) {
        throw new IllegalArgumentException("--metric: empty pattern");
      }
      StringBuilder re = new StringBuilder();
      for (String part : g.split("\\*", -1)) {
        if (re.length() > 0 || g.startsWith("*")) {
          re.append(".*");
        }
        re.append(java.util.regex.Pattern.quote(part));
      }
      patterns.add(java.util.regex.Pattern.compile(re.toString()));
    }
    java.util.Map<String, BenchmarkRecord.Metric> kept = new java.util.TreeMap<>();
    r.metrics().forEach((name, m) -> {
      if (patterns.stream().anyMatch(p -> p.matcher(name).matches())) {
        kept.put(name, m);
      }
    });
    if (kept.isEmpty()) {
      throw new IllegalArgumentException("--metric: " + String.join(",", metricGlobs)
          + " matches no metric of " + which + " (" + String.join(", ", r.metrics().keySet())
          + ")");
    }
    return new BenchmarkRecord(r.schema(), r.conditions(), kept);
  }
}
