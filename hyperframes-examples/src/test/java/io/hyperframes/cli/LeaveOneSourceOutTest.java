package io.hyperframes.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.hyperframes.json.Json;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The validation report's leave-one-source-out figures are what the command prints: every line
 * of {@code validate --leave-one-source-out} over the shared, the training and the
 * communication-bound cases is in
 * docs/validation.md, each source is labelled held out or not from the catalog's provenance, and
 * the out-of-sample mean is over the held-out sources only.
 */
class LeaveOneSourceOutTest {

  private static final Pattern SHIPPED = Pattern.compile("The same cases under the shipped"
      + " catalog \\(not refitted; what a user of the shipped catalog meets out of sample\\):"
      + " mean \\|error\\| ([0-9.]+) %");

  @TempDir Path dir;

  @Test
  void theReportPrintsTheCommandsOutputAndLabelsEverySource() throws IOException {
    ObjectNode all = Json.mapper().createObjectNode();
    ArrayNode cases = all.putArray("cases");
    for (Path p : List.of(Path.of("..", "hyperframes-core", "src", "test", "resources",
        "validation", "published-runs.json"), Path.of("..", "docs", "validation",
            "training-cases.json"), Path.of("..", "docs", "validation",
            "comm-bound-cases.json"))) {
      cases.addAll((ArrayNode) Json.parseObject("cases", Files.readString(p,
          StandardCharsets.UTF_8)).get("cases"));
    }
    Path file = Files.writeString(dir.resolve("all.json"), all.toString());
    CliTest.Result r = CliTest.run("validate", "--leave-one-source-out", "--cases",
        file.toString());
    assertEquals(0, r.status(), r.err());
    CliTest.assertPrints(Path.of("..", "docs", "validation.md"), r.out());
    // Every source row says whether it is held out, and the held-out mean names its sources.
    int rows = 0;
    List<String> held = new ArrayList<>();
    Matcher m = Pattern.compile("(?m)^\\| (\\w+) \\| \\d+ \\| [^|]+\\| [^|]+\\|"
        + " (yes|no: [^|]+) \\|$").matcher(r.out());
    while (m.find()) {
      rows++;
      if (m.group(2).equals("yes")) {
        held.add(m.group(1));
      }
    }
    assertEquals(12, rows, r.out());
    Matcher out = heldOut(r.out());
    assertEquals(String.join(", ", held), out.group(1));
    assertTrue(Double.parseDouble(out.group(2)) <= 8.0, "the held-out mean: " + out.group(2));
    // --format json gives the same figures as fields.
    CliTest.Result j = CliTest.run("validate", "--leave-one-source-out", "--cases",
        file.toString(), "--format", "json");
    assertEquals(0, j.status(), j.err());
    var doc = Json.parseObject("leave-one-source-out", j.out());
    List<String> heldJson = new ArrayList<>();
    doc.get("heldOutSources").forEach(n -> heldJson.add(n.asText()));
    assertEquals(held, heldJson);
    assertEquals(out.group(2), String.format(java.util.Locale.ROOT, "%.2f",
        100 * doc.get("heldOutMeanAbsError").asDouble()));
    // The held-out cases under the shipped catalog: the weighted mean of their in-sample rows.
    Matcher shipped = SHIPPED.matcher(r.out());
    assertTrue(shipped.find(), r.out());
    assertEquals(shipped.group(1), String.format(java.util.Locale.ROOT, "%.2f",
        100 * doc.get("heldOutShippedMeanAbsError").asDouble()));
    double weighted = 0;
    int heldCases = 0;
    for (var s : doc.get("sources")) {
      if (s.get("heldOut").asBoolean()) {
        weighted += s.get("inSampleMeanAbsError").asDouble() * s.get("cases").asInt();
        heldCases += s.get("cases").asInt();
      }
    }
    assertEquals(weighted / heldCases, doc.get("heldOutShippedMeanAbsError").asDouble(), 1e-12);
    assertEquals(rows, doc.get("sources").size());
    var pooled = doc.get("regimes").get(0);
    assertEquals("* all", pooled.get("regime").asText());
    assertEquals(pooled.get("covered").asDouble() / pooled.get("cases").asDouble(),
        pooled.get("coverage").asDouble(), 1e-12);
  }

  /**
   * Over every recorded training run (the pool above plus the context-parallel, MoE, pipeline,
   * Llama 3, DeepSeek-V3, Nemotron-4, BloombergGPT, MoE Parallel Folding, GLM-130B, MegaScale,
   * torchtitan DeepEP, both InternLM and the OLMo-core files), docs/validation.md prints the
   * command's lines, and the truly held-out sources are BLOOM, MT-NLG and those of the later
   * files, whose mean is above the issue's 8 % (recorded, not met).
   */
  /** The truly held-out sources over every recorded training run, as the report lists them. */
  private static final String HELD_OUT = "bloom, deepseek2024, dubey2024, glm2022, internlm2023,"
      + " liu2025, mbcard2026, mbcard8b2026, mbcards2026, mbskills2026, megascale2024, mlmoe2026,"
      + " mtnlg2022, nemotron2024, olmocore2024, trainy2025, wu2023, xtuner2025";

  /** The report's out-of-sample line: group 1 the held-out sources, group 2 their mean. */
  private static Matcher heldOut(String report) {
    Matcher out = Pattern.compile("Out of sample \\(sources no shipped constant or modelling"
        + " decision was fitted on: ([^)]*)\\): mean \\|error\\| ([0-9.]+) %").matcher(report);
    assertTrue(out.find(), report);
    return out;
  }

  /** Every recorded training run in one cases file (docs/validation.md's python line). */
  private Path everyRecordedRun() throws IOException {
    ObjectNode all = Json.mapper().createObjectNode();
    ArrayNode cases = all.putArray("cases");
    List<Path> files = new ArrayList<>(List.of(Path.of("..", "hyperframes-core", "src", "test",
        "resources", "validation", "published-runs.json")));
    for (String f : List.of("training", "comm-bound", "context-parallel", "moe", "pipeline",
        "llama3", "deepseek-v3", "nemotron", "bloomberggpt", "moe-folding", "glm", "megascale",
        "titan-deepep", "internlm", "internlm-node", "olmocore", "xtuner", "mbcard", "mlmoe",
        "trainy", "mbskills", "mbcards", "mbcard8b")) {
      files.add(Path.of("..", "docs", "validation", f + "-cases.json"));
    }
    for (Path p : files) {
      cases.addAll((ArrayNode) Json.parseObject("cases", Files.readString(p,
          StandardCharsets.UTF_8)).get("cases"));
    }
    return Files.writeString(dir.resolve("every.json"), all.toString());
  }

  /**
   * With the kernel priors kept (the default of {@code --leave-one-source-out} since 2026-12-08;
   * {@code --keep-priors} says it explicitly), docs/validation.md prints the command's lines; the
   * held-out sources are the same, and the option needs --leave-one-source-out.
   */
  @Test
  void withThePriorsKeptTheReportPrintsTheCommandsOutput() throws IOException {
    Path file = everyRecordedRun();
    Path written = dir.resolve("intervals.json");
    CliTest.Result r = CliTest.run("validate", "--leave-one-source-out", "--cases",
        file.toString(), "--write-intervals", written.toString());
    assertEquals(0, r.status(), r.err());
    // The shipped catalog's step-time intervals are what the command writes from the residuals
    // of every recorded training run with the priors kept (since 2026-12-07, 54th session; its
    // serving intervals come from validate --serving-intervals), and the file it writes loads as
    // a catalog override.
    assertEquals(Json.parseObject("intervals", Files.readString(written,
        StandardCharsets.UTF_8)).get("intervals"), shippedIntervals(false),
        "hardware.json intervals differ from validate --leave-one-source-out --write-intervals");
    CliTest.Result loaded = CliTest.run("estimate", "--request",
        "../examples/llama2-70b-h100.json", "--catalog", written.toString());
    assertEquals(0, loaded.status(), loaded.err());
    CliTest.assertPrints(Path.of("..", "docs", "validation.md"), r.out());
    assertEquals(HELD_OUT, heldOut(r.out()).group(1));
    // torchtitan's Blackwell rows, 42 % off with Hopper's carried half dimensions, are within 12 %
    // with Blackwell's refitted on the other Blackwell sources (docs/validation.md says so; within
    // 5 % before the GB200 rows of Megatron-Bridge's model cards joined, 2026-12-08).
    Matcher titan = Pattern.compile("\\| titandeepep2025 \\| 6 \\| [0-9.]+ % / [0-9.]+ % \\|"
        + " ([0-9.]+) % / ([0-9.]+) % \\|").matcher(r.out());
    assertTrue(titan.find(), r.out());
    assertTrue(Double.parseDouble(titan.group(2)) < 12.0, titan.group());
    // The held-out MoE rows (issue 32), with each source's constants refitted from the shipped
    // kernel entries without it, as docs/validation.md quotes them.
    assertEquals(13.24, heldOutMoe(r.out())[1], 0.005);
    assertTrue(Files.readString(Path.of("..", "docs", "validation.md"), StandardCharsets.UTF_8)
        .contains("13.24 % refitted from the shipped\nkernel entries without each source"));
    for (String given : List.of("--keep-priors", "--no-keep-priors")) {
      CliTest.Result refused = CliTest.run("validate", given, "--cases", file.toString());
      assertEquals(2, refused.status());
      assertTrue(refused.err().contains(given + ": needs --leave-one-source-out"),
          refused.err());
    }
  }

  /**
   * The held-out MoE rows (issue 32): the table's means of liu2025, deepseek2024, xtuner2025,
   * mbcard2026, mlmoe2026, mbskills2026 and mbcards2026 weighted by their cases, under the
   * shipped catalog (element 0) and refitted without each source (element 1), in per cent.
   */
  private static double[] heldOutMoe(String report) {
    double shippedSum = 0;
    double sum = 0;
    int n = 0;
    for (String source : List.of("liu2025", "deepseek2024", "xtuner2025", "mbcard2026",
        "mlmoe2026", "mbskills2026", "mbcards2026")) {
      Matcher row = Pattern.compile("\\| " + source + " \\| ([0-9]+) \\| ([0-9.]+) % / [0-9.]+ %"
          + " \\| ([0-9.]+) % /").matcher(report);
      assertTrue(row.find(), source);
      int rows = Integer.parseInt(row.group(1));
      shippedSum += rows * Double.parseDouble(row.group(2));
      sum += rows * Double.parseDouble(row.group(3));
      n += rows;
    }
    assertEquals(52, n);
    return new double[] {shippedSum / n, sum / n};
  }

  @Test
  void overEverythingRecordedTheReportPrintsTheCommandsOutput() throws IOException {
    Path file = everyRecordedRun();
    // The priors-free refit (--no-keep-priors; the default until 2026-12-08).
    CliTest.Result r = CliTest.run("validate", "--leave-one-source-out", "--no-keep-priors",
        "--cases", file.toString());
    assertEquals(0, r.status(), r.err());
    CliTest.assertPrints(Path.of("..", "docs", "validation.md"), r.out());
    Matcher out = heldOut(r.out());
    // Megatron-Bridge 26.02's Qwen3-30B-A3B row, recorded 2026-12-04 (22nd session) as a third
    // held-out source, was computed under the token-permutation change of the same session before
    // it was committed, so it is looked at (hardware.json decisions).
    // NeMo Automodel's two single-node MoE rows, recorded 2026-12-04 (23rd session) before any
    // prediction was computed, joined them; the expert data-parallel reduction of the 24th
    // session computed them before and after, so they are looked at too.
    // The pre-training runs of Llama 3 405B, DeepSeek-V3, Nemotron-4 and BloombergGPT and the
    // MoE Parallel Folding paper's Mixtral rows, recorded 2026-12-07 (48th session) before any
    // prediction, joined them; GLM-130B, MegaScale's Megatron-LM baseline and torchtitan's DeepEP
    // benchmark, recorded 2026-12-07 (49th session) the same way, joined them too, and so did
    // InternLM's scaling test (50th session), both its tables, and OLMo-core's H100 rows (51st).
    // torchtitan's DeepEP rows left on 2026-12-07 (53rd session): they prompted the Blackwell
    // half dimensions (hardware.json decisions).
    // xtuner's Qwen3-235B benchmark on H800, Megatron-Bridge's Qwen3-30B-A3B verification card,
    // Megatron-LM's MoE recipe table and Trainy's H200 runs joined them on 2026-12-07 (54th
    // session), recorded before any prediction, and Megatron-Bridge's expert-overlap A/B pairs
    // on 16 H100, the forced-balance rows of its DeepSeek-V3, Qwen3-235B-A22B and gpt-oss-120b
    // model cards and its Qwen3-8B card's dense row on 2026-12-08 (55th session).
    assertEquals(HELD_OUT, out.group(1));
    assertTrue(r.out().contains("| titandeepep2025 | 6 | 42.0 % / 46.0 % | 12.8 % / 16.0 % | no:"
        + " decision 2026-12-07: Blackwell kernels carry Hopper's fitted matmul half dimensions"),
        r.out());
    double mean = Double.parseDouble(out.group(2));
    assertTrue(mean > 8.0 && mean < 30.0, "the held-out mean: " + mean);
    // Under the shipped catalog, the catalog a user plans with, the held-out cases are not met
    // either (docs/validation.md quotes the figure).
    Matcher shipped = SHIPPED.matcher(r.out());
    assertTrue(shipped.find(), r.out());
    assertTrue(Double.parseDouble(shipped.group(1)) > 8.0, "shipped: " + shipped.group(1));
    // The held-out MoE rows (issue 32) under the shipped catalog and refitted without each
    // source from the accelerators' own constants, as docs/validation.md quotes them.
    double[] moe = heldOutMoe(r.out());
    assertEquals(14.69, moe[0], 0.02);
    assertEquals(12.60, moe[1], 0.005);
    assertTrue(Files.readString(Path.of("..", "docs", "validation.md"), StandardCharsets.UTF_8)
        .contains("the 52 held-out MoE rows are 14.69 % off with the shipped\nconstants and"
            + " 12.60 %\nrefitted without each source"));
  }

  /** The shipped catalog's intervals of regime serving, or of every other regime. */
  static ArrayNode shippedIntervals(boolean serving) throws IOException {
    try (var in = LeaveOneSourceOutTest.class.getResourceAsStream(
        "/io/hyperframes/catalog/hardware.json")) {
      ArrayNode out = Json.mapper().createArrayNode();
      Json.parseObject("hardware.json", new String(in.readAllBytes(), StandardCharsets.UTF_8))
          .get("intervals").forEach(e -> {
            if (e.get("regime").asText().equals("serving") == serving) {
              out.add(e);
            }
          });
      return out;
    }
  }
}
