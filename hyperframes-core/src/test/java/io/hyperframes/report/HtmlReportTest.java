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

  @Test
  void reportHasFourChartsAndLoadsNothingFromOutside() {
    PlanRequest r = PlanRequests.parse("""
        {"model": {"catalog": "llama2-7b"}, "cluster": {"accelerator": "a100-sxm-80gb",
         "devices": "8-64"}, "workload": {"type": "training", "precision": "bf16-mixed",
         "trainingTokens": 2e11}}
        """);
    Plan plan = Planner.analytical().plan(r);
    String html = HtmlReport.render(plan, "test <report>", r.cluster().accelerator().memoryBytes());
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
}
