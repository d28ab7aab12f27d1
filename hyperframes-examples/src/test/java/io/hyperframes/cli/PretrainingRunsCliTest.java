package io.hyperframes.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.hyperframes.json.Json;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The pre-training runs of Llama 3 405B, DeepSeek-V3, Nemotron-4, BloombergGPT, GLM-130B and
 * MegaScale's baseline, InternLM's scaling test and the held-out MoE benchmarks, recorded
 * 2026-12-07 before any prediction (docs/validation.md, "Production pre-training runs, held
 * out", and the sections after it): the report prints what
 * {@code validate} says of them, and what it says of their estimates holds. Not met; the signs
 * record which way each is wrong, so that a change that turns one is seen.
 */
class PretrainingRunsCliTest {

  private static final double GIB = 1024.0 * 1024 * 1024;

  @TempDir Path dir;

  @Test
  void llama3RowsAndTheirEstimates() throws IOException {
    Map<String, Double> errors = CliTest.stepErrorsInDocs("llama3-cases.json", 3);
    String eight = "dubey2024-llama3-405b-8192h100-tp8pp16dp64-8k";
    String sixteen = "dubey2024-llama3-405b-16384h100-tp8pp16dp128-8k";
    String context = "dubey2024-llama3-405b-16384h100-tp8cp16pp16dp8-128k";
    assertTrue(errors.get(eight) > 0 && errors.get(sixteen) > errors.get(eight), errors.toString());
    assertTrue(errors.get(context) < 0 && errors.get(context) > -15.0, errors.toString());

    // The 8K rows: over memory (the first rank's activations above 60 GiB) for every open
    // micro-batch and virtual-stage count, so the smallest footprint, one virtual stage.
    JsonNode e8 = estimate("llama3-cases.json", eight);
    JsonNode e16 = estimate("llama3-cases.json", sixteen);
    for (JsonNode e : new JsonNode[] {e8, e16}) {
      assertFalse(e.get("feasible").asBoolean(), e.toString());
      assertTrue(e.get("memory").get("activationsBytes").asDouble() > 60 * GIB, e.toString());
      assertEquals(1, e.get("layout").get("virtualStages").asInt());
      assertEquals("none", e.get("layout").get("recompute").asText());
    }
    JsonNode t8 = e8.get("time");
    JsonNode t16 = e16.get("time");
    assertEquals(t8.get("bubbleSeconds").asDouble(), t16.get("bubbleSeconds").asDouble(), 1e-9,
        "15 micro-batches' time in both rows");
    assertTrue(t16.get("bubbleSeconds").asDouble() > t16.get("computeSeconds").asDouble(),
        t16.toString());
    assertTrue(t8.get("bubbleSeconds").asDouble() < t8.get("computeSeconds").asDouble(),
        t8.toString());

    JsonNode c = estimate("llama3-cases.json", context);
    assertTrue(c.get("feasible").asBoolean(), c.get("reasons").toString());
    assertEquals(8, c.get("layout").get("virtualStages").asInt());
    assertEquals("full", c.get("layout").get("recompute").asText());
  }

  @Test
  void deepSeekV3RowAndItsEstimate() throws IOException {
    String out = CliTest.validatedInDocs("deepseek-v3-cases.json");
    Map<String, Double> errors = CliTest.errorsById(out, "tokensPerSecondPerDevice");
    assertEquals(1, errors.size(), out);
    double error = errors.get("deepseek2024-v3-2048h800-pp16-ep64-fp8");
    assertTrue(error < -15.0 && error > -35.0, error + " %: too slow");

    JsonNode e = estimate("deepseek-v3-cases.json", "deepseek2024-v3-2048h800-pp16-ep64-fp8");
    assertFalse(e.get("feasible").asBoolean());
    assertTrue(e.get("memory").get("activationsBytes").asDouble() > 100 * GIB);
    JsonNode t = e.get("time");
    assertTrue(t.get("computeSeconds").asDouble() > 0.75 * t.get("stepSeconds").asDouble(),
        t.toString());
    double a2a = t.get("exposedCommByKind").get("allToAllSeconds").asDouble();
    assertTrue(a2a > 1.5 && a2a < 3.0, t.toString());
  }

  @Test
  void nemotronAndBloombergGptRows() throws IOException {
    Map<String, Double> errors = CliTest.stepErrorsInDocs("nemotron-cases.json", 6);
    double previous = 0;
    for (Map.Entry<String, Double> row : errors.entrySet()) {
      String id = row.getKey();
      double error = row.getValue();
      if (id.startsWith("nemotron2024-340b-")) {
        assertTrue(error < 0 && error > -10.0, id + ": " + error + " %");
      } else {
        // 15B: too fast, and further off the more data parallelism (the rows in DP order).
        assertTrue(id.startsWith("nemotron2024-15b-"), id);
        assertTrue(error < previous && error > -30.0, id + ": " + error + " %");
        previous = error;
      }
    }
    JsonNode n15 = estimate("nemotron-cases.json", "nemotron2024-15b-2304h100-tp8dp288");
    assertEquals(0.0, n15.get("time").get("exposedCommByKind").get("dataParallelSeconds")
        .asDouble(), 1e-12, "the optimizer's collectives hidden at data parallelism 288");

    String out = CliTest.validatedInDocs("bloomberggpt-cases.json");
    String id = "wu2023-bloomberggpt-50b-512a100-zero3-shard128";
    double step = CliTest.stepErrors(out).get(id);
    assertTrue(step < -40.0 && step > -55.0, step + " %: too fast");
    double parameters = CliTest.errorsById(out, "parameters").get(id);
    assertTrue(Math.abs(parameters) < 0.1, parameters + " %");
    JsonNode t = estimate("bloomberggpt-cases.json", id).get("time");
    assertTrue(t.get("exposedCommByKind").get("dataParallelSeconds").asDouble()
        < 0.01 * t.get("stepSeconds").asDouble(), t.toString());
  }

  /**
   * GLM-130B and MegaScale's Megatron-LM baseline (docs/validation.md, "Three more held-out
   * sources"): MegaScale's eight rows within ±15 %, the estimate too fast by more at larger data
   * parallelism within each batch; GLM-130B too fast by a fifth.
   */
  @Test
  void glmAndMegaScaleRows() throws IOException {
    Map<String, Double> mega = CliTest.stepErrorsInDocs("megascale-cases.json", 8);
    double sum = 0;
    for (double e : mega.values()) {
      assertTrue(Math.abs(e) < 15.0, mega.toString());
      sum += Math.abs(e);
    }
    assertEquals(7.13, sum / 8, 0.005, mega.toString());
    for (String batch : new String[] {"gbs768", "gbs6144"}) {
      List<Double> group = new ArrayList<>();
      mega.forEach((id, e) -> {
        if (id.endsWith("-" + batch)) {
          group.add(e);
        }
      });
      assertEquals(4, group.size(), batch);
      assertTrue(group.get(3) < group.get(0) && group.get(3) <= Collections.min(group),
          batch + ": the most data parallelism is the most too fast, " + group);
    }
    Map<String, Double> glm = CliTest.stepErrorsInDocs("glm-cases.json", 2);
    glm.forEach((id, e) -> assertTrue(e < -18.0 && e > -26.0, id + ": " + e + " %"));
  }

  /**
   * torchtitan's DeepEP benchmark (docs/validation.md, "Three more held-out sources"; held out
   * until the Blackwell half dimensions of 2026-12-07): every row's tokens a GPU predicted 34-48 %
   * too high (55-72 % before), nearly flat over 8 to 128 GPUs as the run's are; the
   * estimate of the 8-GPU row spends its exchange in all-to-all and hides the FSDP collectives.
   */
  @Test
  void torchtitanDeepEpRows() throws IOException {
    String out = CliTest.validatedInDocs("titan-deepep-cases.json");
    Map<String, Double> errors = CliTest.errorsById(out, "tokensPerSecondPerDevice");
    assertEquals(6, errors.size(), out);
    errors.forEach((id, e) -> assertTrue(e > 34.0 && e < 48.0, id + ": " + e + " %"));
    JsonNode t = estimate("titan-deepep-cases.json",
        "titandeepep2025-qwen3-30b-a3b-8b200-fsdp-ep8-lbs8").get("time");
    assertTrue(t.get("exposedCommByKind").get("allToAllSeconds").asDouble() > 0.1
        * t.get("stepSeconds").asDouble(), t.toString());
    assertTrue(t.get("exposedCommByKind").get("dataParallelSeconds").asDouble() < 0.01
        * t.get("stepSeconds").asDouble(), t.toString());
  }

  /**
   * InternLM's 7B scaling test on 8 to 1024 A100 over 4 x 100 Gb/s RoCE a node (docs/validation.md,
   * "A communication-bound held-out source"): the seven rows within ±15 % are all on 8 to 64
   * GPUs, every row from 128 GPUs has 15 % too many tokens a GPU or more, and the estimate is
   * flat over data parallelism where the run's step time grows by about 3 ms a rank of the ZeRO
   * group (published step times derived as 16 384 tokens a GPU over the tokens a GPU a second).
   */
  @Test
  void internLmRows() throws IOException {
    String out = CliTest.validatedInDocs("internlm-cases.json");
    Map<String, Double> errors = CliTest.errorsById(out, "tokensPerSecondPerDevice");
    assertEquals(16, errors.size(), out);
    int within = 0;
    double sum = 0;
    for (Map.Entry<String, Double> e : errors.entrySet()) {
      int gpus = Integer.parseInt(
          e.getKey().replaceAll("^internlm2023-7b-(\\d+)a100-.*$", "$1"));
      sum += Math.abs(e.getValue());
      assertTrue(e.getValue() > 0, e.toString());
      if (Math.abs(e.getValue()) < 15.0) {
        within++;
        assertTrue(gpus <= 64, e.toString());
      }
      if (gpus >= 128) {
        assertTrue(e.getValue() > 15.0 && e.getValue() < 90.0, e.toString());
      }
    }
    assertEquals(7, within, errors.toString());
    assertEquals(25.21, sum / 16, 0.005, errors.toString());

    String small = "internlm2023-7b-16a100-tp1-zero1all";
    String large = "internlm2023-7b-1024a100-tp1-zero1all";
    JsonNode t16 = estimate("internlm-cases.json", small).get("time");
    JsonNode t1024 = estimate("internlm-cases.json", large).get("time");
    assertEquals(3.88, t16.get("stepSeconds").asDouble(), 0.005, t16.toString());
    assertEquals(3.90, t1024.get("stepSeconds").asDouble(), 0.005, t1024.toString());
    assertEquals(0.32, t16.get("exposedCommByKind").get("dataParallelSeconds").asDouble(), 0.005);
    assertEquals(0.35, t1024.get("exposedCommByKind").get("dataParallelSeconds").asDouble(),
        0.005);

    // The published side: 16 384 tokens a GPU a step over the expected tokens a GPU a second.
    Map<Integer, Double> step = new java.util.TreeMap<>();
    for (JsonNode c : Json.parseObject("internlm", Files.readString(Path.of("..", "docs",
        "validation", "internlm-cases.json"), StandardCharsets.UTF_8)).get("cases")) {
      JsonNode l = c.get("request").get("layout");
      if (l.get("tp").asInt() == 1) {
        assertEquals(16384.0, 2048.0 * l.get("microBatch").asInt() * 4, 1e-9);
        step.put(c.get("request").get("cluster").get("devices").asInt(),
            16384.0 / c.get("expected").get("tokensPerSecondPerDevice").asDouble());
      }
    }
    assertEquals(4.26, step.get(16), 0.005);
    assertEquals(7.21, step.get(1024), 0.005);
    // The run's tokens a GPU fall by 41 % from 16 to 1024 GPUs; the estimate's step is 46 % short.
    assertEquals(0.41, 1 - step.get(16) / step.get(1024), 0.005);
    assertEquals(0.46, 1 - t1024.get("stepSeconds").asDouble() / step.get(1024), 0.005);
    double lo = Double.MAX_VALUE;
    double hi = 0;
    for (int gpus = 32; gpus <= 1024; gpus *= 2) {
      double perRank = (step.get(gpus) - step.get(16)) / gpus;
      lo = Math.min(lo, perRank);
      hi = Math.max(hi, perRank);
    }
    assertEquals(2.5e-3, lo, 0.05e-3);
    assertEquals(3.3e-3, hi, 0.05e-3);
    assertTrue(Files.readString(Path.of("..", "docs", "validation.md"), StandardCharsets.UTF_8)
        .contains("between 2.5 and 3.3 ms a\n  rank"));
  }

  /**
   * InternLM's node-sharded rows (docs/validation.md, "The node-sharded rows"): every row too
   * fast by 10-20 %, nine within ±15 %, the 1024-GPU row the most too fast at each tp; against
   * the rows sharded over every rank, the run loses 37 % of its throughput at 1024 GPUs and the
   * estimate 3 %.
   */
  @Test
  void internLmNodeShardedRows() throws IOException {
    String out = CliTest.validatedInDocs("internlm-node-cases.json");
    Map<String, Double> errors = CliTest.errorsById(out, "tokensPerSecondPerDevice");
    assertEquals(16, errors.size(), out);
    int within = 0;
    double sum = 0;
    for (double e : errors.values()) {
      assertTrue(e > 10.0 && e < 20.0, errors.toString());
      within += e < 15.0 ? 1 : 0;
      sum += e;
    }
    assertEquals(9, within, errors.toString());
    assertEquals(14.55, sum / 16, 0.01, "the mean of the printed, rounded errors");
    for (String tp : new String[] {"tp1", "tp2"}) {
      double largest = errors.get("internlm2023-7b-1024a100-" + tp + "-zero1node");
      errors.forEach((id, e) -> assertTrue(!id.contains(tp) || e <= largest, id));
    }
    Map<String, Double> predicted = predicted(out);
    Map<String, Double> all = predicted(CliTest.validatedInDocs("internlm-cases.json"));
    double node1024 = predicted.get("internlm2023-7b-1024a100-tp1-zero1node");
    assertEquals(4525.6, predicted.get("internlm2023-7b-8a100-tp1-zero1node"), 0.05);
    assertEquals(4324.5, node1024, 0.05);
    assertEquals(4201.8, all.get("internlm2023-7b-1024a100-tp1-zero1all"), 0.05);
    assertEquals(0.04, 1 - node1024 / 4525.6, 0.005);
    assertEquals(0.03, 1 - 4201.8 / node1024, 0.005);
    // The published side, as recorded: 3625 and 2271 tokens a GPU at 1024 GPUs; 4078 on 8.
    assertEquals(0.37, 1 - 2271.0 / 3625.0, 0.005);
    assertEquals(0.11, 1 - 3625.0 / 4078.0, 0.005);
  }

  /** The predicted column of a {@code validate --format markdown} report, by case id. */
  private static Map<String, Double> predicted(String report) {
    Map<String, Double> out = new java.util.LinkedHashMap<>();
    java.util.regex.Matcher m = java.util.regex.Pattern.compile("(?m)^\\| (\\S+) \\| "
        + "tokensPerSecondPerDevice \\| [0-9.e+]+ \\| ([0-9.e+]+) \\|").matcher(report);
    while (m.find()) {
      out.put(m.group(1), Double.parseDouble(m.group(2)));
    }
    return out;
  }

  /**
   * The MoE Parallel Folding paper's Mixtral 8x22B and Qwen2-57B-A14B rows (docs/validation.md,
   * "Held-out mixtures of experts"): each within ±15 % (too slow), and over them and DeepSeek-V3's
   * row, the 23 held-out MoE rows, the mean the report prints (10.38 %, above issue 32's 10 %);
   * torchtitan's six DeepEP rows were held out too until the decision of 2026-12-07 looked at
   * them (hardware.json), and the report says so.
   */
  @Test
  void heldOutMixturesOfExperts() throws IOException {
    Map<String, Double> errors = CliTest.stepErrorsInDocs("moe-folding-cases.json", 22);
    errors.forEach((id, error) -> {
      assertTrue(id.startsWith("liu2025-mixtral-8x22b-") || id.startsWith("liu2025-qwen2-57b-"),
          id);
      assertTrue(error > 0 && error < 15.0, id + ": " + error + " %");
    });
    double deepSeek = CliTest.errorsById(CliTest.validatedInDocs("deepseek-v3-cases.json"),
        "tokensPerSecondPerDevice").get("deepseek2024-v3-2048h800-pp16-ep64-fp8");
    double sum = Math.abs(deepSeek);
    for (double e : errors.values()) {
      sum += Math.abs(e);
    }
    assertEquals(10.38, sum / 23, 0.01, "the 23 held-out MoE rows");
    String doc = Files.readString(Path.of("..", "docs", "validation.md"), StandardCharsets.UTF_8);
    assertTrue(doc.contains("23 held-out MoE rows, with DeepSeek-V3, the mean is 10.38 %"));
    assertTrue(doc.contains("The held-out MoE rows were again the 23, 10.38 % with the shipped"
        + " constants"));
    assertTrue(io.hyperframes.catalog.Catalog.builtIn().decisions().stream()
        .anyMatch(d -> d.lookedAt().contains("titandeepep2025")), "titandeepep2025 looked at");
  }

  /**
   * OLMo-core's H100 FSDP2 rows (docs/validation.md, "OLMo-core on H100"): the 1B, 7B and Llama
   * 8B rows within ±15 % and too slow, the 13B row just outside and too fast, the mean the report
   * prints.
   */
  @Test
  void olmoCoreRows() throws IOException {
    Map<String, Double> errors = CliTest.errorsById(CliTest.validatedInDocs(
        "olmocore-cases.json"), "tokensPerSecondPerDevice");
    assertEquals(4, errors.size(), errors.toString());
    double sum = 0;
    for (Map.Entry<String, Double> e : errors.entrySet()) {
      boolean thirteen = e.getKey().equals("olmocore2024-llama2-13b-8h100-fsdp2");
      assertTrue(thirteen ? e.getValue() > 15.0 && e.getValue() < 16.0
          : e.getValue() < -4.0 && e.getValue() > -8.0, errors.toString());
      sum += Math.abs(e.getValue());
    }
    assertEquals(8.18, sum / 4, 0.01, "the mean of the printed, rounded errors");
    String doc = Files.readString(Path.of("..", "docs", "validation.md"), StandardCharsets.UTF_8);
    assertTrue(doc.contains("**Three of the four within ±15 %**, the 1B, 7B and Llama 8B rows 5-7"
        + " % too slow; the 13B row\n  is 15.20 % too fast"));
  }

  /**
   * The two MoE sources recorded 2026-12-07 (54th session) before any prediction
   * (docs/validation.md, "Two more held-out MoE sources"): Megatron-Bridge's verification card
   * within 3.3 %; xtuner's Qwen3-235B rows on H800 off in both directions, full recomputation at
   * micro-batches of 4 and 8 too slow, PP 8 without virtual stages too fast, the mean the report
   * prints (20.69 %, not met).
   */
  @Test
  void xtunerAndVerificationCardRows() throws IOException {
    Map<String, Double> card = CliTest.stepErrorsInDocs("mbcard-cases.json", 2);
    card.forEach((id, e) -> assertTrue(Math.abs(e) < 3.3, id + ": " + e + " %"));
    Map<String, Double> xt = CliTest.stepErrorsInDocs("xtuner-cases.json", 10);
    double sum = 0;
    int within = 0;
    for (Map.Entry<String, Double> e : xt.entrySet()) {
      String id = e.getKey();
      double error = e.getValue();
      if (id.endsWith("-full") || id.endsWith("-full-novp")) {
        assertTrue(error > 21.0 && error < 32.0, id + ": " + error);
      } else if (id.contains("-pp8-sel-")) {
        assertTrue(error < -23.0 && error > -30.0, id + ": " + error);
      }
      sum += Math.abs(error);
      within += Math.abs(error) <= 15.0 ? 1 : 0;
    }
    assertEquals(20.69, sum / 10, 0.01, "the mean of the printed, rounded errors");
    assertEquals(3, within);
    String doc = Files.readString(Path.of("..", "docs", "validation.md"), StandardCharsets.UTF_8);
    assertTrue(doc.contains("**The card's two rows are within 3.3 %**"));
    assertTrue(doc.contains("**xtuner's rows are 20.69 % off on average, three of ten within"
        + " ±15 %, in two directions.**"));
  }

  /**
   * Megatron-LM's MoE recipe rows and Trainy's H200 rows, recorded 2026-12-07 (54th session)
   * before any prediction (docs/validation.md, "Megatron-LM's MoE recipe table and Trainy's H200
   * runs"): every row predicted too fast, the means the report prints (not met).
   */
  @Test
  void megatronMoeRecipeAndTrainyRows() throws IOException {
    Map<String, Double> recipes = CliTest.stepErrorsInDocs("mlmoe-cases.json", 9);
    double sum = 0;
    int within = 0;
    for (Map.Entry<String, Double> e : recipes.entrySet()) {
      assertTrue(e.getValue() < -9.0 && e.getValue() > -35.0, e.getKey() + ": " + e.getValue());
      sum += Math.abs(e.getValue());
      within += Math.abs(e.getValue()) <= 15.0 ? 1 : 0;
    }
    assertEquals(22.97, sum / 9, 0.01, "the mean of the printed, rounded errors");
    assertEquals(2, within);
    Map<String, Double> trainy = CliTest.errorsById(CliTest.validatedInDocs("trainy-cases.json"),
        "tokensPerSecondPerDevice");
    assertEquals(2, trainy.size(), trainy.toString());
    trainy.forEach((id, e) -> assertTrue(e > 23.0 && e < 27.0, id + ": " + e));
    String doc = Files.readString(Path.of("..", "docs", "validation.md"), StandardCharsets.UTF_8);
    assertTrue(doc.contains("Megatron-LM's nine are 9–34 % too fast, 22.97 %\n  on average, two"
        + " within ±15 %. Trainy's two are 24–26 % too fast"));
  }

  /**
   * Megatron-Bridge's expert-overlap A/B pairs of Qwen3-30B-A3B on 16 H100, recorded 2026-12-08
   * (55th session) before any prediction (docs/validation.md, "Megatron-Bridge's expert-overlap
   * A/B pairs on 16 H100"): both runs without overlap within 2 %, the HybridEP one with overlap
   * within 5 %, the alltoall one with overlap 23 % fast, the means the report prints.
   */
  @Test
  void megatronBridgeExpertOverlapPairs() throws IOException {
    double mean = checkedMean("mbskills-cases.json", 4, (id, err) -> assertTrue(
        id.endsWith("-alltoall-overlap") ? err < -20.0 && err > -26.0
            : Math.abs(err) < (id.endsWith("-overlap") ? 5.0 : 2.0), id + ": " + err));
    assertEquals(7.61, mean, 0.01, "the mean of the printed, rounded errors");
    String doc = Files.readString(Path.of("..", "docs", "validation.md"), StandardCharsets.UTF_8);
    assertTrue(doc.contains("**The alltoall run with overlap is\n  23.21 % too fast**"));
  }

  /**
   * The forced-balance rows of Megatron-Bridge's DeepSeek-V3, Qwen3-235B-A22B and gpt-oss-120b
   * verification cards, recorded 2026-12-08 (55th session) before any prediction
   * (docs/validation.md, "Megatron-Bridge's other model cards"): DeepSeek-V3 on H100 within 2 %,
   * every GB200 row too fast, the means the report prints.
   */
  @Test
  void megatronBridgeModelCardRows() throws IOException {
    double mean = checkedMean("mbcards-cases.json", 4, (id, err) -> assertTrue(id.contains("h100")
        ? Math.abs(err) < 2.0 : err < -15.0 && err > -45.0, id + ": " + err));
    assertEquals(19.46, mean, 0.01, "the mean of the printed, rounded errors");
    String doc = Files.readString(Path.of("..", "docs", "validation.md"), StandardCharsets.UTF_8);
    assertTrue(doc.contains("**DeepSeek-V3 on 1024 H100 is within 1.1 %; the three GB200 rows are"
        + " 15-44 % too fast.**"));
    // The Qwen3-8B card's dense row, recorded after these were computed, computed once.
    assertEquals(2.57, checkedMean("mbcard8b-cases.json", 1, (id, err) -> assertTrue(err > 0,
        id + ": " + err)), 0.005);
  }

  /**
   * The mean |error| of the {@code rows} step-time rows docs/validation.md prints for
   * {@code casesFile} (per cent, as printed), each row first given to {@code check} with its id.
   */
  private static double checkedMean(String casesFile, int rows,
      java.util.function.BiConsumer<String, Double> check) throws IOException {
    Map<String, Double> errors = CliTest.stepErrorsInDocs(casesFile, rows);
    errors.forEach(check);
    return errors.values().stream().mapToDouble(Math::abs).average().orElseThrow();
  }

  /** {@code estimate --format json} of the request of case {@code id} of {@code casesFile}. */
  private JsonNode estimate(String casesFile, String id) throws IOException {
    JsonNode cases = Json.parseObject(casesFile, Files.readString(
        Path.of("..", "docs", "validation", casesFile), StandardCharsets.UTF_8)).get("cases");
    for (JsonNode c : cases) {
      if (c.get("id").asText().equals(id)) {
        Path request = Files.writeString(dir.resolve(id + ".json"), c.get("request").toString());
        CliTest.Result r = CliTest.run("estimate", "--request", request.toString(), "--format",
            "json");
        assertEquals(0, r.status(), r.err());
        return Json.parseObject("estimate", r.out());
      }
    }
    throw new AssertionError("no case " + id + " in " + casesFile);
  }
}
