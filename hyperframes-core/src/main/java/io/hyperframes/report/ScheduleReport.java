package io.hyperframes.report;

import static com.google.common.base.Preconditions.checkArgument;

import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * A self-contained HTML report of {@code hyperframes schedule}: a summary table with one row per
 * policy, GPUs allocated over time (share of capacity) and the distribution of job completion
 * times (empirical CDF on a logarithmic axis), one line per policy. No script, font, style
 * sheet or image is loaded from anywhere.
 */
public final class ScheduleReport {
  private ScheduleReport() {}

  private static final String[] COLORS = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2",
      "#59a14f", "#edc948", "#b07aa1", "#ff9da7"};
  private static final int W = 640;
  private static final int H = 300;
  private static final int LEFT = 60;
  private static final int TOP = 20;
  private static final int PW = W - LEFT - 20;
  private static final int PH = H - TOP - 40;

  /**
   * One policy's replay.
   *
   * @param policy its name
   * @param allocated {bin start seconds, mean GPUs allocated} rows (equal bins)
   * @param jctSeconds completion times of the finished jobs
   * @param summary figures for the table, in order (name → formatted value)
   */
  public record Series(String policy, double[][] allocated, double[] jctSeconds,
      Map<String, String> summary) {
    public Series {
      checkArgument(policy != null && allocated != null && allocated.length == 2
          && allocated[0].length == allocated[1].length && jctSeconds != null && summary != null,
          "series: policy, allocated {times, values}, jctSeconds and summary must be given");
      summary = java.util.Collections.unmodifiableMap(new java.util.LinkedHashMap<>(summary));
    }
  }

  /**
   * The report as one HTML document.
   *
   * @param title heading
   * @param description one paragraph under it (plain text)
   * @param capacityGpus GPUs in the cluster, &gt; 0
   * @param series one per policy, at least one
   * @throws IllegalArgumentException when an argument is missing or invalid
   */
  public static String render(String title, String description, double capacityGpus,
      List<Series> series) {
    checkArgument(title != null && description != null, "title and description: must be given");
    checkArgument(capacityGpus > 0, "capacityGpus: must be > 0, got %s", capacityGpus);
    checkArgument(series != null && !series.isEmpty(), "series: at least one");
    StringBuilder s = new StringBuilder(32_768);
    HtmlReport.head(s, title, "td{text-align:right}td:first-child{text-align:left}\n");
    s.append("<h1>").append(HtmlReport.esc(title)).append("</h1>\n<p>")
        .append(HtmlReport.esc(description)).append("</p>\n");
    Set<String> columns = new LinkedHashSet<>();
    series.forEach(x -> columns.addAll(x.summary().keySet()));
    s.append("<table><tr><th>policy</th>");
    columns.forEach(c -> s.append("<th>").append(HtmlReport.esc(c)).append("</th>"));
    s.append("</tr>");
    for (int i = 0; i < series.size(); i++) {
      Series x = series.get(i);
      s.append(fmt("<tr><td><span style=\"color:%s\">&#9679;</span> %s</td>", color(i),
          HtmlReport.esc(x.policy())));
      for (String c : columns) {
        s.append("<td>").append(HtmlReport.esc(x.summary().getOrDefault(c, ""))).append("</td>");
      }
      s.append("</tr>");
    }
    s.append("</table>\n<h2>GPUs allocated over time</h2>\n").append(utilisation(series,
        capacityGpus)).append("\n<h2>Job completion time (CDF)</h2>\n").append(cdf(series))
        .append("\n</body></html>\n");
    return s.toString();
  }

  private static String utilisation(List<Series> series, double capacity) {
    double end = 0;
    for (Series x : series) {
      double[] t = x.allocated()[0];
      if (t.length > 0) {
        end = Math.max(end, t[t.length - 1] + (t.length > 1 ? t[1] - t[0] : 0));
      }
    }
    if (!(end > 0)) {
      return "<p>No job ran.</p>";
    }
    double unit = end > 4 * 86_400 ? 86_400 : end > 4 * 3600 ? 3600 : 60;
    String unitName = unit == 86_400 ? "days" : unit == 3600 ? "hours" : "minutes";
    StringBuilder s = frame("time (" + unitName + ")", "GPUs allocated (% of capacity)",
        0, end / unit, false, 100);
    for (int i = 0; i < series.size(); i++) {
      double[][] a = series.get(i).allocated();
      StringBuilder pts = new StringBuilder();
      for (int k = 0; k < a[0].length; k++) {
        pts.append(fmt("%.1f,%.1f ", x(a[0][k] / unit, 0, end / unit),
            y(100 * a[1][k] / capacity, 100)));
      }
      s.append(fmt("<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"1.5\" points=\"%s\"/>",
          color(i), pts.toString().strip()));
    }
    return s.append("</svg>").toString();
  }

  private static String cdf(List<Series> series) {
    double lo = Double.POSITIVE_INFINITY;
    double hi = 0;
    for (Series x : series) {
      for (double v : x.jctSeconds()) {
        if (v > 0 && Double.isFinite(v)) {
          lo = Math.min(lo, v);
          hi = Math.max(hi, v);
        }
      }
    }
    if (!(hi > 0)) {
      return "<p>No job finished.</p>";
    }
    double a = Math.floor(Math.log10(lo));
    double b = Math.max(a + 1, Math.ceil(Math.log10(hi)));
    StringBuilder s = frame("job completion time (s, log scale)", "share of jobs finished",
        a, b, true, 1);
    for (int i = 0; i < series.size(); i++) {
      double[] v = Arrays.stream(series.get(i).jctSeconds()).filter(j -> j > 0
          && Double.isFinite(j)).sorted().toArray();
      if (v.length == 0) {
        continue;
      }
      StringBuilder pts = new StringBuilder();
      int step = Math.max(1, v.length / 600);
      for (int k = 0; k < v.length; k += step) {
        pts.append(fmt("%.1f,%.1f ", x(Math.log10(v[k]), a, b), y((k + 1.0) / v.length,
            1)));
      }
      pts.append(fmt("%.1f,%.1f", x(Math.log10(v[v.length - 1]), a, b), y(1, 1)));
      s.append(fmt("<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"1.5\" points=\"%s\"/>",
          color(i), pts));
    }
    return s.append("</svg>").toString();
  }

  /** Axes; on a log axis {@code min} and {@code max} are decades. */
  private static StringBuilder frame(String xLabel, String yLabel, double min, double max,
      boolean log, double maxY) {
    StringBuilder s = new StringBuilder();
    s.append(fmt("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\""
        + " role=\"img\">", W, H));
    s.append(fmt("<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#333\"/>", LEFT,
        TOP + PH, LEFT + PW, TOP + PH));
    s.append(fmt("<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#333\"/>", LEFT, TOP,
        LEFT, TOP + PH));
    int ticks = log ? (int) Math.round(max - min) : 4;
    for (int i = 0; i <= ticks; i++) {
      double fx = min + (max - min) * i / ticks;
      String label = log ? fmt("1e%d", (int) Math.round(fx)) : fmt("%.3g", fx);
      s.append(fmt("<text x=\"%.1f\" y=\"%d\" font-size=\"10\" text-anchor=\"middle\">%s"
          + "</text>", x(fx, min, max), TOP + PH + 14, label));
    }
    for (int i = 0; i <= 4; i++) {
      double fy = maxY * i / 4;
      s.append(fmt("<text x=\"%d\" y=\"%.1f\" font-size=\"10\" text-anchor=\"end\">%.3g</text>",
          LEFT - 5, y(fy, maxY) + 3, fy));
      s.append(fmt("<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#eee\"/>", LEFT + 1,
          y(fy, maxY), LEFT + PW, y(fy, maxY)));
    }
    s.append(fmt("<text x=\"%d\" y=\"%d\" font-size=\"12\" text-anchor=\"middle\">%s</text>",
        LEFT + PW / 2, H - 6, HtmlReport.esc(xLabel)));
    s.append(fmt("<text x=\"14\" y=\"%d\" font-size=\"12\" text-anchor=\"middle\""
        + " transform=\"rotate(-90 14 %d)\">%s</text>", TOP + PH / 2, TOP + PH / 2,
        HtmlReport.esc(yLabel)));
    return s;
  }

  private static double x(double v, double min, double max) {
    return LEFT + (v - min) / (max - min) * PW;
  }

  private static double y(double v, double maxY) {
    return TOP + PH - Math.max(0, Math.min(maxY, v)) / maxY * PH;
  }

  private static String color(int i) {
    return COLORS[i % COLORS.length];
  }

  private static String fmt(String format, Object... args) {
    return String.format(Locale.ROOT, format, args);
  }
}
