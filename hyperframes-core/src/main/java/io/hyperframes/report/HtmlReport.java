package io.hyperframes.report;

import io.hyperframes.diagnose.Finding;
import io.hyperframes.plan.Candidate;
import io.hyperframes.plan.MemoryBreakdown;
import io.hyperframes.plan.Plan;
import io.hyperframes.plan.TimeBreakdown;
import io.hyperframes.plan.TrainingEstimate;
import io.hyperframes.plan.GoldenParameter;
import java.util.List;
import java.util.Locale;

/**
 * A self-contained HTML report of a plan: summary, memory and step-time breakdowns, the scaling
 * curve over device counts and the time-against-cost Pareto front as inline SVG, and the tables
 * of alternatives, golden parameters and findings. No script, font, style sheet or image is
 * loaded from anywhere: the file renders offline.
 */
public final class HtmlReport {
  private HtmlReport() {}

  private static final String[] COLORS = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2",
      "#59a14f", "#edc948", "#b07aa1", "#9c755f"};

  /** The report as one HTML document. */
  public static String render(Plan plan, String title, double deviceMemoryBytes) {
    Candidate best = plan.best();
    TrainingEstimate e = best.estimate();
    var l = e.layout();
    StringBuilder b = new StringBuilder(32_768);
    head(b, title, VERDICT_CSS);
    b.append("<h1>").append(esc(title)).append("</h1>\n<p>");
    b.append(plan.feasible() ? "<span class=\"ok\">Feasible</span>"
        : "<span class=\"bad\">Not feasible</span>");
    b.append(fmt(" &mdash; %d devices, engine %s, tp %d, pp %d, dp %d, %d virtual stages,"
        + " micro-batch %d, global batch %d, %s, sequence parallel %s, recompute %s, ZeRO %d%s."
        + " Searched %d candidates in %.2f s.</p>\n", e.devices(), esc(plan.engineChoice()),
        l.tp(), l.pp(), l.dp(), l.virtualStages(), l.microBatch(),
        best.workload().globalBatchSize(), esc(best.workload().precision().name()),
        l.sequenceParallel(), l.recompute().id()
            + (l.recomputeModules().equals(io.hyperframes.parallel.RecomputeModule.DEFAULT)
                || l.recomputeModules().isEmpty() ? "" : " ("
                + String.join(", ", io.hyperframes.parallel.RecomputeModule.ids(
                    l.recomputeModules())) + ")"), l.zeroStage(),
        (l.shardGroupSize() > 0 ? fmt(", shard group %d", l.shardGroupSize()) : "")
            + (l.ep() > 1 ? fmt(", expert parallel %d (%s dispatcher%s)", l.ep(),
                l.moeDispatcher().id(), l.overlapMoeComm() ? ", overlapped" : "") : "")
            + (l.cp() > 1 ? fmt(", context parallel %d (%s)", l.cp(), l.cpCommType().id()) : ""),
        plan.candidatesEvaluated(), plan.seconds()));
    if (!plan.reasons().isEmpty()) {
      b.append("<ul>");
      plan.reasons().forEach(r -> b.append("<li>").append(esc(r)).append("</li>"));
      b.append("</ul>\n");
    }
    b.append("<table><tr><th>step</th><th>MFU</th><th>tokens/s</th><th>comm share</th>"
        + "<th>training days</th><th>GPU-hours</th><th>cost (USD)</th></tr>");
    double lo = e.interval().low();
    double hi = e.interval().high();
    b.append(fmt("<tr><td>%.3g s<br><small>%.3g-%.3g</small></td><td>%.1f %%</td><td>%.3g</td>"
        + "<td>%.1f %%</td><td>%.1f<br><small>%.1f-%.1f</small></td><td>%.3g</td>"
        + "<td>%.3g<br><small>%.3g-%.3g</small></td></tr></table>\n", e.stepSeconds(),
        e.stepSecondsLow(), e.stepSecondsHigh(), 100 * e.mfu(), e.tokensPerSecond(),
        100 * e.commShare(), e.trainingDays(), e.trainingDaysLow(), e.trainingDaysHigh(),
        e.gpuHours(), best.cost().totalUsd(), lo * best.cost().totalUsd(),
        hi * best.cost().totalUsd()));
    b.append(fmt("<p><small>Ranges: the 90 %% interval of the step time from the out-of-sample"
        + " validation (%.3g-%.3g x the prediction, %d published runs of %s; docs/validation.md)."
        + "</small></p>\n", lo, hi, e.interval().cases(),
        e.interval().regime().isEmpty() ? "its regime" : esc(e.interval().regime())));

    b.append("<div class=\"grid\">\n<div class=\"card\"><h2>Memory per device</h2>");
    MemoryBreakdown m = e.memory();
    b.append(stackedBar(new String[] {"weights", "gradients", "optimizer", "activations",
        "other"}, new double[] {m.weightsBytes(), m.gradientsBytes(), m.optimizerBytes(),
            m.activationsBytes(), m.otherBytes()}, deviceMemoryBytes, "GiB", 1L << 30,
        "capacity"));
    b.append("</div>\n<div class=\"card\"><h2>Step time</h2>");
    TimeBreakdown t = e.time();
    b.append(stackedBar(new String[] {"compute", "recompute", "tensor comm", "pipeline comm",
        "data-parallel comm", "all-to-all", "context-parallel KV", "bubble", "optimizer"},
        new double[] {
            t.computeSeconds(), t.recomputeSeconds(), t.tensorParallelCommSeconds(),
            t.pipelineCommSeconds(), t.dataParallelCommSeconds(), t.allToAllSeconds(),
            t.contextParallelSeconds(), t.bubbleSeconds(), t.optimizerSeconds()},
        0, "s", 1, null));
    b.append("</div>\n<div class=\"card\"><h2>Scaling over device counts</h2>");
    b.append(scaling(plan.scaling()));
    b.append("</div>\n<div class=\"card\"><h2>Time against cost</h2>");
    b.append(pareto(plan.scaling(), plan.pareto()));
    b.append("</div>\n</div>\n");

    b.append("<h2>Alternatives</h2><table><tr><th>devices</th><th>engine</th><th>tp</th>"
        + "<th>pp</th><th>dp</th>"
        + "<th>v</th><th>micro-batch</th><th>batch</th><th>SP</th><th>recompute</th><th>ZeRO</th>"
        + "<th>step s</th><th>MFU</th><th>days</th><th>USD</th></tr>\n");
    for (Candidate c : plan.alternatives()) {
      TrainingEstimate a = c.estimate();
      var al = a.layout();
      b.append(fmt("<tr><td>%d</td><td>%s</td><td>%d</td><td>%d</td><td>%d</td><td>%d</td>"
          + "<td>%d</td><td>%d</td><td>%s</td><td>%s</td><td>%d</td><td>%.3g</td>"
          + "<td>%.1f %%</td><td>%.1f</td><td>%.3g</td></tr>\n", a.devices(),
          esc(al.engine().id()), al.tp(), al.pp(), al.dp(),
          al.virtualStages(), al.microBatch(), c.workload().globalBatchSize(),
          al.sequenceParallel(), al.recompute().id(), al.zeroStage(), a.stepSeconds(),
          100 * a.mfu(), a.trainingDays(), c.cost().totalUsd()));
    }
    b.append("</table>\n<h2>Golden parameters</h2><table><tr><th>parameter</th><th>value</th>"
        + "<th>why</th></tr>\n");
    for (GoldenParameter g : plan.goldenParameters()) {
      String v = g.value() instanceof Double d ? fmt("%.4g", d) : String.valueOf(g.value());
      b.append("<tr><td>").append(esc(g.name())).append("</td><td>").append(esc(v)).append(' ')
          .append(esc(g.unit())).append("</td><td>").append(esc(g.reason()))
          .append("</td></tr>\n");
    }
    b.append("</table>\n<h2>Findings</h2>\n");
    if (plan.findings().isEmpty()) {
      b.append("<p>None.</p>\n");
    } else {
      b.append("<ul>\n");
      for (Finding f : plan.findings()) {
        String sev = f.severity().name().toLowerCase(Locale.ROOT);
        b.append("<li><span class=\"").append(sev).append("\">[").append(sev).append("]</span> ")
            .append("<b>").append(esc(f.title())).append("</b><br>").append(esc(f.evidence()))
            .append("<br><i>Remedy:</i> ").append(esc(f.remedy())).append("</li>\n");
      }
      b.append("</ul>\n");
    }
    b.append("<p style=\"color:#777;font-size:12px\">Generated by HyperFrames; formulas and"
        + " sources in docs/model-reference.md.</p>\n</body></html>\n");
    return b.toString();
  }

  private static String stackedBar(String[] names, double[] values, double limit, String unit,
      double scale, String limitName) {
    double total = 0;
    for (double v : values) {
      total += v;
    }
    double max = Math.max(total, limit) * 1.05;
    if (max <= 0) {
      return "<p>nothing to show</p>";
    }
    int width = 480;
    StringBuilder s = new StringBuilder();
    s.append(fmt("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\""
        + " role=\"img\">", width + 20, 60 + 18 * names.length));
    double x = 10;
    for (int i = 0; i < values.length; i++) {
      double w = values[i] / max * width;
      s.append(fmt("<rect x=\"%.1f\" y=\"10\" width=\"%.1f\" height=\"26\" fill=\"%s\"/>", x, w,
          COLORS[i % COLORS.length]));
      x += w;
    }
    if (limit > 0) {
      double lx = 10 + limit / max * width;
      s.append(fmt("<line x1=\"%.1f\" y1=\"4\" x2=\"%.1f\" y2=\"42\" stroke=\"#b22\""
          + " stroke-width=\"2\"/><text x=\"%.1f\" y=\"54\" font-size=\"11\" fill=\"#b22\""
          + " text-anchor=\"end\">%s %.1f %s</text>", lx, lx, lx, esc(limitName), limit / scale,
          unit));
    }
    for (int i = 0; i < names.length; i++) {
      int y = 72 + 18 * i;
      s.append(fmt("<rect x=\"10\" y=\"%d\" width=\"12\" height=\"12\" fill=\"%s\"/>", y - 10,
          COLORS[i % COLORS.length]));
      s.append(fmt("<text x=\"28\" y=\"%d\" font-size=\"12\">%s: %.3g %s (%.0f %%)</text>", y,
          esc(names[i]), values[i] / scale, unit, total > 0 ? 100 * values[i] / total : 0));
    }
    return s.append("</svg>").toString();
  }

  private static String scaling(List<Candidate> points) {
    List<Candidate> feasible = points.stream().filter(c -> c.estimate().feasible()).toList();
    if (feasible.size() < 2) {
      return "<p>One device count only: no curve.</p>";
    }
    double maxN = 0;
    double maxT = 0;
    for (Candidate c : feasible) {
      maxN = Math.max(maxN, c.estimate().devices());
      maxT = Math.max(maxT, c.estimate().tokensPerSecond());
    }
    Candidate first = feasible.get(0);
    double perDevice = first.estimate().tokensPerSecond() / first.estimate().devices();
    maxT = Math.max(maxT, perDevice * maxN) * 1.05;
    StringBuilder s = axes("devices", "tokens/s", maxN, maxT);
    s.append(fmt("<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#aaa\""
        + " stroke-dasharray=\"4 3\"/>", px(first.estimate().devices(), maxN),
        py(first.estimate().tokensPerSecond(), maxT), px(maxN, maxN), py(perDevice * maxN, maxT)));
    StringBuilder path = new StringBuilder();
    for (Candidate c : feasible) {
      path.append(path.length() == 0 ? "M" : " L").append(fmt("%.1f %.1f",
          px(c.estimate().devices(), maxN), py(c.estimate().tokensPerSecond(), maxT)));
    }
    s.append("<path d=\"").append(path).append("\" fill=\"none\" stroke=\"#4e79a7\""
        + " stroke-width=\"2\"/>");
    for (Candidate c : feasible) {
      s.append(fmt("<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"#4e79a7\"/>",
          px(c.estimate().devices(), maxN), py(c.estimate().tokensPerSecond(), maxT)));
    }
    s.append("<text x=\"300\" y=\"30\" font-size=\"11\" fill=\"#777\">dashed: linear"
        + " scaling</text>");
    return s.append("</svg>").toString();
  }

  private static String pareto(List<Candidate> all, List<Candidate> front) {
    List<Candidate> feasible = all.stream().filter(c -> c.estimate().feasible()).toList();
    if (feasible.isEmpty() || feasible.get(0).workload().trainingTokens() <= 0) {
      return "<p>Needs a token budget and a feasible plan.</p>";
    }
    double maxD = 0;
    double maxC = 0;
    for (Candidate c : feasible) {
      maxD = Math.max(maxD, c.estimate().trainingDays());
      maxC = Math.max(maxC, c.cost().totalUsd());
    }
    maxD *= 1.05;
    maxC *= 1.05;
    if (maxC <= 0) {
      return "<p>No price known: give pricing.pricePerDeviceHour.</p>";
    }
    StringBuilder s = axes("training days", "cost (USD)", maxD, maxC);
    for (Candidate c : feasible) {
      boolean onFront = front.contains(c);
      s.append(fmt("<circle cx=\"%.1f\" cy=\"%.1f\" r=\"%d\" fill=\"%s\"><title>%d devices:"
          + " %.1f days, %.3g USD</title></circle>", px(c.estimate().trainingDays(), maxD),
          py(c.cost().totalUsd(), maxC), onFront ? 5 : 3, onFront ? "#e15759" : "#bbb",
          c.estimate().devices(), c.estimate().trainingDays(), c.cost().totalUsd()));
    }
    s.append("<text x=\"300\" y=\"30\" font-size=\"11\" fill=\"#e15759\">red: Pareto"
        + " front</text>");
    return s.append("</svg>").toString();
  }

  private static StringBuilder axes(String xLabel, String yLabel, double maxX, double maxY) {
    StringBuilder s = new StringBuilder();
    s.append("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"480\" height=\"300\""
        + " role=\"img\">");
    s.append("<line x1=\"60\" y1=\"260\" x2=\"460\" y2=\"260\" stroke=\"#333\"/>");
    s.append("<line x1=\"60\" y1=\"20\" x2=\"60\" y2=\"260\" stroke=\"#333\"/>");
    for (int i = 0; i <= 4; i++) {
      double fx = maxX * i / 4;
      double fy = maxY * i / 4;
      s.append(fmt("<text x=\"%.1f\" y=\"275\" font-size=\"10\" text-anchor=\"middle\">%.3g"
          + "</text>", px(fx, maxX), fx));
      s.append(fmt("<text x=\"55\" y=\"%.1f\" font-size=\"10\" text-anchor=\"end\">%.3g</text>",
          py(fy, maxY) + 3, fy));
    }
    s.append(fmt("<text x=\"260\" y=\"294\" font-size=\"12\" text-anchor=\"middle\">%s</text>",
        esc(xLabel)));
    s.append(fmt("<text x=\"14\" y=\"140\" font-size=\"12\" text-anchor=\"middle\""
        + " transform=\"rotate(-90 14 140)\">%s</text>", esc(yLabel)));
    return s;
  }

  private static double px(double x, double maxX) {
    return 60 + x / maxX * 400;
  }

  private static double py(double y, double maxY) {
    return 260 - y / maxY * 240;
  }

  /** Cards, verdicts and severities of the plan and comparison reports. */
  static final String VERDICT_CSS = ".ok{color:#2a7d2a;font-weight:bold}.bad{color:#b22;"
      + "font-weight:bold}\n.grid{display:flex;flex-wrap:wrap;gap:18px}.card{border:1px solid"
      + " #ddd;padding:10px;border-radius:6px}\n.warning{color:#a65e00}.critical{color:#b22}"
      + ".info{color:#555}\n";

  /**
   * Opens a self-contained report page: the document head with the reports' common style and
   * {@code extraCss}, up to the opened body.
   */
  static void head(StringBuilder b, String title, String extraCss) {
    b.append("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>")
        .append(esc(title)).append("</title>\n<style>\n")
        .append("body{font-family:system-ui,-apple-system,Segoe UI,sans-serif;margin:24px;"
            + "color:#222;max-width:1100px}\n")
        .append("h1{font-size:22px}h2{font-size:17px;margin-top:28px}\n")
        .append("table{border-collapse:collapse;font-size:13px}td,th{border:1px solid #ccc;"
            + "padding:3px 7px;text-align:left}th{background:#f3f3f3}\n")
        .append(extraCss).append("</style></head><body>\n");
  }

  static String esc(String s) {
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
        .replace("\"", "&quot;");
  }

  private static String fmt(String format, Object... args) {
    return String.format(Locale.ROOT, format, args);
  }
}
