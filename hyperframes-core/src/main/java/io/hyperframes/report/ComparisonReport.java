package io.hyperframes.report;

import static com.google.common.base.Preconditions.checkArgument;

import io.hyperframes.diagnose.Finding;
import io.hyperframes.runtime.BenchmarkRecord;
import io.hyperframes.runtime.Comparison;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * A self-contained HTML report of {@code hyperframes compare}: the verdict, one row per metric
 * (medians, change, Mann–Whitney p-value, verdict), for every metric a chart of both records'
 * samples (each sample a dot, the median a bar, A above B, on one axis), the conditions that
 * differ, the findings of B. No script, font, style sheet or image is loaded from anywhere.
 */
public final class ComparisonReport {
  private ComparisonReport() {}

  private static final String A_COLOR = "#4e79a7";
  private static final String B_COLOR = "#f28e2b";
  private static final int WIDTH = 460;

  /**
   * The report as one HTML document.
   *
   * @throws IllegalArgumentException when an argument is missing
   */
  public static String render(String title, BenchmarkRecord a, BenchmarkRecord b,
      Comparison comparison, List<Finding> findings) {
    checkArgument(title != null && a != null && b != null && comparison != null
        && findings != null, "title, records, comparison and findings: must be given");
    StringBuilder s = new StringBuilder(16_384);
    HtmlReport.head(s, title, HtmlReport.VERDICT_CSS);
    s.append("<h1>").append(HtmlReport.esc(title)).append("</h1>\n<p>");
    s.append(comparison.regressed() ? "<span class=\"bad\">Regression</span>"
        : "<span class=\"ok\">No regression</span>");
    s.append(fmt(" &mdash; Mann&ndash;Whitney at &alpha; = %.3g; a regression is a significant"
        + " change worse than %.1f %%. <span style=\"color:%s\">&#9679; A</span> (baseline)"
        + " against <span style=\"color:%s\">&#9679; B</span>.</p>\n", comparison.alpha(),
        100 * comparison.threshold(), A_COLOR, B_COLOR));
    s.append("<table><tr><th>metric</th><th>unit</th><th>median A</th><th>median B</th>"
        + "<th>change</th><th>p</th><th>samples A / B</th><th>verdict</th></tr>");
    for (Comparison.MetricChange m : comparison.metrics()) {
      String verdict = m.regression() ? "<span class=\"bad\">regression</span>"
          : m.significant() ? "changed" : "no change";
      s.append(fmt("<tr><td>%s</td><td>%s</td><td>%.6g</td><td>%.6g</td><td>%+.2f %%</td>"
          + "<td>%.2g</td><td>%d / %d</td><td>%s</td></tr>", HtmlReport.esc(m.name()),
          HtmlReport.esc(m.unit()), m.medianA(), m.medianB(), 100 * m.change(), m.pValue(),
          a.metrics().get(m.name()).samples().length, b.metrics().get(m.name()).samples().length,
          verdict));
    }
    s.append("</table>\n");
    if (!comparison.onlyInOne().isEmpty()) {
      s.append("<p>Not compared (in one record only): ")
          .append(HtmlReport.esc(String.join(", ", comparison.onlyInOne()))).append("</p>\n");
    }
    s.append("<h2>Samples</h2>\n<div class=\"grid\">");
    for (Comparison.MetricChange m : comparison.metrics()) {
      s.append("<div class=\"card\">").append(strip(m, a.metrics().get(m.name()),
          b.metrics().get(m.name()))).append("</div>");
    }
    s.append("</div>\n");
    s.append("<h2>Conditions</h2>\n");
    if (comparison.conditionDifferences().isEmpty()) {
      s.append("<p>The two runs ran under the same recorded conditions.</p>\n");
    } else {
      s.append("<p class=\"warning\">The runs' conditions differ, which can explain a change:"
          + "</p><ul>");
      comparison.conditionDifferences().forEach(d -> s.append("<li>").append(HtmlReport.esc(d))
          .append("</li>"));
      s.append("</ul>\n");
    }
    s.append("<table><tr><th>condition</th><th>A</th><th>B</th></tr>");
    java.util.TreeSet<String> names = new java.util.TreeSet<>(a.conditions().keySet());
    names.addAll(b.conditions().keySet());
    for (String n : names) {
      s.append(fmt("<tr><td>%s</td><td>%s</td><td>%s</td></tr>", HtmlReport.esc(n),
          cell(a.conditions(), n), cell(b.conditions(), n)));
    }
    s.append("</table>\n<h2>Findings of B</h2>\n");
    if (findings.isEmpty()) {
      s.append("<p>No troubleshooting rule fires on B.</p>\n");
    } else {
      s.append("<table><tr><th>severity</th><th>finding</th><th>evidence</th><th>remedy</th>"
          + "</tr>");
      for (Finding f : findings) {
        String sev = f.severity().name().toLowerCase(Locale.ROOT);
        s.append(fmt("<tr><td class=\"%s\">%s</td><td>%s</td><td>%s</td><td>%s</td></tr>", sev,
            sev, HtmlReport.esc(f.title()), HtmlReport.esc(f.evidence()),
            HtmlReport.esc(f.remedy())));
      }
      s.append("</table>\n");
    }
    return s.append("</body></html>\n").toString();
  }

  private static String cell(Map<String, String> conditions, String name) {
    String v = conditions.get(name);
    return v == null ? "<i>absent</i>" : HtmlReport.esc(v);
  }

  /** Both records' samples as dots on one axis, each record's median as a bar. */
  static String strip(Comparison.MetricChange m, BenchmarkRecord.Metric a,
      BenchmarkRecord.Metric b) {
    double[] sa = a.samples();
    double[] sb = b.samples();
    double lo = Math.min(Arrays.stream(sa).min().orElseThrow(),
        Arrays.stream(sb).min().orElseThrow());
    double hi = Math.max(Arrays.stream(sa).max().orElseThrow(),
        Arrays.stream(sb).max().orElseThrow());
    if (hi <= lo) {
      hi = lo + Math.max(Math.abs(lo) * 1e-3, 1e-12);
    }
    double span = hi - lo;
    double min = lo - 0.05 * span;
    double max = hi + 0.05 * span;
    StringBuilder s = new StringBuilder();
    s.append(fmt("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"118\""
        + " role=\"img\"><text x=\"10\" y=\"14\" font-size=\"12\">%s (%s)%s</text>",
        WIDTH + 20, HtmlReport.esc(m.name()), HtmlReport.esc(m.unit()),
        m.regression() ? " &mdash; regression" : ""));
    row(s, sa, a.median(), 38, min, max, A_COLOR, "A");
    row(s, sb, b.median(), 72, min, max, B_COLOR, "B");
    s.append(fmt("<line x1=\"24\" y1=\"92\" x2=\"%d\" y2=\"92\" stroke=\"#999\"/>"
        + "<text x=\"24\" y=\"108\" font-size=\"11\">%.4g</text>"
        + "<text x=\"%d\" y=\"108\" font-size=\"11\" text-anchor=\"end\">%.4g</text>",
        WIDTH + 10, min, WIDTH + 10, max));
    return s.append("</svg>").toString();
  }

  private static void row(StringBuilder s, double[] samples, double median, int y, double min,
      double max, String color, String label) {
    s.append(fmt("<text x=\"10\" y=\"%d\" font-size=\"11\">%s</text>", y + 4, label));
    int n = samples.length;
    for (int i = 0; i < n; i++) {
      // A little vertical jitter, deterministic, so that equal samples stay visible.
      double jitter = ((i * 7919) % 13 - 6) * 1.2;
      s.append(fmt("<circle cx=\"%.1f\" cy=\"%.1f\" r=\"2.5\" fill=\"%s\""
          + " fill-opacity=\"0.55\"/>", x(samples[i], min, max), y + jitter, color));
    }
    double mx = x(median, min, max);
    s.append(fmt("<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"%s\""
        + " stroke-width=\"3\"/>", mx, y - 12, mx, y + 12, color));
  }

  private static double x(double v, double min, double max) {
    return 24 + (v - min) / (max - min) * (WIDTH - 14);
  }

  private static String fmt(String format, Object... args) {
    return String.format(Locale.ROOT, format, args);
  }
}
