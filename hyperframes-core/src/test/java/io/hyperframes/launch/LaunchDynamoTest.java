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
      assertEquals("vllm", g.at("/spec/backendFramework").asText());
      JsonNode components = g.at("/spec/components");
      assertEquals(3, components.size(), e.text());
      assertEquals("frontend", components.get(0).get("type").asText());
      for (int i = 1; i <= 2; i++) {
        JsonNode w = components.get(i);
        String type = w.get("type").asText();
        InferencePlanner.PoolConfig pool = type.equals("prefill") ? d.prefill() : d.decode();
        assertEquals(i == 1 ? "prefill" : "decode", type);
        assertEquals(pool.replicas(), w.get("replicas").asInt());
        JsonNode c = w.at("/podTemplate/spec/containers/0");
        assertEquals(String.valueOf(pool.tp()), c.at("/resources/limits/nvidia.com~1gpu")
            .asText());
        List<String> args = new ArrayList<>();
        c.get("args").forEach(a -> args.add(a.asText()));
        for (String a : args) {
          if (a.startsWith("--")) {
            String option = a.contains("=") ? a.substring(0, a.indexOf('=')) : a;
            assertTrue(known.contains(option), option + " is not an option of dynamo.vllm or of"
                + " vLLM's engine at the pinned commits");
          }
        }
        assertEquals(type, args.get(args.indexOf("--disaggregation-mode") + 1));
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
      assertEquals("sglang", g.at("/spec/backendFramework").asText());
      JsonNode components = g.at("/spec/components");
      assertEquals(3, components.size(), e.text());
      assertEquals(Manifests.DYNAMO_SGLANG_IMAGE,
          components.get(0).at("/podTemplate/spec/containers/0/image").asText());
      for (int i = 1; i <= 2; i++) {
        JsonNode w = components.get(i);
        String type = w.get("type").asText();
        assertEquals(i == 1 ? "prefill" : "decode", type);
        InferencePlanner.PoolConfig pool = type.equals("prefill") ? d.prefill() : d.decode();
        assertEquals(pool.replicas(), w.get("replicas").asInt());
        JsonNode c = w.at("/podTemplate/spec/containers/0");
        assertEquals("[\"python3\",\"-m\",\"dynamo.sglang\"]", c.get("command").toString());
        List<String> args = new ArrayList<>();
        c.get("args").forEach(a -> args.add(a.asText()));
        for (String a : args) {
          if (a.startsWith("--")) {
            assertTrue(known.contains(a), a + " is not an option of SGLang's server at the"
                + " pinned commit");
          }
        }
        assertEquals(type, args.get(args.indexOf("--disaggregation-mode") + 1));
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
    var trt = assertThrows(IllegalArgumentException.class, () -> Launch.serving(any,
        Target.DYNAMO, LaunchOptions.defaults(), Target.TRTLLM));
    assertEquals("--backend: Dynamo workers are emitted for vllm or sglang, not trtllm",
        trt.getMessage());
    var vllm = assertThrows(IllegalArgumentException.class, () -> Launch.serving(any,
        Target.VLLM, LaunchOptions.defaults(), Target.SGLANG));
    assertEquals("--backend: only with --emit dynamo (the engine of its workers), not with"
        + " --emit vllm", vllm.getMessage());
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
}
