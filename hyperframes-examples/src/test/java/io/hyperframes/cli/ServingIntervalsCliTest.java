package io.hyperframes.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.hyperframes.json.Json;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The serving bands of the shipped catalog are what {@code validate --serving-intervals} writes
 * from the published at-capacity check runs, its coverage table is the one in
 * docs/validation.md, and its JSON rows agree with the residuals they summarise.
 */
class ServingIntervalsCliTest {

  @TempDir Path dir;

  private static final String[] CASES = {"--cases", "../docs/validation/capacity-cases.json",
      "--cases", "../docs/validation/capacity-checks-devguide.json",
      "--cases", "../docs/validation/capacity-checks-fp4.json"};

  @Test
  void theShippedServingBandsAreWhatTheCommandWrites() throws IOException {
    Path written = dir.resolve("serving.json");
    CliTest.Result r = CliTest.run(args("--write-intervals", written.toString()));
    assertEquals(0, r.status(), r.err());
    assertEquals(Json.parseObject("serving", Files.readString(written, StandardCharsets.UTF_8))
        .get("intervals"), LeaveOneSourceOutTest.shippedIntervals(true),
        "hardware.json serving intervals differ from validate --serving-intervals");
    CliTest.assertPrints(Path.of("..", "docs", "validation.md"), r.out());
    assertTrue(r.out().contains("| hopper serving | 246 |"), r.out());
    // The written file is a catalog override, as docs/inference.md says ("then --catalog FILE").
    CliTest.Result loaded = CliTest.run("estimate", "--request",
        "../examples/serve-llama3-70b-capacity.json", "--catalog", written.toString());
    assertEquals(0, loaded.status(), loaded.err());
  }

  @Test
  void theJsonRowsSummariseTheResiduals() {
    CliTest.Result r = CliTest.run(args("--format", "json"));
    assertEquals(0, r.status(), r.err());
    JsonNode doc = Json.parseObject("serving", r.out());
    Map<String, Integer> counts = new HashMap<>();
    for (JsonNode e : doc.get("residuals")) {
      assertTrue(e.get("factor").asDouble() > 0, e.toString());
      counts.merge(e.get("regime").asText(), 1, Integer::sum);
      counts.merge("* all", 1, Integer::sum);
    }
    for (JsonNode row : doc.get("regimes")) {
      String regime = row.get("regime").asText();
      assertEquals(counts.get(regime), row.get("cases").asInt(), regime);
      assertTrue(row.get("p5").asDouble() <= row.get("p50").asDouble()
          && row.get("p50").asDouble() <= row.get("p95").asDouble(), row.toString());
      assertEquals((double) row.get("covered").asInt() / row.get("cases").asInt(),
          row.get("coverage").asDouble(), 1e-12);
    }
    assertEquals(246, counts.get("* all"));
  }

  @Test
  void intervalsNeedAModeAndOneModeOnly() {
    CliTest.Result none = CliTest.run("validate", "--cases",
        "../docs/validation/capacity-checks-fp4.json", "--write-intervals", "x.json");
    assertEquals(2, none.status(), none.err());
    assertTrue(none.err().contains("--write-intervals: needs --leave-one-source-out or"
        + " --serving-intervals"), none.err());
    CliTest.Result both = CliTest.run(args("--leave-one-source-out"));
    assertEquals(2, both.status(), both.err());
    assertTrue(both.err().contains("--serving-intervals: give it or --leave-one-source-out,"
        + " not both"), both.err());
    CliTest.Result training = CliTest.run("validate", "--serving-intervals", "--cases",
        "../docs/validation/training-cases.json");
    assertEquals(2, training.status(), training.err());
    assertTrue(training.err().contains("cases: no case with role check gives a serving"
        + " throughput"), training.err());
  }

  @Test
  void aSourceInSampleGivesNoResidualAndTheReportSaysWhy() {
    // Every source of the fixed-batch serving runs fitted a shipped constant or was looked at by
    // a recorded decision (hardware.json): alone they give no band.
    CliTest.Result alone = CliTest.run("validate", "--serving-intervals", "--cases",
        "../docs/validation/serving-cases.json");
    assertEquals(2, alone.status(), alone.err());
    assertTrue(alone.err().contains("from a source that is out of sample (in sample:"
        + " lmdeploy01, nim18, trtllm05, trtllm07a, trtllm09)"), alone.err());
    // Beside the at-capacity runs they change nothing, and the report names them with why.
    CliTest.Result shipped = CliTest.run(args("--format", "json"));
    CliTest.Result mixed = CliTest.run(args("--format", "json", "--cases",
        "../docs/validation/serving-cases.json"));
    assertEquals(0, mixed.status(), mixed.err());
    JsonNode a = Json.parseObject("shipped", shipped.out());
    JsonNode b = Json.parseObject("mixed", mixed.out());
    assertEquals(a.get("regimes"), b.get("regimes"));
    // The developer guide's rows were looked at by the decision of 2026-12-06 (Blackwell FP8 and
    // NVFP4 serving on Hopper FP8's serving constants): in sample, named, no residual.
    assertEquals(1, a.get("inSample").size());
    assertEquals("trtllmdev", a.get("inSample").get(0).get("source").asText());
    assertTrue(a.get("inSample").get(0).get("because").toString()
        .contains("decision 2026-12-06"), a.get("inSample").toString());
    Map<String, JsonNode> left = new HashMap<>();
    b.get("inSample").forEach(n -> left.put(n.get("source").asText(), n));
    assertEquals(java.util.Set.of("lmdeploy01", "nim18", "trtllm05", "trtllm07a", "trtllm09",
        "trtllmdev"), left.keySet());
    assertTrue(left.get("trtllm09").get("because").toString()
        .contains("servingLayerOverheadUs"), left.get("trtllm09").toString());
    assertTrue(left.get("trtllm05").get("because").toString().contains("decision 2026-12-02"),
        left.get("trtllm05").toString());
    CliTest.Result table = CliTest.run(args("--cases", "../docs/validation/serving-cases.json"));
    assertTrue(table.out().contains("Left out, in sample: trtllm09 ("), table.out());
  }

  private static String[] args(String... more) {
    String[] a = new String[2 + CASES.length + more.length];
    a[0] = "validate";
    a[1] = "--serving-intervals";
    System.arraycopy(CASES, 0, a, 2, CASES.length);
    System.arraycopy(more, 0, a, 2 + CASES.length, more.length);
    return a;
  }
}
