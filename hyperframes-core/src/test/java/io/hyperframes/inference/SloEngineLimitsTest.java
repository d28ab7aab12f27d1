package io.hyperframes.inference;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.hyperframes.HyperFrames;
import io.hyperframes.catalog.Catalog;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * SLO mode with an engine's batch limit ({@code workload.maxNumSeqs}) and a TPOT target at a
 * percentile of the requests ({@code workload.latencySlo.tpotPercentile}), as MLPerf's server
 * rules state theirs: the limit is the simulated server's, the KV cache bounding it; the rate
 * found meets the percentile target and a little more does not; every bad value named.
 */
class SloEngineLimitsTest {

  static InferenceRequest parse(String slo, String extra) {
    return Serving.parse(SloModeTest.request(slo, extra), Catalog.builtIn());
  }

  static IllegalArgumentException bad(String json) {
    return assertThrows(IllegalArgumentException.class,
        () -> Serving.evaluate(Serving.parse(json, Catalog.builtIn())));
  }

  @Test
  void theBatchLimitIsTheEnginesBoundedByTheKvCache() {
    SloEstimate byDefault = Serving.evaluate(parse("\"tpotSeconds\": 0.05", "")).slo();
    assertEquals(256, byDefault.batchLimit());
    InferenceRequest narrow = parse("\"tpotSeconds\": 0.05", ", \"maxNumSeqs\": 32");
    assertEquals(32, narrow.workload().maxNumSeqs());
    SloEstimate s = Serving.evaluate(narrow).slo();
    assertEquals(32, s.batchLimit());
    assertEquals(32, SloModeTest.load(narrow).batchLimit());
    // A narrower server holds fewer sequences: its full-batch capacity is lower.
    assertTrue(s.capacityRequestsPerSecond() < byDefault.capacityRequestsPerSecond(),
        () -> s + " against " + byDefault);
    // Wider than the KV cache holds: the cache is the bound.
    InferenceRequest wide = parse("\"tpotSeconds\": 0.5", ", \"maxNumSeqs\": 16384");
    long fit = InferenceEstimator.analytical().estimate(wide.model(),
        wide.cluster().withDevices(wide.tp()), wide.workload().withBatchSize(1), wide.tp(), 1, 1)
        .maxBatchSize();
    assertTrue(fit > 256 && fit < 16384, () -> "fit " + fit);
    assertEquals(fit, SloModeTest.load(wide).batchLimit());
    JsonNode json = Serving.toJson(Serving.evaluate(narrow)).get("slo");
    assertEquals(32, json.get("batchLimit").asInt());
    assertEquals(0.0, json.get("tpotPercentile").asDouble());
  }

  @Test
  void aServingPlanTriesTheEnginesLimitWidestFirst() {
    InferenceWorkload w = parse("\"tpotSeconds\": 0.05", "").workload();
    assertArrayEquals(InferencePlanner.BATCH_LIMITS, InferencePlanner.batchLimits(w));
    assertArrayEquals(new int[] {100, 64, 32, 16}, InferencePlanner.batchLimits(
        parse("\"tpotSeconds\": 0.05", ", \"maxNumSeqs\": 100").workload()));
    assertArrayEquals(new int[] {1024, 256, 128, 64, 32, 16}, InferencePlanner.batchLimits(
        parse("\"tpotSeconds\": 0.05", ", \"maxNumSeqs\": 1024").workload()));
  }

  @Test
  void aRequestRateInModeFixedRunsTheSameLimit() {
    String fixed = SloModeTest.request("\"ttftSeconds\": 1.0", ", \"arrivalRatePerSecond\": 4")
        .replace("\"mode\": \"slo\", ", "\"batchSize\": 8, ");
    InferenceResult byDefault = Serving.evaluate(Serving.parse(fixed, Catalog.builtIn()));
    InferenceResult narrow = Serving.evaluate(Serving.parse(
        fixed.replace("\"batchSize\": 8, ", "\"batchSize\": 8, \"maxNumSeqs\": 16, "),
        Catalog.builtIn()));
    assertTrue(narrow.capacityPerSecond() < byDefault.capacityPerSecond(),
        () -> narrow + " against " + byDefault);
  }

  @Test
  void theTpotTargetAtAPercentileIsMetAndALittleMoreLoadMissesIt() {
    InferenceRequest r = parse("\"tpotSeconds\": 0.05, \"tpotPercentile\": 99", "");
    SloEstimate s = Serving.evaluate(r).slo();
    assertTrue(s.feasible(), s::toString);
    assertEquals(99, s.tpotPercentile());
    assertEquals("tpot", s.limitedBy());
    ServingLoad load = SloModeTest.load(r);
    double perReplica = s.requestsPerSecond() / r.replicas();
    ServingLoad.Percentiles q = load.simulate(perReplica, Serving.SIMULATED_REQUESTS,
        Serving.SEED);
    assertEquals(q.tpotAt(99), s.tpotSeconds(), 1e-12);
    assertTrue(s.tpotSeconds() <= 0.05, s::toString);
    double above = perReplica * (1 + 2 * SloSearch.RELATIVE_TOLERANCE);
    assertTrue(load.simulate(above, Serving.SIMULATED_REQUESTS, Serving.SEED).tpotAt(99) > 0.05);
    // The 99th percentile of the requests' TPOT is never below their median: the rate that
    // meets a target at p99 is never above the one that meets it at p50.
    SloEstimate median = Serving.evaluate(
        parse("\"tpotSeconds\": 0.05, \"tpotPercentile\": 50", "")).slo();
    assertTrue(s.requestsPerSecond() <= median.requestsPerSecond(),
        () -> s + " against " + median);
    assertTrue(q.tpotAt(99) >= q.tpotAt(50));
  }

  @Test
  void everyRequestsTpotIsItsDecodeOverItsTokens() {
    // Two prompts, one token each to prefill in 1 s, then decodes of 0.1 s for one sequence and
    // 0.2 s for two: both arrive at once (a rate far above the service), so both decode
    // together for three steps, 0.2 s each.
    ServingLoad load = new ServingLoad(new double[] {0, 1.0, 1.0}, new double[] {0, 0.1, 0.2},
        4);
    ServingLoad.Percentiles q = load.simulate(1e9, 100, 7);
    assertEquals(0.2, q.tpotAt(50), 1e-9);
    ServingLoad.Percentiles analytical = new ServingLoad.Percentiles(1, 1, 1, 1, 1, 1, x -> x);
    assertThrows(IllegalStateException.class, () -> analytical.tpotAt(99));
    assertThrows(IllegalArgumentException.class, () -> q.tpotAt(100));
  }

  @Test
  void theBuilderAsksTheSameQuestion() {
    InferenceResult json = Serving.evaluate(parse(
        "\"ttftSeconds\": 1.0, \"tpotSeconds\": 0.05, \"tpotPercentile\": 99",
        ", \"maxNumSeqs\": 128"));
    InferenceResult built = HyperFrames.serve().model("llama3-70b")
        .accelerator("h100-sxm-80gb").devices(8).precision("fp8").kvCachePrecision("fp8")
        .prompt(1000).output(250).mode("slo").maxNumSeqs(128)
        .latencySlo(Duration.ofSeconds(1), 99).timePerOutputToken(Duration.ofMillis(50))
        .tpotPercentile(99).layout(l -> l.tp(4).dp(2)).run();
    assertEquals(json.slo(), built.slo());
  }

  @Test
  void badValuesAreNamed() {
    assertTrue(bad(SloModeTest.request("\"tpotSeconds\": 0.05", ", \"maxNumSeqs\": 0"))
        .getMessage().startsWith("workload.maxNumSeqs: must be > 0, got 0"));
    assertTrue(bad(SloModeTest.request("\"tpotSeconds\": 0.05", ", \"maxNumSeqs\": 16385"))
        .getMessage().startsWith("workload.maxNumSeqs: must be in [1, 16384]"));
    assertTrue(bad(SloModeTest.request("\"tpotSeconds\": 0.05", ", \"maxNumSeqs\": 64")
        .replace("\"mode\": \"slo\", ", "\"batchSize\": 8, ")).getMessage()
        .startsWith("workload.maxNumSeqs: the batch limit of a server under load needs"
            + " workload.arrivalRatePerSecond"));
    assertTrue(bad(SloModeTest.request("\"tpotSeconds\": 0.05, \"tpotPercentile\": 100", ""))
        .getMessage().startsWith("workload.latencySlo.tpotPercentile: must be in (0, 100)"));
    assertTrue(bad(SloModeTest.request("\"tpotSeconds\": 0.05, \"tpotPercentile\": -1", ""))
        .getMessage().startsWith("workload.latencySlo.tpotPercentile: must be > 0"));
    assertTrue(bad(SloModeTest.request("\"tpotSeconds\": 0.05, \"tpotPercentile\": 99", "")
        .replace("\"mode\": \"slo\", ", "\"batchSize\": 8, ")).getMessage()
        .startsWith("workload.latencySlo.tpotPercentile: read in workload.mode slo"));
  }
}
