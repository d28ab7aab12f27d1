package io.hyperframes.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.hyperframes.json.Json;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;
import org.junit.jupiter.api.Test;

/**
 * The worked plans of docs/planning.md (and the README's headline plan) quote what the plan
 * commands print: step time, MFU, days and their 90 % intervals, which move whenever the catalog's
 * constants or intervals do.
 */
class PlanningDocFiguresTest {

  private static JsonNode plan(String request) {
    CliTest.Result r = CliTest.run("plan", "--request",
        Path.of("..", "examples", request).toString(), "--format", "json", "--no-progress");
    assertEquals(0, r.status(), r.err());
    return Json.parseObject(request, r.out());
  }

  private static String doc(String... path) throws IOException {
    return Files.readString(Path.of("..", path), StandardCharsets.UTF_8);
  }

  private static String f(String format, Object... args) {
    return String.format(Locale.ROOT, format, args);
  }

  @Test
  void theWorkedPlansQuoteWhatThePlannerPrints() throws IOException {
    String planning = doc("docs", "planning.md");
    JsonNode tenB = plan("10b-on-2t.json");
    JsonNode t = tenB.get("time");
    String days = f("28.0 days (%.1f–%.1f)", tenB.get("trainingDaysLow").asDouble(),
        tenB.get("trainingDaysHigh").asDouble());
    assertEquals(28.0, tenB.get("trainingDays").asDouble(), 0.05);
    assertTrue(planning.contains(f("%.2f s per step (90 %% interval %.2f–%.2f s)",
        t.get("stepSeconds").asDouble(), t.get("stepSecondsLow").asDouble(),
        t.get("stepSecondsHigh").asDouble())), "10B step interval");
    assertTrue(planning.contains("**" + days), "10B days: " + days);
    assertTrue(planning.contains(f("(%.3f–%.3f × the step", tenB.get("interval").get("low")
        .asDouble(), tenB.get("interval").get("high").asDouble())), "10B band");
    assertTrue(planning.contains(f("here about %.1f days", tenB.get("trainingDaysHigh")
        .asDouble())), "10B upper end");
    assertTrue(doc("README.md").contains(f("28.0 days (90 %% interval %.1f–%.1f)",
        tenB.get("trainingDaysLow").asDouble(), tenB.get("trainingDaysHigh").asDouble())),
        "README headline");

    JsonNode fineTune = plan("70b-finetune.json");
    assertTrue(planning.contains(f("%.2f s per step, MFU %.1f %%", fineTune.get("time")
        .get("stepSeconds").asDouble(), 100 * fineTune.get("mfu").asDouble())), "70B step");
    assertTrue(planning.contains(f("**%.2f days (%.2f–%.2f)", fineTune.get("trainingDays")
        .asDouble(), fineTune.get("trainingDaysLow").asDouble(), fineTune.get(
            "trainingDaysHigh").asDouble())), "70B days");

    JsonNode cost = plan("13b-cost.json");
    assertTrue(planning.contains(f("%.1f days (%.1f–%.1f), USD", cost.get("trainingDays")
        .asDouble(), cost.get("trainingDaysLow").asDouble(), cost.get("trainingDaysHigh")
            .asDouble())), "13B days");

    JsonNode llama65 = plan("llama65b-2048.json");
    assertTrue(planning.contains(f("%.1f days (90 %% interval %.1f–%.1f)", llama65.get(
        "trainingDays").asDouble(), llama65.get("trainingDaysLow").asDouble(), llama65.get(
            "trainingDaysHigh").asDouble())), "65B days");
  }
}
