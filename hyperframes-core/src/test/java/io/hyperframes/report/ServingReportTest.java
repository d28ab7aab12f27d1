package io.hyperframes.report;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.hyperframes.HyperFrames;
import io.hyperframes.ServeBuilder;
import io.hyperframes.inference.InferencePlanner;
import io.hyperframes.inference.ServingPlans;
import java.time.Duration;
import java.util.Locale;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The serving report is self-contained: its chart draws every point of the front where the
 * figures put it, its tables carry the best configuration, and a plan with none says so.
 */
class ServingReportTest {

  private static final ServeBuilder SEVEN_B = HyperFrames.serve().model("llama2-7b")
      .accelerator("h100-sxm-80gb").devices(8).precision("fp16").batch(1).prompt(512)
      .output(128).latencySlo(Duration.ofMillis(500), 99);

  @Test
  void theChartAndTablesShowTheFront() {
    ServingPlans.Result result = SEVEN_B.arrivalRate(5).plan();
    String html = ServingReport.render(result, "serving <7b>");
    assertTrue(html.startsWith("<!DOCTYPE html>"));
    assertTrue(html.contains("serving &lt;7b&gt;"), "titles are escaped");
    assertFalse(html.contains("<script"), "no scripts");
    assertFalse(Pattern.compile("(src|href)=\"(https?:)?//").matcher(html).find(),
        "no external resources");
    assertEquals(1, Pattern.compile("<svg ").matcher(html).results().count());
    var front = result.plan().pareto();
    assertTrue(front.size() > 2, "a 7B model on an H100 has a front of several batches");
    assertEquals(front.size(), Pattern.compile("<circle ").matcher(html).results().count());
    // The most interactive point sits furthest right, the last one (most per GPU) at the top.
    InferencePlanner.FrontPoint first = front.get(0);
    InferencePlanner.FrontPoint last = front.get(front.size() - 1);
    // The axes reach the top of the points' intervals, each point with its segment.
    var plan = result.plan();
    double maxX = plan.high(front.stream()
        .mapToDouble(InferencePlanner.FrontPoint::tokensPerSecondPerUser).max().orElseThrow())
        * 1.05;
    double maxY = plan.high(front.stream()
        .mapToDouble(InferencePlanner.FrontPoint::tokensPerSecondPerGpu).max().orElseThrow())
        * 1.05;
    assertEquals(front.size(), Pattern.compile("stroke=\"#bbb\"").matcher(html).results()
        .count());
    assertTrue(html.contains(String.format(Locale.ROOT, "x2=\"%.1f\" y2=\"%.1f\"",
        70 + plan.high(first.tokensPerSecondPerUser()) / maxX * 550,
        300 - plan.high(first.tokensPerSecondPerGpu()) / maxY * 280)), "first interval");
    assertTrue(html.contains("published run(s) of hopper serving"), "what the band rests on");
    assertTrue(html.contains(String.format(Locale.ROOT, "cx=\"%.1f\" cy=\"%.1f\"",
        70 + first.tokensPerSecondPerUser() / maxX * 550,
        300 - first.tokensPerSecondPerGpu() / maxY * 280)), "first point placed by its figures");
    assertTrue(html.contains(String.format(Locale.ROOT, "cy=\"%.1f\"",
        300 - last.tokensPerSecondPerGpu() / maxY * 280)));
    assertTrue(html.contains(String.format(Locale.ROOT, "<td>%.4g (%.4g&ndash;%.4g)</td>",
        last.tokensPerSecondPerGpu(), plan.low(last.tokensPerSecondPerGpu()),
        plan.high(last.tokensPerSecondPerGpu()))), "the front's table");
    assertTrue(html.contains("<td>best</td><td>" + result.plan().best().devices() + "</td>"));
  }

  @Test
  void aPlanWithoutAnswerSaysSo() {
    ServingPlans.Result none = SEVEN_B.arrivalRate(1e6).plan();
    String html = ServingReport.render(none, "too fast");
    assertTrue(html.contains("No aggregated configuration meets the SLO"), html);
    assertTrue(html.contains("No disaggregated configuration meets the SLO"), html);
    assertTrue(html.contains("slo-unreachable") || html.contains("critical"), html);
    assertFalse(html.contains("<td>best</td>"));
  }

  @Test
  void missingArgumentsAreNamed() {
    var e = assertThrows(IllegalArgumentException.class, () -> ServingReport.render(null, "x"));
    assertTrue(e.getMessage().contains("result"), e.getMessage());
  }
}
