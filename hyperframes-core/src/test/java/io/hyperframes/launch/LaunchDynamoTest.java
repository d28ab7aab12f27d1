package io.hyperframes.launch;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.hyperframes.catalog.Catalog;
import io.hyperframes.inference.InferencePlanner;
import io.hyperframes.inference.ServingPlans;
import io.hyperframes.json.Json;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * {@code --emit dynamo}: the disaggregated configuration of a serving plan as a Dynamo
 * {@code DynamoGraphDeployment} that validates against the CRD's v1beta1 schema (test resource
 * launch/schemas/dynamographdeployment-v1beta1.json), whose workers take only options of
 * Dynamo's vLLM worker or of vLLM's engine at the pinned commits, and whose pools are the plan's.
 */
class LaunchDynamoTest {

  private static List<ServingPlans.Result> disaggregatedPlans() throws IOException {
    List<String> requests = new ArrayList<>(LaunchServingTest.REQUESTS);
    requests.add(Files.readString(Path.of("..", "examples", "serve-70b-slo.json")));
    List<ServingPlans.Result> out = new ArrayList<>();
    for (String request : requests) {
      ServingPlans.Result r = ServingPlans.plan(Json.parseObject("r", request),
          Catalog.builtIn());
      if (r.plan().disaggregated() != null) {
        out.add(r);
      }
    }
    assertTrue(out.size() >= 3, "several plans have a disaggregated configuration");
    return out;
  }

  @Test
  void theDeploymentIsThePlansPoolsInDynamosVocabulary() throws IOException {
    Set<String> known = new HashSet<>(LaunchConfigsTest.names("dynamo-vllm-options.txt"));
    known.addAll(LaunchConfigsTest.names("vllm-options.txt"));
    boolean sawSpeculative = false;
    for (ServingPlans.Result r : disaggregatedPlans()) {
      InferencePlanner.DisaggregatedConfig d = r.plan().disaggregated();
      LaunchConfigs.Emitted e = Launch.serving(r, Target.DYNAMO, LaunchOptions.defaults()
          .withName("serve"));
      List<JsonNode> docs = LaunchTest.validate(e.text());
      // The schema is strict: a misspelt field or a component type it does not know fails.
      assertThrows(AssertionError.class, () -> LaunchTest.validate(e.text()
          .replaceFirst("podTemplate:", "podTemplates:")));
      assertThrows(AssertionError.class, () -> LaunchTest.validate(e.text()
          .replaceFirst("type: \"?prefill\"?", "type: prefiller")));
      assertEquals(1, docs.size(), e.text());
      JsonNode g = docs.get(0);
      assertEquals("nvidia.com/v1beta1", g.get("apiVersion").asText());
      components(g, "vllm", Manifests.DYNAMO_IMAGE);
      for (int i = 1; i <= 2; i++) {
        String type = i == 1 ? "prefill" : "decode";
        InferencePlanner.PoolConfig pool = i == 1 ? d.prefill() : d.decode();
        List<String> args = workerArgs(g, i, pool, "vllm", known);
        JsonNode kv = Json.parseObject("kv", args.get(args.indexOf("--kv-transfer-config") + 1));
        assertEquals("NixlConnector", kv.get("kv_connector").asText());
        assertTrue(args.contains("--tensor-parallel-size=" + pool.tp()), args::toString);
        assertTrue(args.contains("--max-num-seqs=" + pool.batchLimit()), args::toString);
        assertEquals(pool.ep() > 1, args.contains("--enable-expert-parallel"));
        assertEquals(d.kvCache().isFp8(), args.contains("--kv-cache-dtype=fp8"));
        boolean speculative = args.stream().anyMatch(a -> a.startsWith("--speculative-config="));
        assertEquals(type.equals("decode") && r.request().workload().speculative() != null,
            speculative, "drafts run where tokens are generated: " + args);
        sawSpeculative |= speculative;
        assertFalse(args.stream().anyMatch(a -> a.startsWith("--port")), "workers serve no"
            + " HTTP: the frontend does");
      }
      assertTrue(e.notes().stream().anyMatch(n -> n.contains(d.devices() + " devices")),
          e.notes()::toString);
      assertEquals("aggregated".equals(r.plan().choice()),
          e.notes().stream().anyMatch(n -> n.startsWith("the aggregated configuration needs")),
          e.notes()::toString);
    }
    assertTrue(sawSpeculative, "one plan decodes speculatively");
  }

  /**
   * With SGLang workers ({@code --backend sglang}): the same pools, {@code dynamo.sglang} with
   * only SGLang server options at the pinned commit (Dynamo's SGLang worker hands them to
   * SGLang), the disaggregation options of Dynamo's SGLang example, drafts on the decode side.
   */
  @Test
  void sglangWorkersTakeSglangsOptionsAndThePlansPools() throws IOException {
    Set<String> known = new HashSet<>(LaunchConfigsTest.names("sglang-options.txt"));
    boolean sawSpeculative = false;
    for (ServingPlans.Result r : disaggregatedPlans()) {
      InferencePlanner.DisaggregatedConfig d = r.plan().disaggregated();
      LaunchConfigs.Emitted e = Launch.serving(r, Target.DYNAMO, LaunchOptions.defaults(),
          Target.SGLANG);
      JsonNode g = LaunchTest.validate(e.text()).get(0);
      components(g, "sglang", Manifests.DYNAMO_SGLANG_IMAGE);
      for (int i = 1; i <= 2; i++) {
        String type = i == 1 ? "prefill" : "decode";
        InferencePlanner.PoolConfig pool = i == 1 ? d.prefill() : d.decode();
        List<String> args = workerArgs(g, i, pool, "sglang", known);
        assertEquals("nixl", args.get(args.indexOf("--disaggregation-transfer-backend") + 1));
        assertEquals(String.valueOf(pool.tp()), args.get(args.indexOf("--tp-size") + 1));
        assertEquals(String.valueOf(pool.batchLimit()),
            args.get(args.indexOf("--max-running-requests") + 1));
        assertEquals(pool.ep() > 1, args.contains("--ep-size"));
        assertEquals(d.kvCache().isFp8(), args.contains("--kv-cache-dtype"));
        assertEquals(r.request().model().name(), args.get(args.indexOf("--model-path") + 1));
        boolean speculative = args.contains("--speculative-algorithm");
        assertEquals(type.equals("decode") && r.request().workload().speculative() != null,
            speculative, "drafts run where tokens are generated: " + args);
        sawSpeculative |= speculative;
        assertFalse(args.contains("--port"), "workers serve no HTTP: the frontend does");
      }
      assertTrue(e.notes().stream().anyMatch(n -> n.startsWith("--model-path ")),
          e.notes()::toString);
    }
    assertTrue(sawSpeculative, "one plan decodes speculatively");
    ServingPlans.Result any = disaggregatedPlans().get(0);
    var k8s = assertThrows(IllegalArgumentException.class, () -> Launch.serving(any,
        Target.DYNAMO, LaunchOptions.defaults(), Target.KUBERNETES));
    assertEquals("--backend: Dynamo workers are emitted for vllm, sglang or trtllm, not"
        + " kubernetes", k8s.getMessage());
    var vllm = assertThrows(IllegalArgumentException.class, () -> Launch.serving(any,
        Target.VLLM, LaunchOptions.defaults(), Target.SGLANG));
    assertEquals("--backend: only with --emit dynamo (the engine of its workers), not with"
        + " --emit vllm", vllm.getMessage());
  }

  /**
   * With TensorRT-LLM workers ({@code --backend trtllm}): a ConfigMap of two engine YAML files
   * (the ConfigMap schema), then the deployment (the CRD's schema) whose workers take only
   * options of Dynamo's TensorRT-LLM worker at the pinned commit, read their pool's file from
   * the mounted ConfigMap, and whose engine files hold only keys and values of TensorRT-LLM
   * 1.3's LLM API (test resource trtllm-1.3-llm-api-keys.txt): the KV transfer on both pools,
   * the overlap scheduler off on prefill, block reuse and the KV format as planned, drafts on
   * the decode side.
   */
  @Test
  void trtllmWorkersReadTheirPoolsEngineFileFromTheConfigMap() throws IOException {
    Set<String> known = LaunchConfigsTest.names("dynamo-trtllm-options.txt");
    Set<String> keys = LaunchConfigsTest.names("trtllm-1.3-llm-api-keys.txt");
    boolean sawSpeculative = false;
    boolean sawFp8 = false;
    for (ServingPlans.Result r : disaggregatedPlans()) {
      InferencePlanner.DisaggregatedConfig d = r.plan().disaggregated();
      LaunchConfigs.Emitted e = Launch.serving(r, Target.DYNAMO, LaunchOptions.defaults()
          .withName("serve"), Target.TRTLLM);
      List<JsonNode> docs = LaunchTest.validate(e.text());
      assertEquals(2, docs.size(), e.text());
      JsonNode cm = docs.get(0);
      assertEquals("ConfigMap", cm.get("kind").asText());
      assertEquals("serve-engine", cm.at("/metadata/name").asText());
      JsonNode g = docs.get(1);
      components(g, "trtllm", Manifests.DYNAMO_TRTLLM_IMAGE);
      for (int i = 1; i <= 2; i++) {
        String type = i == 1 ? "prefill" : "decode";
        InferencePlanner.PoolConfig pool = i == 1 ? d.prefill() : d.decode();
        List<String> args = workerArgs(g, i, pool, "trtllm", known);
        JsonNode w = g.at("/spec/components").get(i);
        JsonNode c = w.at("/podTemplate/spec/containers/0");
        assertEquals(String.valueOf(pool.tp()),
            args.get(args.indexOf("--tensor-parallel-size") + 1));
        assertEquals(String.valueOf(pool.batchLimit()),
            args.get(args.indexOf("--max-batch-size") + 1));
        assertEquals(pool.ep() > 1, args.contains("--expert-parallel-size"));
        assertEquals(r.request().model().name(), args.get(args.indexOf("--model") + 1));
        // The file the worker reads is the ConfigMap's key for its pool, mounted where it looks.
        String file = args.get(args.indexOf("--extra-engine-args") + 1);
        assertEquals(Manifests.ENGINE_DIR + "/" + type + ".yaml", file);
        assertEquals(Manifests.ENGINE_DIR, c.at("/volumeMounts/0/mountPath").asText());
        String volume = c.at("/volumeMounts/0/name").asText();
        JsonNode vol = w.at("/podTemplate/spec/volumes/0");
        assertEquals(volume, vol.get("name").asText());
        assertEquals("serve-engine", vol.at("/configMap/name").asText());
        JsonNode engine = new com.fasterxml.jackson.dataformat.yaml.YAMLMapper()
            .readTree(cm.at("/data/" + type + ".yaml").asText());
        for (var f : engine.properties()) {
          if (f.getValue().isObject()) {
            for (var sub : f.getValue().properties()) {
              String key = f.getKey() + "." + sub.getKey();
              assertTrue(keys.contains(key), key + " is not an LLM API key of TensorRT-LLM 1.3");
              if (keys.stream().anyMatch(k -> k.startsWith(key + "="))) {
                assertTrue(keys.contains(key + "=" + sub.getValue().asText()),
                    key + " = " + sub.getValue().asText());
              }
            }
          } else {
            assertTrue(keys.contains(f.getKey()), f.getKey());
          }
        }
        assertEquals("DEFAULT", engine.at("/cache_transceiver_config/backend").asText());
        assertEquals(type.equals("prefill"), engine.path("disable_overlap_scheduler")
            .asBoolean(false), engine.toString());
        assertEquals(r.request().workload().prefixCacheHitRate() > 0,
            engine.at("/kv_cache_config/enable_block_reuse").asBoolean());
        assertEquals(d.kvCache().isFp8(), "fp8".equals(engine.at("/kv_cache_config/dtype")
            .asText()), engine.toString());
        sawFp8 |= d.kvCache().isFp8();
        boolean speculative = engine.has("speculative_config");
        assertEquals(type.equals("decode") && r.request().workload().speculative() != null,
            speculative, "drafts run where tokens are generated: " + engine);
        sawSpeculative |= speculative;
      }
      assertTrue(e.notes().stream().anyMatch(n -> n.startsWith("--model ")),
          e.notes()::toString);
    }
    assertTrue(sawSpeculative, "one plan decodes speculatively");
    assertTrue(sawFp8, "one plan keeps its KV cache in FP8");
  }

  /**
   * When only the disaggregated configuration meets the SLO, the aggregated targets refuse and
   * point to --emit dynamo, which launches it without a note about the aggregated side.
   */
  @Test
  void onlyDisaggregatedIsLaunchedByDynamoAlone() throws IOException {
    ServingPlans.Result r = ServingPlans.plan(Json.parseObject("r", Files.readString(
        Path.of("..", "examples", "serve-70b-slo.json"))), Catalog.builtIn());
    InferencePlanner.ServingPlan p = r.plan();
    ServingPlans.Result apartOnly = new ServingPlans.Result(r.request(),
        new InferencePlanner.ServingPlan(null, List.of(), p.findings(), p.candidatesEvaluated(),
            p.pareto(), p.disaggregated(), p.interval()), r.estimator());
    assertEquals("disaggregated", apartOnly.plan().choice());
    var e = assertThrows(IllegalArgumentException.class,
        () -> Launch.serving(apartOnly, Target.VLLM, LaunchOptions.defaults()));
    assertEquals("--emit: only a disaggregated configuration meets the SLO: --emit dynamo"
        + " launches it", e.getMessage());
    LaunchConfigs.Emitted dynamo = Launch.serving(apartOnly, Target.DYNAMO,
        LaunchOptions.defaults());
    LaunchTest.validate(dynamo.text());
    assertFalse(dynamo.notes().stream().anyMatch(n -> n.contains("aggregated configuration")),
        dynamo.notes()::toString);
    assertEquals("{\"feasible\":false,\"reasons\":[\"no aggregated configuration meets the"
        + " SLO; bestDisaggregated does\"]}", Json.mapper().createObjectNode()
            .put("feasible", ServingPlans.toJson(apartOnly).get("feasible").asBoolean())
            .set("reasons", ServingPlans.toJson(apartOnly).get("reasons")).toString());
  }

  @Test
  void aPlanWithoutPoolsOrATrainingPlanIsRefused() {
    ServingPlans.Result none = ServingPlans.plan(Json.parseObject("r", """
        {"model": {"catalog": "llama2-7b"}, "cluster": {"accelerator": "h100-sxm-80gb",
         "devices": 8}, "workload": {"type": "inference", "precision": "fp16",
         "batchSize": 1, "promptTokens": 512, "outputTokens": 128,
         "arrivalRatePerSecond": 1e6, "latencySlo": {"ttftSeconds": 0.5, "percentile": 99}}}
        """), Catalog.builtIn());
    var e = assertThrows(IllegalArgumentException.class,
        () -> Launch.serving(none, Target.DYNAMO, LaunchOptions.defaults()));
    assertTrue(e.getMessage().startsWith("--emit dynamo: no disaggregated configuration meets"
        + " the SLO"), e.getMessage());
  }

  /** The deployment runs {@code engine}: a frontend on {@code image} and two workers. */
  /**
   * A pool whose experts span replicas (DeepSeek-V3 on H100) is one worker per expert-parallel
   * group: multi-node where the group exceeds a node (the CRD's {@code multinode.nodeCount}, a
   * node's GPUs a pod), attention data-parallel over its replicas, in each engine's words at the
   * pinned commits: vLLM {@code --tensor-parallel-size} tp, {@code --data-parallel-size} ep/tp,
   * {@code --enable-expert-parallel}, DeepEP's kernel per phase, dual-batch overlap where planned;
   * SGLang {@code --tp-size} ep, {@code --dp-size} ep/tp, {@code --enable-dp-attention},
   * {@code --max-running-requests} summed over the replicas, DeepEP's mode per phase, two-batch
   * overlap where planned. TensorRT-LLM workers are refused, naming the pool.
   */
  @Test
  void expertsOverReplicasAreOneWorkerPerGroup() throws IOException {
    ServingPlans.Result r = ServingPlans.plan(Json.parseObject("r",
        io.hyperframes.inference.ServingRequests.DEEPSEEK_H100),
        Catalog.builtIn());
    InferencePlanner.DisaggregatedConfig d = r.plan().disaggregated();
    assertTrue(d.prefill().ep() > d.prefill().tp() && d.decode().ep() > d.decode().tp(),
        d::toString);
    Set<String> vllmKnown = new HashSet<>(LaunchConfigsTest.names("dynamo-vllm-options.txt"));
    vllmKnown.addAll(LaunchConfigsTest.names("vllm-options.txt"));
    LaunchConfigs.Emitted vllm = Launch.serving(r, Target.DYNAMO, LaunchOptions.defaults());
    JsonNode g = LaunchTest.validate(vllm.text()).get(0);
    // The schema reads the multinode block: a misspelt field in it fails.
    assertThrows(AssertionError.class, () -> LaunchTest.validate(vllm.text()
        .replaceFirst("nodeCount:", "nodeCounts:")));
    for (int i = 1; i <= 2; i++) {
      InferencePlanner.PoolConfig pool = i == 1 ? d.prefill() : d.decode();
      List<String> args = workerArgs(g, i, pool, "vllm", vllmKnown, 8);
      assertTrue(args.contains("--tensor-parallel-size=" + pool.tp())
          && args.contains("--data-parallel-size=" + pool.ep() / pool.tp())
          && args.contains("--enable-expert-parallel")
          && args.contains("--max-num-seqs=" + pool.batchLimit())
          && args.contains("--all2all-backend=" + (i == 1 ? "deepep_high_throughput"
              : "deepep_low_latency")), args::toString);
      assertEquals(pool.twoBatchOverlap(), args.contains("--enable-dbo"), args::toString);
    }
    assertTrue(vllm.notes().stream().anyMatch(n -> n.contains("DeepEP")), vllm.notes()::toString);
    Set<String> sglangKnown = LaunchConfigsTest.names("sglang-options.txt");
    LaunchConfigs.Emitted sglang = Launch.serving(r, Target.DYNAMO, LaunchOptions.defaults(),
        Target.SGLANG);
    g = LaunchTest.validate(sglang.text()).get(0);
    for (int i = 1; i <= 2; i++) {
      InferencePlanner.PoolConfig pool = i == 1 ? d.prefill() : d.decode();
      int group = pool.ep() / pool.tp();
      List<String> args = workerArgs(g, i, pool, "sglang", sglangKnown, 8);
      assertEquals(String.valueOf(pool.ep()), args.get(args.indexOf("--tp-size") + 1));
      assertEquals(String.valueOf(group), args.get(args.indexOf("--dp-size") + 1));
      assertEquals(String.valueOf(pool.ep()), args.get(args.indexOf("--ep-size") + 1));
      assertEquals(String.valueOf(pool.batchLimit() * group),
          args.get(args.indexOf("--max-running-requests") + 1));
      assertTrue(args.contains("--enable-dp-attention"), args::toString);
      assertEquals("deepep", args.get(args.indexOf("--moe-a2a-backend") + 1));
      assertEquals(i == 1 ? "normal" : "low_latency", args.get(args.indexOf("--deepep-mode") + 1));
      assertEquals(pool.twoBatchOverlap(), args.contains("--enable-two-batch-overlap"));
    }
    var trtllm = assertThrows(IllegalArgumentException.class, () -> Launch.serving(r,
        Target.DYNAMO, LaunchOptions.defaults(), Target.TRTLLM));
    assertTrue(trtllm.getMessage().startsWith("--emit dynamo --backend trtllm: the plan's"
        + " prefill pool spreads the experts over " + d.prefill().ep() / d.prefill().tp()
        + " replicas"), trtllm.getMessage());
  }

  private static void components(JsonNode g, String engine, String image) {
    assertEquals(engine, g.at("/spec/backendFramework").asText());
    JsonNode components = g.at("/spec/components");
    assertEquals(3, components.size(), g.toString());
    assertEquals("frontend", components.get(0).get("type").asText());
    assertEquals(image, components.get(0).at("/podTemplate/spec/containers/0/image").asText());
  }

  /**
   * Worker {@code i} of deployment {@code g} (1 prefill, 2 decode) is its pool: its type,
   * replicas and GPUs; it runs {@code python3 -m dynamo.ENGINE} with only options in
   * {@code known} ({@code --option=value} read as the option) and its own disaggregation mode.
   * Its arguments.
   */
  private static List<String> workerArgs(JsonNode g, int i, InferencePlanner.PoolConfig pool,
      String engine, Set<String> known) {
    return workerArgs(g, i, pool, engine, known, 8);
  }

  /**
   * As the other, on nodes of {@code perNode} devices: a pool whose experts span ep/tp replicas
   * is one worker per group of ep devices, multi-node where the group exceeds a node.
   */
  private static List<String> workerArgs(JsonNode g, int i, InferencePlanner.PoolConfig pool,
      String engine, Set<String> known, int perNode) {
    JsonNode w = g.at("/spec/components").get(i);
    String type = i == 1 ? "prefill" : "decode";
    assertEquals(type, w.get("type").asText());
    int group = pool.ep() > pool.tp() ? pool.ep() / pool.tp() : 1;
    int gpus = pool.tp() * group;
    assertEquals(pool.replicas() / group, w.get("replicas").asInt());
    assertEquals(gpus > perNode ? gpus / perNode : 0,
        w.path("multinode").path("nodeCount").asInt(0), w::toString);
    JsonNode c = w.at("/podTemplate/spec/containers/0");
    assertEquals("[\"python3\",\"-m\",\"dynamo." + engine + "\"]", c.get("command").toString());
    assertEquals(String.valueOf(Math.min(gpus, perNode)),
        c.at("/resources/limits/nvidia.com~1gpu").asText());
    List<String> args = new ArrayList<>();
    c.get("args").forEach(a -> args.add(a.asText()));
    for (String a : args) {
      if (a.startsWith("--")) {
        String option = a.contains("=") ? a.substring(0, a.indexOf('=')) : a;
        assertTrue(known.contains(option), option + " is not an option of dynamo." + engine
            + " at the pinned commits");
      }
    }
    assertEquals(type, args.get(args.indexOf("--disaggregation-mode") + 1));
    return args;
  }
}
