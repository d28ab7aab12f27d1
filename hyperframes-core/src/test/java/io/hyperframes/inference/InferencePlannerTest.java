package io.hyperframes.inference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.hyperframes.catalog.Catalog;
import io.hyperframes.json.Json;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The serving planner meets the SLO with the fewest devices, or says none does. */
class InferencePlannerTest {

  static final String REQUEST = """
      {"model": {"catalog": "llama2-7b"}, "cluster": {"accelerator": "a100-sxm-80gb",
       "devices": 1}, "workload": {"type": "inference", "precision": "fp16", "batchSize": 1,
       "promptTokens": 512, "outputTokens": 128, "arrivalRatePerSecond": 30,
       "latencySlo": {"ttftSeconds": 0.3, "tpotSeconds": 0.04, "percentile": 99}},
       "constraints": {"weightFormats": ["fp16", "int8"], "kvFormats": ["fp16"]}}
      """;

  /**
   * A dense model no node holds (Llama 3.1 405B in BF16 on H100: 810 GB against a node's 640)
   * is served by replicas of pipeline stages over nodes, each stage a node, each replica
   * keeping one batch in flight a stage; the plan's best is what {@code serve} estimates for
   * its layout (layout.pp) under the same rate.
   */
  @Test
  void aDenseModelNoNodeHoldsIsServedByPipelineStagesOverNodes() {
    var result = ServingPlans.plan(Json.parseObject("r", ServingRequests.LLAMA_405B_BF16),
        Catalog.builtIn());
    InferencePlanner.Config best = result.plan().best();
    assertNotNull(best, () -> result.plan().findings().toString());
    assertEquals(8, best.tp());
    assertTrue(best.pp() >= 2, best::toString);
    assertEquals(best.tp() * best.pp() * best.replicas(), best.devices());
    assertTrue(result.plan().findings().stream().noneMatch(f -> f.id().equals("no-replica-fits")
        || f.id().equals("slo-unreachable")), () -> result.plan().findings().toString());
    var json = ServingPlans.toJson(result);
    assertEquals(best.pp(), json.get("best").get("pp").asInt());
    assertEquals(best.pp(), json.get("layout").get("pp").asInt());
    // The same layout served under the rate: a server per batch in flight, the plan's queue.
    InferenceRequest r = result.request();
    InferenceResult served = Serving.evaluate(new InferenceRequest(r.model(),
        r.cluster().withDevices(best.devices()), r.workload().withFormats(best.weights(),
            best.kvCache()).withBatchSize(Math.min(r.workload().batchSize(), best.batchLimit())),
        best.tp(), best.ep(), best.pp(), best.replicas()));
    assertTrue(served.estimate().feasible(), served.estimate()::toString);
    assertEquals(json.get("inference"), Serving.toJson(served).get("inference"));
    assertTrue(Serving.meets(best.load(), r.workload()));
    assertTrue(ServingPlans.describe(best).contains("tp 8 pp " + best.pp() + " over "
        + best.pp() + " nodes × " + best.replicas() + " replica"), ServingPlans.describe(best));
    // The front: every point a pipeline, its tokens per GPU those of all pp batches in flight.
    var front = result.plan().pareto();
    assertFalse(front.isEmpty());
    InferencePlanner.FrontPoint first = front.get(0);
    assertEquals(List.of(8, 2, 1), List.of(first.tp(), first.pp(), first.batch()),
        first::toString);
    InferenceEstimate one = InferenceEstimator.analytical().estimate(r.model(),
        r.cluster().withDevices(16), r.workload().withBatchSize(1), 8, 1, 2, 1);
    assertEquals(2 * one.outputTokensPerSecondPerDevice(), first.tokensPerSecondPerGpu(), 1e-9);
    assertEquals(1 / one.tpotSeconds(), first.tokensPerSecondPerUser(), 1e-9);
    assertTrue(front.stream().allMatch(p -> p.pp() >= 2), front::toString);
    assertEquals(2, json.get("pareto").get(0).get("pp").asInt());
  }

  /**
   * A model no replica of up to eight nodes holds (about 10 T parameters) has no replica to
   * try: the plan says that memory is the reason, with the widest replica's estimate as
   * evidence, instead of advising to relax the SLO.
   */
  @Test
  void aModelNoEightNodesHoldIsRefusedForMemoryNotTheSlo() {
    String huge = ServingRequests.LLAMA_405B_BF16.replace("{\"catalog\": \"llama3.1-405b\"}",
        "{\"name\": \"huge\", \"layers\": 200, \"hidden\": 65536, \"heads\": 512,"
            + " \"ffnHidden\": 262144, \"vocab\": 128256, \"seqLen\": 8192}");
    var result = ServingPlans.plan(Json.parseObject("r", huge), Catalog.builtIn());
    assertNull(result.plan().best());
    assertEquals(java.util.List.of("no-replica-fits"),
        result.plan().findings().stream().map(f -> f.id()).toList());
    var finding = result.plan().findings().get(0);
    assertTrue(finding.title().startsWith("no replica of up to 8 nodes of 8 × h100-sxm-80gb"
        + " (tp 8, pp up to 8) holds huge in bf16 weights"), finding.title());
    assertTrue(finding.evidence().startsWith("memory: ") && finding.evidence().contains(
        "exceeds the 79.7 GiB of h100-sxm-80gb"), finding.evidence());
    assertEquals(finding.title(), ServingPlans.toJson(result).get("reasons").get(0).asText());
  }


  @Test
  void bestMeetsTheSloWithTheFewestDevices() {
    var result = ServingPlans.plan(Json.parseObject("r", REQUEST), Catalog.builtIn());
    InferencePlanner.Config best = result.plan().best();
    assertNotNull(best);
    InferenceWorkload w = result.request().workload();
    assertTrue(Serving.meets(best.load(), w), "best does not meet the SLO");
    for (InferencePlanner.Config c : result.plan().alternatives()) {
      assertTrue(c.devices() >= best.devices());
    }
    var json = ServingPlans.toJson(result);
    assertTrue(json.get("feasible").asBoolean());
    assertTrue(json.has("inference") && json.has("best") && json.has("alternatives"));
    assertTrue(json.get("best").get("usdPerMillionTokens").asDouble() > 0);
  }

  /**
   * The front spans the searched configurations from batch 1 (most tokens per user) to the
   * batch that gives the most per GPU, each point the estimate of its configuration at its batch,
   * and it is in the JSON; an unreachable SLO leaves the front, every point missing the targets.
   */
  @Test
  void thePlanCarriesTheThroughputInteractivityFront() {
    var result = ServingPlans.plan(Json.parseObject("r", REQUEST), Catalog.builtIn());
    var front = result.plan().pareto();
    assertTrue(front.size() >= 2, front::toString);
    InferencePlanner.FrontPoint first = front.get(0);
    InferencePlanner.FrontPoint last = front.get(front.size() - 1);
    assertEquals(1, first.batch(), "the most interactive point runs one sequence");
    assertTrue(last.batch() > 1 && last.tokensPerSecondPerGpu() > first.tokensPerSecondPerGpu());
    var r = result.request();
    InferenceEstimate e = InferenceEstimator.analytical().estimate(r.model(),
        r.cluster().withDevices(last.tp()), r.workload().withFormats(last.weights(),
            last.kvCache()).withBatchSize(last.batch()), last.tp(), last.ep(), 1, 1);
    assertEquals(e.outputTokensPerSecondPerDevice(), last.tokensPerSecondPerGpu(), 1e-9);
    assertEquals(1 / e.tpotSeconds(), last.tokensPerSecondPerUser(), 1e-9);
    assertEquals(e.ttftSeconds() <= 0.3 && e.tpotSeconds() <= 0.04, last.meetsLatencyTargets());
    var json = ServingPlans.toJson(result);
    assertEquals(front.size(), json.get("pareto").size());
    assertEquals(last.batch(), json.get("pareto").get(front.size() - 1).get("batch").asInt());
    var unreachable = ServingPlans.plan(Json.parseObject("r", REQUEST.replace(
        "\"ttftSeconds\": 0.3", "\"ttftSeconds\": 0.0001")), Catalog.builtIn());
    assertTrue(!unreachable.plan().pareto().isEmpty()
        && unreachable.plan().pareto().stream().noneMatch(
            InferencePlanner.FrontPoint::meetsLatencyTargets));
    assertEquals(unreachable.plan().pareto().size(),
        ServingPlans.toJson(unreachable).get("pareto").size());
    assertTrue(ServingPlans.describe(last).contains("batch " + last.batch()));
    IllegalArgumentException none = assertThrows(IllegalArgumentException.class,
        () -> ServingPlans.describe((InferencePlanner.FrontPoint) null));
    assertEquals("point: must be given", none.getMessage());
  }

  @Test
  void anUnreachableSloIsReportedNotThrown() {
    var result = ServingPlans.plan(Json.parseObject("r", REQUEST.replace(
        "\"ttftSeconds\": 0.3", "\"ttftSeconds\": 0.0001")), Catalog.builtIn());
    assertNull(result.plan().best());
    assertTrue(result.plan().findings().stream().anyMatch(f -> f.id().equals("slo-unreachable")));
    var json = ServingPlans.toJson(result);
    assertTrue(!json.get("feasible").asBoolean());
  }

  @Test
  void planningNeedsARateAndAnSlo() {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> ServingPlans.plan(Json.parseObject("r", REQUEST.replace(
            "\"arrivalRatePerSecond\": 30,", "")), Catalog.builtIn()));
    assertTrue(e.getMessage().startsWith("workload.arrivalRatePerSecond"), e.getMessage());
  }
}
