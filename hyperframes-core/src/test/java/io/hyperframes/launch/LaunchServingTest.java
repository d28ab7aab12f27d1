package io.hyperframes.launch;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.hyperframes.catalog.Catalog;
import io.hyperframes.inference.InferencePlanner;
import io.hyperframes.inference.ServingPlans;
import io.hyperframes.json.Json;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * {@code --emit vllm | sglang | trtllm} on serving plans: every option written is in the
 * engine's option list at the pinned commit (test resources launch/vllm-options.txt,
 * sglang-options.txt, trtllm-options.txt and trtllm-llm-api-keys.txt, each with its repository,
 * file and commit), every value of a closed choice is one of the values listed there, and the
 * line says what the plan chose.
 */
class LaunchServingTest {

  /** Plans that exercise every option: FP8, expert parallelism, prefix caching, each draft. */
  static final List<String> REQUESTS = List.of(
      LaunchTest.SERVING,
      """
      {"model": {"catalog": "mixtral-8x7b"},
       "cluster": {"accelerator": "h100-sxm-80gb", "devices": 8},
       "workload": {"type": "inference", "precision": "fp16", "batchSize": 64,
                    "promptTokens": 1024, "outputTokens": 256, "arrivalRatePerSecond": 20,
                    "prefixCacheHitRate": 0.5,
                    "latencySlo": {"ttftSeconds": 0.5, "tpotSeconds": 0.05, "percentile": 99}}}
      """,
      """
      {"model": {"catalog": "llama3-70b"},
       "cluster": {"accelerator": "h100-sxm-80gb", "devices": 8},
       "workload": {"type": "inference", "precision": "fp8", "batchSize": 8,
                    "promptTokens": 1024, "outputTokens": 256, "arrivalRatePerSecond": 2,
                    "speculative": {"method": "eagle", "tokens": 3, "acceptance": 0.8},
                    "latencySlo": {"ttftSeconds": 1.0, "tpotSeconds": 0.05, "percentile": 99}}}
      """,
      """
      {"model": {"catalog": "llama3-70b"},
       "cluster": {"accelerator": "h100-sxm-80gb", "devices": 8},
       "workload": {"type": "inference", "precision": "fp8", "batchSize": 8,
                    "promptTokens": 1024, "outputTokens": 256, "arrivalRatePerSecond": 2,
                    "speculative": {"method": "draft", "tokens": 4, "acceptance": 0.7,
                                    "draftModel": {"catalog": "llama3-8b"}},
                    "latencySlo": {"ttftSeconds": 1.0, "tpotSeconds": 0.05, "percentile": 99}}}
      """,
      """
      {"model": {"catalog": "deepseek-v3"},
       "cluster": {"accelerator": "h200-sxm-141gb", "devices": 8},
       "workload": {"type": "inference", "precision": "fp8", "batchSize": 8,
                    "promptTokens": 2048, "outputTokens": 512, "arrivalRatePerSecond": 0.5,
                    "speculative": {"method": "mtp", "tokens": 1, "acceptance": 0.85},
                    "latencySlo": {"ttftSeconds": 5.0, "tpotSeconds": 0.2, "percentile": 99}}}
      """);

  // Closed choices, from the "Accepted values" comments of the option files.
  /** vllm/config/cache.py @ c1d86421 CacheDType. */
  private static final Set<String> VLLM_KV = Set.of("auto", "bfloat16", "fp8", "fp8_e4m3",
      "fp8_e5m2", "fp8_inc", "fp8_ds_mla");
  /** vllm/config/speculative.py @ f19b16d9 SpeculativeMethod (the current spellings). */
  private static final Set<String> VLLM_METHODS = Set.of("ngram", "medusa", "mlp_speculator",
      "draft_model", "suffix", "eagle", "eagle3", "mtp", "ngram_gpu");
  /** vllm/config/speculative.py @ f19b16d9 SpeculativeConfig fields a user sets. */
  private static final Set<String> VLLM_SPEC_KEYS = Set.of("method", "num_speculative_tokens",
      "model");
  /** vllm quantization/__init__.py @ 05d90956 QuantizationMethods (the ones emitted). */
  private static final Set<String> VLLM_QUANT = Set.of("fp8");
  /** python/sglang/srt/server_args.py @ 001067ff kv_cache_dtype choices. */
  private static final Set<String> SGLANG_KV = Set.of("auto", "fp8_e5m2", "fp8_e4m3", "mxfp8",
      "bf16", "bfloat16", "nvfp4", "fp4_mx_block16", "fp4_e2m1");
  /** The same file: QUANTIZATION_CHOICES. */
  private static final Set<String> SGLANG_QUANT = Set.of("awq", "fp8", "mxfp8", "gptq",
      "marlin", "gptq_marlin", "awq_marlin", "bitsandbytes", "gguf", "modelopt", "mlx_q8",
      "unquant", "humming");
  /** The same file: the built-in speculative algorithms its help text names. */
  private static final Set<String> SGLANG_ALGORITHMS = Set.of("EAGLE", "EAGLE3", "NEXTN",
      "STANDALONE", "NGRAM", "DFLASH", "DSPARK");

  private static final Pattern OPTION = Pattern.compile("(?<=\\s|^|')(--[a-z0-9][a-z0-9_-]*)");

  @Test
  void everyVllmOptionIsInVllmsOptionList() throws IOException {
    Set<String> known = names("vllm-options.txt");
    boolean sawEp = false;
    boolean sawPrefix = false;
    Set<String> methods = new HashSet<>();
    for (ServingPlans.Result r : plans()) {
      InferencePlanner.Config best = r.plan().best();
      String text = Launch.serving(r, Target.VLLM, LaunchOptions.defaults()).text();
      assertTrue(text.startsWith("vllm serve " + r.request().model().name() + " \\\n"), text);
      for (String o : options(text)) {
        assertTrue(known.contains(o), o + " is not a vllm serve option at the pinned commit: "
            + text);
      }
      assertTrue(text.contains("--tensor-parallel-size=" + best.tp()), text);
      assertTrue(text.contains("--max-num-seqs=" + best.batchLimit()), text);
      assertTrue(text.contains("--max-model-len=" + r.request().model().seqLen()), text);
      assertEquals(best.ep() > 1, text.contains("--enable-expert-parallel"), text);
      sawEp |= best.ep() > 1;
      value(text, "--kv-cache-dtype=").ifPresent(v -> assertTrue(VLLM_KV.contains(v), v));
      value(text, "--quantization=").ifPresent(v -> assertTrue(VLLM_QUANT.contains(v), v));
      assertEquals(r.request().workload().prefixCacheHitRate() > 0,
          text.contains("--enable-prefix-caching"), text);
      sawPrefix |= text.contains("--enable-prefix-caching");
      var spec = r.request().workload().speculative();
      assertEquals(spec != null, text.contains("--speculative-config="), text);
      if (spec != null) {
        String json = text.substring(text.indexOf("--speculative-config=") + 21);
        json = json.substring(0, json.indexOf('}') + 1);
        var node = Json.parseObject("speculative-config", json);
        node.fieldNames().forEachRemaining(k -> assertTrue(VLLM_SPEC_KEYS.contains(k), k));
        String method = node.get("method").asText();
        assertTrue(VLLM_METHODS.contains(method), method);
        methods.add(method);
        assertEquals(spec.tokens(), node.get("num_speculative_tokens").asInt());
      }
    }
    assertTrue(sawEp, "one plan splits the experts");
    assertTrue(sawPrefix, "one plan caches prefixes");
    assertEquals(Set.of("eagle", "draft_model", "mtp"), methods);
  }

  @Test
  void everySglangOptionIsInSglangsOptionList() throws IOException {
    Set<String> known = names("sglang-options.txt");
    for (ServingPlans.Result r : plans()) {
      InferencePlanner.Config best = r.plan().best();
      String text = Launch.serving(r, Target.SGLANG, LaunchOptions.defaults()).text();
      assertTrue(text.startsWith("python -m sglang.launch_server \\\n"), text);
      for (String o : options(text)) {
        assertTrue(known.contains(o), o + " is not an SGLang server option at the pinned"
            + " commit: " + text);
      }
      assertTrue(text.contains("--tp-size " + best.tp()), text);
      assertTrue(text.contains("--max-running-requests " + best.batchLimit()), text);
      assertEquals(best.ep() > 1, text.contains("--ep-size " + best.ep()), text);
      spaced(text, "--kv-cache-dtype").ifPresent(v -> assertTrue(SGLANG_KV.contains(v), v));
      spaced(text, "--quantization").ifPresent(v -> assertTrue(SGLANG_QUANT.contains(v), v));
      var spec = r.request().workload().speculative();
      assertEquals(spec != null, text.contains("--speculative-algorithm"), text);
      if (spec != null) {
        String algorithm = spaced(text, "--speculative-algorithm").orElseThrow();
        assertTrue(SGLANG_ALGORITHMS.contains(algorithm), algorithm);
        assertEquals(Integer.toString(spec.tokens() + 1),
            spaced(text, "--speculative-num-draft-tokens").orElseThrow(), text);
      }
    }
  }

  @Test
  void everyTrtllmOptionAndYamlKeyIsInTensorRtLlmsLists() throws IOException {
    Set<String> known = names("trtllm-options.txt");
    Set<String> keys = names("trtllm-llm-api-keys.txt");
    for (ServingPlans.Result r : plans()) {
      InferencePlanner.Config best = r.plan().best();
      LaunchConfigs.Emitted e = Launch.serving(r, Target.TRTLLM, LaunchOptions.defaults());
      String text = e.text();
      String yaml = text.substring(text.indexOf("<<'EOF'\n") + 8, text.indexOf("\nEOF\n"));
      String line = text.substring(text.indexOf("\nEOF\n") + 5);
      assertTrue(line.startsWith("trtllm-serve " + r.request().model().name() + " \\\n"), text);
      for (String o : options(line)) {
        assertTrue(known.contains(o), o + " is not a trtllm-serve option at the pinned commit: "
            + text);
      }
      assertTrue(line.contains("--tp_size " + best.tp()), text);
      assertTrue(line.contains("--max_batch_size " + best.batchLimit()), text);
      assertEquals(best.ep() > 1, line.contains("--ep_size " + best.ep()), text);
      // Two-level YAML: every section.key and decoding type in the LLM API's lists.
      String section = null;
      for (String y : yaml.split("\n")) {
        if (!y.startsWith(" ")) {
          section = y.substring(0, y.indexOf(':'));
          continue;
        }
        String key = y.strip().substring(0, y.strip().indexOf(':'));
        assertTrue(keys.contains(section + "." + key), section + "." + key);
        if (key.equals("decoding_type")) {
          String type = y.substring(y.indexOf(':') + 1).strip();
          assertTrue(keys.contains("decoding_type=" + type), type);
        }
      }
      assertEquals(r.request().workload().prefixCacheHitRate() > 0,
          yaml.contains("enable_block_reuse: true"), yaml);
      if (best.kvCache().isFp8() || best.weights().isFp8()) {
        assertTrue(e.notes().stream().anyMatch(n -> n.startsWith("FP8")), e.notes().toString());
      }
    }
  }

  /**
   * An aggregated plan whose experts span replicas (DeepSeek-V3 on H100: ep 16 over 16 replicas
   * of one device, two nodes a group) is one engine per expert-parallel group: vLLM one command
   * per node (the first serving requests, the others headless), SGLang one line run on each node
   * with its rank; every option in the engine's list. A Deployment's pod holds a group only
   * within a node, and TensorRT-LLM lines are not written: both refused, naming why. Within a
   * node (Mixtral 8x7B, ep 2 over two replicas), a pod holds one group.
   */
  @Test
  void expertsOverReplicasAreOneEnginePerGroup() throws IOException {
    ServingPlans.Result r = ServingPlans.plan(Json.parseObject("r",
        io.hyperframes.inference.ServingRequests.DEEPSEEK_H100), Catalog.builtIn());
    InferencePlanner.Config best = r.plan().best();
    assertEquals(16, best.replicasPerGroup(), best::toString);
    String vllm = Launch.serving(r, Target.VLLM, LaunchOptions.defaults()).text();
    Set<String> vllmOptions = names("vllm-options.txt");
    options(vllm).forEach(o -> assertTrue(vllmOptions.contains(o), o));
    String[] commands = vllm.split("\n# ");
    assertEquals(2, commands.length, vllm);
    for (String c : commands) {
      assertTrue(c.contains("--data-parallel-size=16 ") && c.contains("--data-parallel-size-local=8")
          && c.contains("--all2all-backend=deepep_low_latency")
          && c.contains("--data-parallel-address=\"$HEAD_NODE_IP\""), c);
    }
    assertFalse(commands[0].contains("--headless"), commands[0]);
    assertTrue(commands[1].contains("--headless")
        && commands[1].contains("--data-parallel-start-rank=$((NODE_RANK * 8))"), commands[1]);
    String sglang = Launch.serving(r, Target.SGLANG, LaunchOptions.defaults()).text();
    Set<String> sglangOptions = names("sglang-options.txt");
    options(sglang).forEach(o -> assertTrue(sglangOptions.contains(o), o));
    for (String expected : List.of("--tp-size 16", "--ep-size 16", "--dp-size 16",
        "--enable-dp-attention", "--moe-a2a-backend deepep", "--nnodes 2",
        "--node-rank \"$NODE_RANK\"", "--max-running-requests " + 16 * best.batchLimit())) {
      assertTrue(sglang.contains(expected + " "), expected + " in " + sglang);
    }
    String k8s = assertThrows(IllegalArgumentException.class,
        () -> Launch.serving(r, Target.KUBERNETES, LaunchOptions.defaults())).getMessage();
    assertTrue(k8s.startsWith("--emit kubernetes: the plan's expert-parallel groups of 16"
        + " devices (ep 16) span 2 nodes"), k8s);
    String trt = assertThrows(IllegalArgumentException.class,
        () -> Launch.serving(r, Target.TRTLLM, LaunchOptions.defaults())).getMessage();
    assertTrue(trt.startsWith("--emit trtllm: the plan spreads the experts over 16 replicas"),
        trt);

    ServingPlans.Result mixtral = ServingPlans.plan(Json.parseObject("r", """
        {"model": {"catalog": "mixtral-8x7b"},
         "cluster": {"accelerator": "h100-sxm-80gb", "devices": 8},
         "workload": {"type": "inference", "precision": "fp16", "batchSize": 64,
                      "promptTokens": 1024, "outputTokens": 256, "arrivalRatePerSecond": 50,
                      "latencySlo": {"ttftSeconds": 0.5, "tpotSeconds": 0.05, "percentile": 99}}}
        """), Catalog.builtIn());
    InferencePlanner.Config pair = mixtral.plan().best();
    assertEquals(2, pair.replicasPerGroup(), pair::toString);
    String one = Launch.serving(mixtral, Target.VLLM, LaunchOptions.defaults()).text();
    assertFalse(one.contains("\n# ") || one.contains("--all2all-backend")
        || one.contains("--headless"), one);
    assertTrue(one.contains("--data-parallel-size=2 "), one);
    String deployment = Launch.serving(mixtral, Target.KUBERNETES, LaunchOptions.defaults())
        .text();
    assertTrue(deployment.contains("replicas: " + pair.replicas() / 2), deployment);
    assertTrue(deployment.contains("nvidia.com/gpu: \"2\""), deployment);
  }

  /**
   * A plan whose replicas are pipeline stages over nodes (Llama 3.1 405B in BF16 on H100) is
   * launched by vLLM on its Ray executor, with pp batch limits as the running requests of the
   * batches in flight, every option in the pinned list; the other targets refuse it by name.
   */
  @Test
  void pipelineStagesOverNodesAreLaunchedByVllmOnRay() throws IOException {
    ServingPlans.Result r = ServingPlans.plan(Json.parseObject("r",
        io.hyperframes.inference.ServingRequests.LLAMA_405B_BF16), Catalog.builtIn());
    InferencePlanner.Config best = r.plan().best();
    assertTrue(best.pp() > 1, best::toString);
    LaunchConfigs.Emitted vllm = Launch.serving(r, Target.VLLM, LaunchOptions.defaults());
    Set<String> vllmOptions = names("vllm-options.txt");
    options(vllm.text()).forEach(o -> assertTrue(vllmOptions.contains(o), o));
    assertTrue(vllm.text().contains("--tensor-parallel-size=8")
        && vllm.text().contains("--pipeline-parallel-size=" + best.pp())
        && vllm.text().contains("--distributed-executor-backend=ray")
        && vllm.text().contains("--max-num-seqs=" + best.batchLimit() * best.pp()), vllm.text());
    assertTrue(vllm.notes().stream().anyMatch(n -> n.startsWith("each replica takes "
        + best.pp() + " nodes")), vllm.notes()::toString);
    for (Target t : List.of(Target.SGLANG, Target.TRTLLM, Target.KUBERNETES)) {
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
          () -> Launch.serving(r, t, LaunchOptions.defaults()));
      assertEquals("--emit " + t.id() + ": the plan's replicas span " + best.pp() + " nodes by"
          + " pipeline stages (tp 8, pp " + best.pp() + "), which only --emit vllm writes (on a"
          + " Ray cluster over the nodes)", e.getMessage());
    }
  }

  /**
   * A group whose ep does not divide the routed experts holds redundant experts, and every
   * engine line starts it with the engine's copies and load balancer: vLLM and SGLang for the
   * aggregated plan (DeepSeek-V3 at 45 requests/s: 24 devices, 8 copies), the workers of both
   * Dynamo backends for pools that hold copies; every option in the pinned lists.
   */
  @Test
  void redundantExpertsAreLaunchedWithTheEnginesCopies() throws IOException {
    ServingPlans.Result r = ServingPlans.plan(Json.parseObject("r",
        io.hyperframes.inference.ServingRequests.DEEPSEEK_H100_45), Catalog.builtIn());
    InferencePlanner.Config best = r.plan().best();
    assertEquals(List.of(24, 24, 8), List.of(best.devices(), best.ep(),
        best.redundantExperts()), best::toString);
    assertEquals(8, ServingPlans.toJson(r).get("best").get("redundantExperts").asInt());
    Set<String> vllmOptions = names("vllm-options.txt");
    String vllm = Launch.serving(r, Target.VLLM, LaunchOptions.defaults()).text();
    options(vllm).forEach(o -> assertTrue(vllmOptions.contains(o), o));
    String[] commands = vllm.split("\n# ");
    assertEquals(2, commands.length, vllm);
    for (String c : commands) {
      assertTrue(c.contains("--enable-eplb") && c.contains("--num-redundant-experts=8")
          && c.contains("--enable-expert-parallel"), c);
    }
    Set<String> sglangOptions = names("sglang-options.txt");
    String sglang = Launch.serving(r, Target.SGLANG, LaunchOptions.defaults()).text();
    options(sglang).forEach(o -> assertTrue(sglangOptions.contains(o), o));
    assertTrue(sglang.contains("--enable-eplb") && sglang.contains("--ep-num-redundant-experts 8")
        && sglang.contains("--nnodes 3"), sglang);
    // The Dynamo workers of pools that hold copies (this plan's pools, given 32 each).
    InferencePlanner.DisaggregatedConfig d = r.plan().disaggregated();
    InferencePlanner.DisaggregatedConfig copies = new InferencePlanner.DisaggregatedConfig(
        withCopies(d.prefill()), withCopies(d.decode()), d.weights(), d.kvCache(), d.devices(),
        d.usdPerMillionTokens(), d.ttftSeconds(), d.tpotSeconds(), d.oneNode());
    InferencePlanner.ServingPlan p = r.plan();
    ServingPlans.Result apart = new ServingPlans.Result(r.request(),
        new InferencePlanner.ServingPlan(p.best(), p.alternatives(), p.findings(),
            p.candidatesEvaluated(), p.pareto(), copies, p.interval()), r.estimator());
    String dynamoVllm = Launch.serving(apart, Target.DYNAMO, LaunchOptions.defaults()).text();
    assertEquals(2, dynamoVllm.split("--num-redundant-experts", -1).length - 1, dynamoVllm);
    String dynamoSglang = Launch.serving(apart, Target.DYNAMO, LaunchOptions.defaults(),
        Target.SGLANG).text();
    assertEquals(2, dynamoSglang.split("--ep-num-redundant-experts", -1).length - 1,
        dynamoSglang);
    for (String text : List.of(dynamoVllm, dynamoSglang)) {
      LaunchTest.validate(text);
      assertTrue(text.contains("- \"32\"") || text.contains("- '32'") || text.contains("=32"),
          text);
    }
  }

  private static InferencePlanner.PoolConfig withCopies(InferencePlanner.PoolConfig p) {
    return new InferencePlanner.PoolConfig(p.tp(), p.ep(), p.replicas(), p.batchLimit(),
        p.devices(), p.twoBatchOverlap(), 32);
  }

  @Test
  void serviceLinesRefuseTrainingPlansAndTrainingTargetsRefuseServingPlans() {
    ServingPlans.Result r = ServingPlans.plan(Json.parseObject("r", LaunchTest.SERVING),
        Catalog.builtIn());
    String msg = assertThrows(IllegalArgumentException.class,
        () -> Launch.serving(r, Target.MEGATRON, LaunchOptions.defaults())).getMessage();
    assertTrue(msg.contains("vllm, sglang, trtllm") && msg.contains("megatron"), msg);
    var plan = LaunchTest.plan(LaunchTest.SINGLE_NODE);
    for (Target t : List.of(Target.VLLM, Target.SGLANG, Target.TRTLLM)) {
      String m = assertThrows(IllegalArgumentException.class,
          () -> Launch.emit(plan, t)).getMessage();
      assertTrue(m.contains(t.id()) && m.contains("serving plan"), m);
    }
    assertEquals(Target.TRTLLM, Target.fromId("--emit", "trtllm"));
  }

  private static List<ServingPlans.Result> plans() {
    List<ServingPlans.Result> out = new ArrayList<>();
    for (String request : REQUESTS) {
      ServingPlans.Result r = ServingPlans.plan(Json.parseObject("r", request),
          Catalog.builtIn());
      assertNotNull(r.plan().best(), () -> "no configuration meets the SLO: " + request);
      out.add(r);
    }
    return out;
  }

  private static List<String> options(String text) {
    List<String> out = new ArrayList<>();
    Matcher m = OPTION.matcher(text);
    while (m.find()) {
      out.add(m.group(1));
    }
    assertFalse(out.isEmpty(), text);
    return out;
  }

  /** The value after {@code prefix} up to the next space or line end. */
  private static java.util.Optional<String> value(String text, String prefix) {
    int i = text.indexOf(prefix);
    if (i < 0) {
      return java.util.Optional.empty();
    }
    String rest = text.substring(i + prefix.length());
    return java.util.Optional.of(rest.split("[\\s\\\\]", 2)[0]);
  }

  /** The word after {@code option} and a space. */
  private static java.util.Optional<String> spaced(String text, String option) {
    return value(text, option + " ");
  }

  private static Set<String> names(String resource) throws IOException {
    return LaunchConfigsTest.names(resource);
  }
}
