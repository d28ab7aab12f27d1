package io.hyperframes.report;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.hyperframes.runtime.BenchmarkRecord;
import io.hyperframes.runtime.Comparison;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

class ComparisonReportTest {

  private static BenchmarkRecord record(double scale, String batch) {
    double[] steps = new double[30];
    double[] tput = new double[30];
    for (int i = 0; i < steps.length; i++) {
      steps[i] = scale * (0.040 + 0.0001 * (i % 7));
      tput[i] = 256 / steps[i];
    }
    return new BenchmarkRecord(BenchmarkRecord.SCHEMA, Map.of("batch", batch, "cpu", "<x&y>"),
        Map.of("train.stepSeconds", new BenchmarkRecord.Metric("s", false, steps),
            "train.samplesPerSecond", new BenchmarkRecord.Metric("samples/s", true, tput)));
  }

  @Test
  void everyMetricIsChartedAndTheVerdictAndConditionsAreShown() {
    BenchmarkRecord a = record(1.0, "256");
    BenchmarkRecord b = record(1.10, "128");
    Comparison c = Comparison.of(a, b, 0.05, 0.01);
    String html = ComparisonReport.render("t", a, b, c, List.of());
    assertTrue(html.contains("<span class=\"bad\">Regression</span>"), html);
    Matcher svg = Pattern.compile("<svg ").matcher(html);
    int charts = 0;
    while (svg.find()) {
      charts++;
    }
    assertEquals(2, charts, "one chart per metric");
    // Each chart carries every sample of both records.
    assertEquals(2 * 2 * 30, html.split("<circle ", -1).length - 1);
    assertTrue(html.contains("batch: 256 → 128") || html.contains("batch"), html);
    assertTrue(html.contains("&lt;x&amp;y&gt;") && !html.contains("<x&y>"), "escaped");
    assertFalse(html.contains("<script"));
    String same = ComparisonReport.render("t", a, a, Comparison.of(a, a, 0.05, 0.01),
        List.of());
    assertTrue(same.contains("No regression") && same.contains("same recorded conditions"));
    assertThrows(IllegalArgumentException.class,
        () -> ComparisonReport.render(null, a, b, c, List.of()));
  }
}
