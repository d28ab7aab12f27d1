package io.hyperframes.inference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.hyperframes.catalog.Catalog;
import org.junit.jupiter.api.Test;

/**
 * SLO mode on an engine's scheduler ({@code workload.engine}, {@link EngineLoad}): the rate found
 * meets the targets and a little more does not; the full-load bracket and the places are capacity
 * mode's; a lone request takes exactly the iterations the scheduler builds (one mixed or prefill
 * iteration, or a chunk each, to its first token, then one per token); tighter targets never
 * raise the rate; every refusal named.
 */
class SloSchedulerTest {

  static String request(String engine, String slo, String extra) {
    return SloModeTest.request(slo, ", \"engine\": \"" + engine + "\"" + extra);
  }

  static InferenceRequest parse(String json) {
    return Serving.parse(json, Catalog.builtIn());
  }

  static EngineLoad load(InferenceRequest r) {
    InferenceEstimator estimator = InferenceEstimator.analytical();
    return new EngineLoad(estimator, r, r.capacity(), Capacity.estimate(estimator, r,
        r.capacity()));
  }

  @Test
  void theRateFoundMeetsTheSloOnEachScheduler() {
    for (String engine : new String[] {"vllm", "trtllm", "sglang"}) {
      InferenceRequest r = parse(request(engine, "\"ttftSeconds\": 1.0, \"tpotSeconds\": 0.05,"
          + " \"tpotPercentile\": 99", ""));
      SloEstimate s = Serving.evaluate(r).slo();
      assertTrue(s.feasible(), s::toString);
      assertEquals(engine, s.scheduler());
      EngineLoad load = load(r);
      assertEquals(load.batchLimit(), s.batchLimit());
      double perReplica = s.requestsPerSecond() / r.replicas();
      assertTrue(Serving.meets(load.simulate(perReplica, Serving.SIMULATED_REQUESTS,
          Serving.SEED), r.workload()), () -> engine + ": " + s);
      double above = perReplica * (1 + 2 * SloSearch.RELATIVE_TOLERANCE);
      assertTrue(s.limitedBy().equals("capacity") || !Serving.meets(load.simulate(above,
          Serving.SIMULATED_REQUESTS, Serving.SEED), r.workload()), () -> engine + ": " + s);
      // The full-load bracket and the places are capacity mode's for the same scheduler.
      CapacityEstimate c = Serving.evaluate(parse(request(engine, "\"ttftSeconds\": 1.0", "")
          .replace("\"slo\"", "\"capacity\""))).capacity();
      assertEquals(c.requestsPerSecond(), s.capacityRequestsPerSecond(), 1e-9 * c
          .requestsPerSecond());
      assertEquals((int) Math.floor(c.concurrency()), s.batchLimit());
      assertTrue(s.requestsPerSecond() <= s.capacityRequestsPerSecond() * (1 + 1e-12));
      assertFalse(Serving.toJson(Serving.evaluate(r)).has("capacity"));
    }
  }

  @Test
  void aLoneRequestTakesTheIterationsItsSchedulerBuilds() {
    InferenceEstimator estimator = InferenceEstimator.analytical();
    for (String engine : new String[] {"vllm", "trtllm", "sglang"}) {
      InferenceRequest r = parse(request(engine, "\"tpotSeconds\": 0.05", ""));
      EngineLoad load = load(r);
      double path = estimator.estimate(r.model(), r.cluster().withDevices(r.tp()),
          r.workload().withBatchSize(1), r.tp(), 1, 1, 1).requestSeconds();
      // Arrivals a thousand seconds apart: a request finds the server idle (all but a few).
      ServingLoad.Percentiles q = load.simulate(1e-3, 200, 3);
      assertEquals(load.iterationSeconds(0, 1) + path, q.ttftAt(50), 1e-9, engine);
      assertEquals(load.iterationSeconds(1, 0), q.tpotAt(50), 1e-9, engine);
    }
    // A 1000-token prompt over a budget of 384 tokens: chunks of 384, 384 and 232.
    InferenceRequest r = parse(request("vllm", "\"tpotSeconds\": 0.05",
        ", \"maxNumTokens\": 384, \"chunkedPrefill\": true"));
    EngineLoad load = load(r);
    double path = estimator.estimate(r.model(), r.cluster().withDevices(r.tp()),
        r.workload().withBatchSize(1), r.tp(), 1, 1, 1).requestSeconds();
    double chunks = 2 * load.iterationSeconds(0, 0.384) + load.iterationSeconds(0, 0.232);
    assertEquals(chunks + path, load.simulate(1e-3, 200, 3).ttftAt(50), 1e-9);
  }

  @Test
  void eachRequestDrawsItsLengthsFromTheDistributions() {
    InferenceEstimator estimator = InferenceEstimator.analytical();
    String slo = "\"tpotSeconds\": 0.05, \"tpotPercentile\": 99";
    // One length given as a distribution is the same question as the number.
    assertEquals(Serving.evaluate(parse(request("vllm", slo, ""))).slo(),
        Serving.evaluate(parse(request("vllm", slo, "").replace("\"promptTokens\": 1000",
            "\"promptTokens\": [[1000, 1]]"))).slo());
    // Prompts of 500 and 1500 tokens, as many of each: a lone request's first token takes the
    // iteration of its own prompt, half a mean prompt or one and a half.
    InferenceRequest r = parse(request("vllm", slo, "").replace("\"promptTokens\": 1000",
        "\"promptTokens\": [[500, 1], [1500, 1]]").replace("\"outputTokens\": 250",
        "\"outputTokens\": [[100, 1], [400, 1]]"));
    EngineLoad load = load(r);
    double path = estimator.estimate(r.model(), r.cluster().withDevices(r.tp()),
        r.workload().withBatchSize(1), r.tp(), 1, 1, 1).requestSeconds();
    ServingLoad.Percentiles q = load.simulate(1e-3, 400, 3);
    assertEquals(load.iterationSeconds(0, 0.5) + path, q.ttftAt(20), 1e-9);
    assertEquals(load.iterationSeconds(0, 1.5) + path, q.ttftAt(80), 1e-9);
    assertEquals(load.iterationSeconds(1, 0), q.tpotAt(50), 1e-9);
    // Outputs of 100 and 400 tokens: the median latency is one of the two.
    double shortRun = load.iterationSeconds(0, 0.5) + path + 99 * load.iterationSeconds(1, 0);
    assertTrue(q.p99() > 3 * shortRun, q::toString);
    SloEstimate s = Serving.evaluate(r).slo();
    assertTrue(s.feasible(), s::toString);
    assertEquals(s.requestsPerSecond() * 250, s.outputTokensPerSecond(), 1e-9
        * s.outputTokensPerSecond());
    // Without an engine a distribution is refused, by name.
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> parse(
        SloModeTest.request(slo, "").replace("\"promptTokens\": 1000",
            "\"promptTokens\": [[1000, 1]]")));
    assertTrue(e.getMessage().startsWith("workload.promptTokens: a length distribution needs"
        + " workload.mode capacity, or workload.engine in mode slo"), e.getMessage());
  }

  @Test
  void aPromptTheBudgetCannotHoldIsRefusedWithoutChunking() {
    SloEstimate s = Serving.evaluate(parse(request("trtllm", "\"tpotSeconds\": 0.05",
        ", \"maxNumTokens\": 512, \"chunkedPrefill\": false"))).slo();
    assertFalse(s.feasible());
    assertTrue(s.reasons().get(0).startsWith("workload.maxNumTokens: the longest prompt (1000"
        + " tokens) exceeds the budget of 512"), s::toString);
    assertEquals("memory", s.limitedBy());
  }

  @Test
  void tighterTargetsNeverRaiseTheRate() {
    double previous = Double.MAX_VALUE;
    for (String tpot : new String[] {"0.2", "0.08", "0.05", "0.03"}) {
      SloEstimate s = Serving.evaluate(parse(request("trtllm", "\"tpotSeconds\": " + tpot
          + ", \"tpotPercentile\": 99", ""))).slo();
      assertTrue(s.requestsPerSecond() <= previous, () -> tpot + ": " + s);
      previous = s.requestsPerSecond();
    }
  }

  @Test
  void badFieldsAreNamed() {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> parse(
        SloModeTest.request("\"tpotSeconds\": 0.05", ", \"maxNumTokens\": 512")));
    assertTrue(e.getMessage().startsWith("workload.maxNumTokens: needs workload.mode capacity,"
        + " or workload.engine in mode slo (got 512 with mode slo)"), e.getMessage());
    e = assertThrows(IllegalArgumentException.class, () -> parse(request("trtllm",
        "\"tpotSeconds\": 0.05", ", \"engineSettings\": \"trtllm-bench\"")));
    assertTrue(e.getMessage().startsWith("workload.engineSettings: needs workload.mode capacity"
        + " (got trtllm-bench with mode slo)"), e.getMessage());
    e = assertThrows(IllegalArgumentException.class, () -> parse(request("vllm",
        "\"tpotSeconds\": 0.05", "").replace("\"tp\": 4, \"dp\": 2",
        "\"tp\": 4, \"pp\": 2, \"dp\": 1")));
    assertTrue(e.getMessage().startsWith("layout.pp: workload.engine in slo mode simulates"
        + " replicas of one pipeline stage"), e.getMessage());
    e = assertThrows(IllegalArgumentException.class, () -> parse(request("vllm",
        "\"tpotSeconds\": 0.05", ", \"speculative\": {\"method\": \"mtp\", \"tokens\": 1,"
            + " \"acceptance\": 0.5}")));
    assertTrue(e.getMessage().startsWith("workload.speculative: not simulated with"
        + " workload.engine in slo mode"), e.getMessage());
  }
}
