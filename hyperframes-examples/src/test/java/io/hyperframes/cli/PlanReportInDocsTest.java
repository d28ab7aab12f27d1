package io.hyperframes.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/**
 * docs/planning.md shows the HTML report of {@code plan --request examples/10b-on-2t.json
 * --format html} as docs/plan-report.html (and its screenshot, docs/plan-report.png, which
 * {@code scripts/render-report.sh} renders from it): the committed report is what the command
 * prints now, but for the search's wall time.
 */
class PlanReportInDocsTest {

  private static String withoutTiming(String html) {
    return html.replaceAll("candidates in [0-9.]+ s\\.", "candidates in _ s.");
  }

  @Test
  void theCommittedReportIsWhatThePlanPrints() throws Exception {
    CliTest.Result r = CliTest.run("plan", "--request",
        Path.of("..", "examples", "10b-on-2t.json").toString(), "--format", "html",
        "--no-progress");
    assertEquals(0, r.status(), r.err());
    String committed = Files.readString(Path.of("..", "docs", "plan-report.html"),
        StandardCharsets.UTF_8);
    assertEquals(withoutTiming(committed), withoutTiming(r.out()),
        "docs/plan-report.html is stale: run scripts/render-report.sh examples/10b-on-2t.json"
            + " docs/plan-report.html docs/plan-report.png");
  }
}
