package io.hyperframes.launch;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.hyperframes.PlanRequests;
import io.hyperframes.json.Json;
import io.hyperframes.model.TransformerSpec;
import io.hyperframes.plan.Plan;
import io.hyperframes.plan.PlanRequest;
import io.hyperframes.plan.Planner;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Emitted launch configurations use only the engines' documented option names (kept as test data
 * with their source in src/test/resources/launch) and carry the plan's numbers.
 */
class LaunchConfigsTest {

  static Stream<String> requests() {
    return Stream.of(
        // GQA, SwiGLU, bf16, whatever layout the planner picks
        "{\"model\": {\"catalog\": \"llama2-70b\"}, \"cluster\": {\"accelerator\":"
            + " \"h100-sxm-80gb\", \"devices\": 256}, \"workload\": {\"type\": \"training\","
            + " \"precision\": \"bf16-mixed\", \"globalBatchSize\": 1024,"
            + " \"trainingTokens\": 2e12}}",
        // fp16 with fp32 gradients, interleaved pipeline, full recomputation, distributed optimizer
        "{\"model\": {\"catalog\": \"gpt3-175b\"}, \"cluster\": {\"accelerator\":"
            + " \"a100-sxm-80gb\", \"devices\": 1024}, \"workload\": {\"type\": \"training\","
            + " \"precision\": \"fp16-mixed\", \"gradientPrecision\": \"fp32\","
            + " \"globalBatchSize\": 1536, \"trainingTokens\": 3e11}, \"layout\": {\"tp\": 8,"
            + " \"pp\": 8, \"virtualStages\": 3, \"recompute\": \"full\", \"zeroStage\": 1,"
            + " \"sequenceParallel\": true}}",
        // a mixture of experts
        "{\"model\": {\"catalog\": \"mixtral-8x7b\"}, \"cluster\": {\"accelerator\":"
            + " \"h100-sxm-80gb\", \"devices\": 64}, \"workload\": {\"type\": \"training\","
            + " \"precision\": \"bf16-mixed\", \"globalBatchSize\": 128,"
            + " \"trainingTokens\": 1e11}, \"layout\": {\"engine\": \"megatron\"}}",
        // group-limited routing, latent attention, multi-token prediction (DeepSeek-V3 on 1024
        // H100 as dgxc-benchmarking 25.05 ran it)
        "{\"model\": {\"catalog\": \"deepseek-v3\"}, \"cluster\": {\"accelerator\":"
            + " \"h100-sxm-80gb\", \"devices\": 1024}, \"workload\": {\"type\": \"training\","
            + " \"precision\": \"bf16-mixed\", \"globalBatchSize\": 8192,"
            + " \"trainingTokens\": 1e11}, \"layout\": {\"engine\": \"megatron\", \"tp\": 2,"
            + " \"pp\": 16, \"dp\": 32, \"ep\": 64, \"etp\": 1, \"microBatch\": 1,"
            + " \"sequenceParallel\": true, \"zeroStage\": 1, \"recompute\": \"selective\","
            + " \"recomputeModules\": [\"mla_up_proj\"], \"firstStageLayers\": 3,"
            + " \"lastStageLayers\": 2}}",
        // fp8, ZeRO-3
        "{\"model\": {\"catalog\": \"llama3-8b\"}, \"cluster\": {\"accelerator\":"
            + " \"h100-sxm-80gb\", \"devices\": 64}, \"workload\": {\"type\": \"training\","
            + " \"precision\": \"fp8-mixed\", \"globalBatchSize\": 512,"
            + " \"trainingTokens\": 1e12}, \"layout\": {\"zeroStage\": 3, \"recompute\":"
            + " \"selective\"}}",
        // sliding windows (gpt-oss)
        "{\"model\": {\"catalog\": \"gpt-oss-20b\"}, \"cluster\": {\"accelerator\":"
            + " \"h100-sxm-80gb\", \"devices\": 8}, \"workload\": {\"type\": \"training\","
            + " \"precision\": \"bf16-mixed\", \"globalBatchSize\": 64,"
            + " \"trainingTokens\": 1e10}, \"layout\": {\"engine\": \"megatron\"}}",
        // a 128K-token sequence with context parallelism, its KV gathered
        "{\"model\": {\"name\": \"llama3.1-8b-128k\", \"layers\": 32, \"hidden\": 4096,"
            + " \"heads\": 32, \"kvHeads\": 8, \"ffnHidden\": 14336, \"gatedMlp\": true,"
            + " \"vocab\": 128256, \"seqLen\": 131072, \"tiedEmbeddings\": false},"
            + " \"cluster\": {\"accelerator\": \"h100-sxm-80gb\", \"devices\": 32},"
            + " \"workload\": {\"type\": \"training\", \"precision\": \"bf16-mixed\","
            + " \"globalBatchSize\": 8, \"trainingTokens\": 1e10}, \"layout\": {\"tp\": 4,"
            + " \"cp\": 8, \"cpCommType\": \"all_gather\"}}");
  }

  /**
   * An uneven split with virtual stages goes to Megatron-Core as a layout string: its
   * first/last-rank options must divide by the virtual stages, and the per-virtual-stage count
   * assumes an even split. Megatron-Bridge 25.11's Qwen3-235B-A22B on 256 H100 (docs/validation/
   * moe-cases.json): 94 layers, pp 8 with 4 virtual stages, 11 on the first and last rank, 12 on
   * each other, the embedding and the loss in the first and last chunks.
   */
  @Test
  void anUnevenSplitWithVirtualStagesIsALayoutString() {
    String json = "{\"model\": {\"catalog\": \"qwen3-235b-a22b\"}, \"cluster\":"
        + " {\"accelerator\": \"h100-sxm-80gb\", \"devices\": 256}, \"workload\": {\"type\":"
        + " \"training\", \"precision\": \"fp8-mixed\", \"globalBatchSize\": 2048,"
        + " \"trainingTokens\": 1e11}, \"layout\": {\"engine\": \"megatron\", \"tp\": 2,"
        + " \"pp\": 8, \"virtualStages\": 4, \"firstStageLayers\": 11, \"lastStageLayers\": 11,"
        + " \"ep\": 32, \"etp\": 1, \"dp\": 16, \"microBatch\": 1, \"sequenceParallel\": true,"
        + " \"recompute\": \"none\", \"zeroStage\": 1}}";
    PlanRequest r = PlanRequests.parse(json);
    Plan p = Planner.analytical().plan(r);
    String text = LaunchConfigs.megatron(p.best(), (TransformerSpec) r.model(),
        p.goldenParameters()).text();
    String expected = "Ett|" + "ttt|".repeat(7) + String.join("|",
        java.util.Collections.nCopies(2 * 8, "ttt")) + "|" + "ttt|".repeat(7) + "ttL";
    assertTrue(text.contains("--pipeline-model-parallel-layout '" + expected + "'"), text);
    assertTrue(!text.contains("--decoder-first-pipeline-num-layers"), text);
    assertTrue(!text.contains("--num-layers-per-virtual-pipeline-stage"), text);
    String layout = expected;
    assertEquals(94, layout.chars().filter(c -> c == 't').count());
    assertEquals(32, layout.split("\\|").length);
    // The exec form of the manifests takes the value without the shell's quotes.
    TrainingJob job = TrainingJob.of(p, (TransformerSpec) r.model(), LaunchOptions.defaults());
    assertTrue(job.engineArgs().contains(expected), job.engineArgs().toString());
  }

  @Test
  void flashAttentionIsPassedOnToMegatron() {
    String json = "{\"model\": {\"catalog\": \"llama2-7b\"}, \"cluster\": {\"accelerator\":"
        + " \"a100-sxm-80gb\", \"devices\": 8}, \"workload\": {\"type\": \"training\","
        + " \"precision\": \"bf16-mixed\", \"globalBatchSize\": 64, \"attention\": \"%s\"}}";
    PlanRequest flash = PlanRequests.parse(json.formatted("flash"));
    Plan p = Planner.analytical().plan(flash);
    assertTrue(LaunchConfigs.megatron(p.best(), (TransformerSpec) flash.model(),
        p.goldenParameters()).text()
        .contains("--use-flash-attn"));
    PlanRequest standard = PlanRequests.parse(json.formatted("standard"));
    Plan q = Planner.analytical().plan(standard);
    assertTrue(!LaunchConfigs.megatron(q.best(), (TransformerSpec) standard.model(),
        q.goldenParameters()).text()
        .contains("--use-flash-attn"));
  }

  @ParameterizedTest
  @MethodSource("requests")
  void megatronArgumentsAreDocumentedAndMatchThePlan(String json) throws IOException {
    PlanRequest r = PlanRequests.parse(json);
    Plan p = Planner.analytical().plan(r);
    TransformerSpec model = (TransformerSpec) r.model();
    LaunchConfigs.Emitted e = LaunchConfigs.megatron(p.best(), model, p.goldenParameters());
    Set<String> documented = names("megatron-options.txt");
    Matcher m = Pattern.compile("(--[a-z0-9-]+)").matcher(e.text());
    Set<String> used = new HashSet<>();
    while (m.find()) {
      used.add(m.group(1));
      assertTrue(documented.contains(m.group(1)), "undocumented Megatron option " + m.group(1));
    }
    var l = p.best().estimate().layout();
    assertTrue(e.text().contains("--tensor-model-parallel-size " + l.tp()));
    assertTrue(e.text().contains("--pipeline-model-parallel-size " + l.pp()));
    assertTrue(e.text().contains("--micro-batch-size " + l.microBatch()));
    assertTrue(e.text().contains("--global-batch-size " + p.best().workload().globalBatchSize()));
    assertEquals(l.sequenceParallel(), used.contains("--sequence-parallel"));
    assertEquals(model.kvHeads() != model.heads(), used.contains("--num-query-groups"));
    assertEquals(model.isMoe(), used.contains("--num-experts"));
    assertEquals(l.cp() > 1, used.contains("--context-parallel-size"));
    if (l.cp() > 1) {
      assertTrue(e.text().contains("--context-parallel-size " + l.cp()));
      assertTrue(e.text().contains("--cp-comm-type " + l.cpCommType().megatronName()));
    }
    assertEquals(model.mla() != null, used.contains("--multi-latent-attention"));
    // An uneven split: the first/last-rank options, or with virtual stages a layout string.
    boolean string = l.unevenStages() && l.virtualStages() > 1;
    assertEquals(string, used.contains("--pipeline-model-parallel-layout"));
    assertEquals(l.firstStageLayers() > 0 && !string,
        used.contains("--decoder-first-pipeline-num-layers"));
    assertEquals(l.lastStageLayers() > 0 && !string,
        used.contains("--decoder-last-pipeline-num-layers"));
    if (string) {
      assertEquals(l.virtualStages() > 1 && !string,
          used.contains("--num-layers-per-virtual-pipeline-stage"));
      Matcher layout = Pattern.compile("--pipeline-model-parallel-layout '([^']*)'")
          .matcher(e.text());
      assertTrue(layout.find(), e.text());
      assertEquals(model.layers(), layout.group(1).chars().filter(c -> c == 't').count());
      assertEquals(l.pp() * l.virtualStages(), layout.group(1).split("\\|").length);
      assertEquals(model.mtpLayers(), layout.group(1).chars().filter(c -> c == 'm').count());
    }
    assertEquals(model.slidingWindow() != null, used.contains("--window-size"));
    if (model.isMoe()) {
      assertTrue(e.text().contains("--moe-router-topk " + model.moe().topK()));
      assertTrue(e.text().contains("--moe-ffn-hidden-size " + model.moe().expertFfnHidden()));
      assertEquals(model.moe().groups() > 1, used.contains("--moe-router-num-groups"));
      if (model.moe().groups() > 1) {
        assertTrue(e.text().contains("--moe-router-group-topk " + model.moe().groupTopK()));
      }
    }
  }

  @ParameterizedTest
  @MethodSource("requests")
  void deepspeedConfigIsDocumentedAndConsistent(String json) throws IOException {
    PlanRequest r = PlanRequests.parse(json);
    Plan p = Planner.analytical().plan(r);
    LaunchConfigs.Emitted e = LaunchConfigs.deepspeed(p.best(), p.goldenParameters());
    JsonNode config = Json.parseObject("deepspeed", e.text());
    Set<String> documented = names("deepspeed-keys.txt");
    for (String path : paths(config, "")) {
      assertTrue(documented.contains(path), "undocumented DeepSpeed key " + path);
    }
    var l = p.best().estimate().layout();
    assertEquals(config.get("train_batch_size").asInt(),
        config.get("train_micro_batch_size_per_gpu").asInt()
            * config.get("gradient_accumulation_steps").asInt() * l.dp());
    assertEquals(l.zeroStage(), config.get("zero_optimization").get("stage").asInt());
  }

  @ParameterizedTest
  @MethodSource("requests")
  void torchrunLineIsDocumented(String json) throws IOException {
    PlanRequest r = PlanRequests.parse(json);
    Plan p = Planner.analytical().plan(r);
    LaunchConfigs.Emitted e = LaunchConfigs.torchrun(p.best(), r.cluster().devicesPerNode(),
        "pretrain_gpt.py");
    Set<String> documented = names("torchrun-options.txt");
    Matcher m = Pattern.compile("(--[a-z-]+)=").matcher(e.text());
    int count = 0;
    while (m.find()) {
      assertTrue(documented.contains(m.group(1)), "undocumented torchrun option " + m.group(1));
      count++;
    }
    assertTrue(count >= 5);
    long nodes = (p.best().estimate().devices() + 7) / 8;
    assertTrue(e.text().contains("--nnodes=" + nodes), e.text());
  }

  /** The names of a test resource under launch/, one a line, without comments. */
  static Set<String> names(String resource) throws IOException {
    try (InputStream in = LaunchConfigsTest.class.getResourceAsStream("/launch/" + resource)) {
      Set<String> out = new HashSet<>();
      for (String line : new String(in.readAllBytes(), StandardCharsets.UTF_8).split("\n")) {
        String t = line.strip();
        if (!t.isEmpty() && !t.startsWith("#")) {
          out.add(t);
        }
      }
      return out;
    }
  }

  private static Set<String> paths(JsonNode node, String prefix) {
    Set<String> out = new HashSet<>();
    for (Map.Entry<String, JsonNode> f : node.properties()) {
      String path = prefix.isEmpty() ? f.getKey() : prefix + "." + f.getKey();
      if (f.getValue().isObject()) {
        out.addAll(paths(f.getValue(), path));
      } else {
        out.add(path);
      }
    }
    return out;
  }
}
