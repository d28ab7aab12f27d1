package io.hyperframes.report;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.hyperframes.PlanRequests;
import io.hyperframes.plan.Plan;
import io.hyperframes.plan.PlanRequest;
import io.hyperframes.plan.Planner;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/** The HTML report is self-contained and carries its four charts. */
class HtmlReportTest {

  /** Llama 2 7B on 8-64 A100 for 200 B tokens: communication hides, cost barely moves. */
  private static final PlanRequest REQUEST = PlanRequests.parse("""
      {"model": {"catalog": "llama2-7b"}, "cluster": {"accelerator": "a100-sxm-80gb",
       "devices": "8-64"}, "workload": {"type": "training", "precision": "bf16-mixed",
       "trainingTokens": 2e11}}
      """);

  @Test
  void reportHasFourChartsAndLoadsNothingFromOutside() {
    Plan plan = Planner.analytical().plan(REQUEST);
    String html = HtmlReport.render(plan, "test <report>",
        REQUEST.cluster().accelerator().memoryBytes());
    assertTrue(html.startsWith("<!DOCTYPE html>"));
    assertEquals(4, Pattern.compile("<svg ").matcher(html).results().count());
    assertFalse(html.contains("<script"), "no scripts");
    assertFalse(Pattern.compile("(src|href)=\"(https?:)?//").matcher(html).find(),
        "no external resources");
    assertFalse(html.contains("@import"));
    assertTrue(html.contains("test &lt;report&gt;"), "titles are escaped");
    var e = plan.best().estimate();
    assertTrue(html.contains(String.format(java.util.Locale.ROOT, "%.3g-%.3g",
        e.stepSecondsLow(), e.stepSecondsHigh())), "the step-time interval is shown");
    assertTrue(html.contains(String.format(java.util.Locale.ROOT, "%.1f-%.1f",
        e.trainingDaysLow(), e.trainingDaysHigh())), "the time-to-train interval is shown");
    assertTrue(html.contains("Golden parameters") && html.contains("Findings"));
  }

  @Test
  void theCostAxisSpansTheCostsSoThatNearlyEqualCostsAreApart() {
    // Every device count costs about the same here: an axis from 0 drew the front on one line.
    String html = HtmlReport.render(Planner.analytical().plan(REQUEST), "t",
        REQUEST.cluster().accelerator().memoryBytes());
    String pareto = html.substring(html.indexOf("Time against cost"));
    pareto = pareto.substring(0, pareto.indexOf("</svg>"));
    double[] ys = Pattern.compile("<circle cx=\"[0-9.]+\" cy=\"([0-9.]+)\"").matcher(pareto)
        .results().mapToDouble(m -> Double.parseDouble(m.group(1))).toArray();
    assertTrue(ys.length >= 2, pareto);
    double lo = java.util.Arrays.stream(ys).min().orElseThrow();
    double hi = java.util.Arrays.stream(ys).max().orElseThrow();
    // The plot area is 240 px high; the costs take most of it, inside it.
    assertTrue(hi - lo > 150 && lo >= 20 && hi <= 260, lo + " .. " + hi);
    // The ticks left of the axis fit its 55 px (at most 9 characters of a 10 px font): the
    // costs, about 2.2e4 USD, are written in units of 1e4 that the axis label names, and still
    // differ from one tick to the next.
    java.util.List<String> ticks = Pattern.compile("<text x=\"55\" y=\"[0-9.]+\""
        + " font-size=\"10\" text-anchor=\"end\">([^<]*)</text>").matcher(pareto).results()
        .map(m -> m.group(1)).toList();
    assertEquals(5, ticks.size(), pareto);
    assertEquals(5, new java.util.HashSet<>(ticks).size(), ticks.toString());
    ticks.forEach(t -> assertTrue(t.length() <= 9 && !t.contains("e"), ticks.toString()));
    assertTrue(pareto.contains(">cost (USD) ×1e4</text>"), pareto);
  }
}
