package io.hyperframes.report;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

class ScheduleReportTest {

  @Test
  void bothChartsCarryOneLinePerPolicyWithinTheirAxes() {
    double[][] a = {{0, 100, 200, 300}, {8, 16, 16, 4}};
    double[][] b = {{0, 100, 200, 300}, {4, 4, 8, 0}};
    ScheduleReport.Series s1 = new ScheduleReport.Series("best<fit>", a,
        new double[] {10, 100, 1000, 5000}, Map.of("mean JCT (s)", "1527.5"));
    ScheduleReport.Series s2 = new ScheduleReport.Series("random", b,
        new double[] {20, 200}, Map.of("mean JCT (s)", "110.0"));
    String html = ScheduleReport.render("t", "two & policies", 16, List.of(s1, s2));
    assertEquals(2 * 2, html.split("<polyline ", -1).length - 1, "two charts, two lines each");
    assertTrue(html.contains("best&lt;fit&gt;") && !html.contains("best<fit>"), "escaped");
    assertTrue(html.contains("two &amp; policies"));
    assertTrue(html.contains("1527.5") && html.contains("110.0"));
    assertFalse(html.contains("<script") || html.contains("http://") && !html.contains(
        "xmlns=\"http://www.w3.org/2000/svg\""), "self-contained");
    // Every plotted point lies inside the 640 x 300 frame; 100 % of capacity is the top.
    Matcher m = Pattern.compile("points=\"([^\"]*)\"").matcher(html);
    while (m.find()) {
      for (String p : m.group(1).trim().split(" ")) {
        String[] xy = p.split(",");
        double x = Double.parseDouble(xy[0]);
        double y = Double.parseDouble(xy[1]);
        assertTrue(x >= 60 && x <= 620 && y >= 20 && y <= 260, p);
      }
    }
    assertTrue(html.contains(",20.0"), "16 of 16 GPUs is drawn at the top");
    assertThrows(IllegalArgumentException.class, () -> ScheduleReport.render("t", "d", 0,
        List.of(s1)));
    assertThrows(IllegalArgumentException.class, () -> ScheduleReport.render("t", "d", 16,
        List.of()));
  }
}
