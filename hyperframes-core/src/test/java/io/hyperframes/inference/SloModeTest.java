package io.hyperframes.inference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.hyperframes.HyperFrames;
import io.hyperframes.catalog.Catalog;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * SLO mode ({@code workload.mode: slo}): the highest rate whose simulated latencies meet the
 * targets, bracketed by the bisection; tighter targets never raise it; every bad field named.
 */
class SloModeTest {

  static final String REQUEST = """
      {"model": {"catalog": "llama3-70b"},
       "cluster": {"accelerator": "h100-sxm-80gb", "devices": 8},
       "workload": {"type": "inference", "mode": "slo", "precision": "fp8",
                    "kvCachePrecision": "fp8", "promptTokens": 1000, "outputTokens": 250,
                    "latencySlo": {SLO} EXTRA},
       "layout": {"tp": 4, "dp": 2}}
      """;

  static String request(String slo, String extra) {
    return REQUEST.replace("SLO", slo).replace("EXTRA", extra);
  }

  static InferenceResult run(String json) {
    return Serving.evaluate(Serving.parse(json, Catalog.builtIn()));
  }

  static IllegalArgumentException bad(String json) {
    return assertThrows(IllegalArgumentException.class, () -> run(json));
  }

  /** The one-replica load model the search bisects on, for the request's workload. */
  static ServingLoad load(InferenceRequest r) {
    return ServingLoads.loadToFit(InferenceEstimator.analytical(), r.model(),
        r.cluster().withDevices(r.tp() * r.pp()), r.workload(), r.tp(), r.ep(), r.pp());
  }

  @Test
  void theRateFoundMeetsTheSloAndABitMoreDoesNot() {
    for (String slo : new String[] {"\"ttftSeconds\": 1.0, \"tpotSeconds\": 0.05",
        "\"ttftSeconds\": 0.15, \"percentile\": 90", "\"tpotSeconds\": 0.03"}) {
      InferenceRequest r = Serving.parse(request(slo, ""), Catalog.builtIn());
      SloEstimate s = Serving.evaluate(r).slo();
      assertTrue(s.feasible(), s::toString);
      ServingLoad load = load(r);
      double perReplica = s.requestsPerSecond() / r.replicas();
      assertTrue(Serving.meetsSlo(load, r.workload(), perReplica), slo);
      double above = perReplica * (1 + 2 * SloSearch.RELATIVE_TOLERANCE);
      assertTrue(s.limitedBy().equals("capacity") || !Serving.meetsSlo(load, r.workload(), above),
          () -> slo + ": " + s);
      assertEquals(s.requestsPerSecond() * 250, s.outputTokensPerSecond(), 1e-9);
      assertEquals(s.outputTokensPerSecond() / 8, s.outputTokensPerSecondPerDevice(), 1e-9);
      assertEquals(s.requestsPerSecond() / s.capacityRequestsPerSecond(), s.shareOfCapacity(),
          1e-12);
      assertTrue(s.shareOfCapacity() > 0 && s.shareOfCapacity() < 1, s::toString);
    }
  }

  @Test
  void tighterTargetsNeverRaiseTheRate() {
    double previous = Double.MAX_VALUE;
    for (String tpot : new String[] {"0.08", "0.05", "0.03", "0.02"}) {
      SloEstimate s = run(request("\"tpotSeconds\": " + tpot, "")).slo();
      assertTrue(s.requestsPerSecond() <= previous, () -> tpot + ": " + s);
      previous = s.requestsPerSecond();
    }
    previous = Double.MAX_VALUE;
    for (String ttft : new String[] {"2.0", "0.5", "0.2", "0.1"}) {
      SloEstimate s = run(request("\"ttftSeconds\": " + ttft, "")).slo();
      assertTrue(s.requestsPerSecond() <= previous, () -> ttft + ": " + s);
      previous = s.requestsPerSecond();
    }
  }

  @Test
  void aTargetNoLoadMeetsSaysWhy() {
    InferenceResult r = run(request("\"ttftSeconds\": 0.001", ""));
    SloEstimate s = r.slo();
    assertFalse(s.feasible());
    assertEquals(0, s.requestsPerSecond());
    assertEquals("ttft", s.limitedBy());
    assertTrue(s.reasons().get(0).startsWith("latencySlo: not met even at"), s::toString);
    JsonNode json = Serving.toJson(r).get("slo");
    assertFalse(json.get("feasible").asBoolean());
  }

  @Test
  void theJsonNamesEveryField() {
    JsonNode json = Serving.toJson(run(request("\"ttftSeconds\": 1.0, \"tpotSeconds\": 0.05",
        "")));
    for (String f : java.util.List.of("feasible", "ttftSloSeconds", "tpotSloSeconds",
        "percentile", "requestsPerSecond", "outputTokensPerSecond",
        "outputTokensPerSecondPerDevice", "capacityRequestsPerSecond", "shareOfCapacity",
        "ttftSeconds", "tpotSeconds", "p50LatencySeconds", "p99LatencySeconds", "limitedBy")) {
      assertTrue(json.get("slo").has(f), f);
    }
    assertFalse(json.has("capacity"));
    assertNull(run(request("\"ttftSeconds\": 1.0", "").replace("\"mode\": \"slo\", ",
        "\"batchSize\": 8, ")).slo());
  }

  @Test
  void theBuilderAsksTheSameQuestion() {
    InferenceResult json = run(request("\"ttftSeconds\": 1.0, \"tpotSeconds\": 0.05", ""));
    InferenceResult built = HyperFrames.serve().model("llama3-70b")
        .accelerator("h100-sxm-80gb").devices(8).precision("fp8").kvCachePrecision("fp8")
        .prompt(1000).output(250).mode("slo")
        .latencySlo(Duration.ofSeconds(1), 99).timePerOutputToken(Duration.ofMillis(50))
        .layout(l -> l.tp(4).dp(2)).run();
    assertEquals(json.slo(), built.slo());
  }

  @Test
  void badFieldsAreNamed() {
    assertEquals("workload.latencySlo: slo mode needs a target, ttftSeconds or tpotSeconds (or"
        + " both)", bad(request("\"percentile\": 99", "")).getMessage());
    assertTrue(bad(request("\"ttftSeconds\": 1.0", ", \"arrivalRatePerSecond\": 5"))
        .getMessage().startsWith("workload.arrivalRatePerSecond: slo mode finds the highest"
            + " rate"));
    assertTrue(bad(request("\"ttftSeconds\": 1.0", ", \"maxNumTokens\": 64")).getMessage()
        .startsWith("workload.maxNumTokens: needs workload.mode capacity, or workload.engine"
            + " in mode slo (got 64 with mode slo)"));
    assertTrue(bad(request("\"ttftSeconds\": 1.0", "").replace("\"promptTokens\": 1000",
        "\"promptTokens\": [[1000, 1]]")).getMessage().startsWith("workload.promptTokens: a"
            + " length distribution needs workload.mode capacity"));
    assertTrue(bad(request("\"ttftSeconds\": 1.0", "").replace("\"slo\"", "\"best\""))
        .getMessage().equals("workload.mode: unknown mode 'best' (fixed, capacity, slo)"));
  }
}
