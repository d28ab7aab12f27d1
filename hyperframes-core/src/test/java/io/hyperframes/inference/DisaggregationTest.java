package io.hyperframes.inference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.hyperframes.catalog.Catalog;
import io.hyperframes.hardware.Cluster;
import io.hyperframes.json.Json;
import io.hyperframes.model.TransformerSpec;
import io.hyperframes.precision.NumberFormat;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/**
 * Disaggregated serving and experts over several replicas (ep &gt; tp): what each pool holds and
 * sustains, the batches the SLO targets set, the pair's rate, the balanced split, and every
 * refusal named.
 */
class DisaggregationTest {

  private static final Catalog CATALOG = Catalog.builtIn();
  private static final InferenceEstimator ESTIMATOR = InferenceEstimator.analytical();
  private static final TransformerSpec DEEPSEEK = CATALOG.models().get("deepseek-v3");

  private static Cluster h100(int devices) {
    var a = CATALOG.accelerators().get("h100-sxm-80gb");
    var node = CATALOG.nodes().get(a.defaultNode());
    return new Cluster(a, devices, node.devicesPerNode(), a.intraNode(), node.interNode());
  }

  private static InferenceWorkload fp8(int batch, double ttft, double tpot) {
    return new InferenceWorkload(NumberFormat.FP8_E4M3, NumberFormat.BF16, batch, 2000, 500, 0,
        ttft, tpot, 99, 16);
  }

  private static InferenceRequest request(Disaggregation d, InferenceWorkload w) {
    return InferenceRequest.disaggregated(DEEPSEEK, h100(d.devices()), w, d);
  }

  private static final Disaggregation POOLS = new Disaggregation(
      new Disaggregation.Pool(1, 16, 32, 0, true, 0), new Disaggregation.Pool(1, 32, 64, 0, true,
          0));

  @Test
  void expertsOverReplicasHoldEOverEpExpertsPerDevice() {
    InferenceWorkload w = fp8(4, 0, 0);
    InferenceEstimate whole = ESTIMATOR.estimate(DEEPSEEK, h100(8), w, 8, 8, 1, 1);
    InferenceEstimate wide = ESTIMATOR.estimate(DEEPSEEK, h100(16), w, 1, 16, 1, 16);
    double routed = ExpertWeights.routedParametersPerLayer(DEEPSEEK) * DEEPSEEK.layers();
    double expected = (DEEPSEEK.layers() * DEEPSEEK.parametersPerLayer() - routed
        + 2.0 * DEEPSEEK.vocab() * DEEPSEEK.hidden() + routed / 16) * 1.0;
    assertEquals(expected, wide.weightsBytes(), 1e-6 * expected, "FP8: one byte a weight");
    assertTrue(wide.weightsBytes() < whole.weightsBytes(), "E/16 experts weigh less than 1/8 of"
        + " everything");
    // The same weights as a replica of tp 16 when the experts are split 16 ways, dense apart.
    double dense = DEEPSEEK.layers() * DEEPSEEK.parametersPerLayer() - routed
        + 2.0 * DEEPSEEK.vocab() * DEEPSEEK.hidden();
    assertEquals(dense * (1 - 1.0 / 16), wide.weightsBytes() - ESTIMATOR.estimate(DEEPSEEK,
        h100(16), w, 16, 16, 1, 1).weightsBytes(), 1e-6 * dense);
  }

  @Test
  void twoBatchOverlapChangesNothingWithoutAnExchange() {
    InferenceWorkload w = fp8(16, 0, 0);
    InferenceEstimate plain = ESTIMATOR.estimate(DEEPSEEK, h100(8), w, 8, 8, 1, 1, false);
    InferenceEstimate overlapped = ESTIMATOR.estimate(DEEPSEEK, h100(8), w, 8, 8, 1, 1, true);
    assertEquals(plain, overlapped);
  }

  @Test
  void twoBatchOverlapHidesTheExchangeOfAPrefill() {
    InferenceWorkload w = fp8(8, 0, 0);
    double plain = ESTIMATOR.estimate(DEEPSEEK, h100(32), w, 1, 32, 1, 32, false)
        .prefillSeconds();
    double overlapped = ESTIMATOR.estimate(DEEPSEEK, h100(32), w, 1, 32, 1, 32, true)
        .prefillSeconds();
    assertTrue(overlapped < plain, overlapped + " vs " + plain);
  }

  @Test
  void thePairSustainsTheSlowerPoolsRate() {
    DisaggregatedEstimate d = Serving.evaluate(request(POOLS, fp8(8, 0, 0))).disaggregated();
    assertTrue(d.feasible(), d.reasons().toString());
    double prefill = d.prefill().requestsPerSecond();
    double decode = d.decode().requestsPerSecond();
    assertEquals(Math.min(prefill, decode), d.requestsPerSecond(), 1e-12);
    assertEquals(prefill <= decode ? "prefill" : "decode", d.limitedBy());
    assertEquals(d.requestsPerSecond() * 500, d.outputTokensPerSecond(), 1e-9);
    assertEquals("memory", d.decode().batchLimitedBy());
    assertEquals(d.decode().maxBatch(), d.decode().batch());
    // Per node: 8 devices.
    assertEquals(8 * d.prefill().inputTokensPerSecondPerDevice(),
        d.prefill().inputTokensPerSecondPerNode(), 1e-9);
    assertEquals(32 * 8 * 2000 / d.prefill().periodSeconds(),
        d.prefill().inputTokensPerSecond(), 1e-6);
    // One sequence more than the memory bound does not fit.
    Disaggregation over = new Disaggregation(POOLS.prefill(), new Disaggregation.Pool(1, 32, 64,
        d.decode().batch() + 1, true, 0));
    DisaggregatedEstimate o = Serving.evaluate(request(over, fp8(8, 0, 0))).disaggregated();
    assertFalse(o.feasible());
    assertTrue(o.reasons().get(0).startsWith("decode pool: memory:"), o.reasons().toString());
  }

  @Test
  void theTargetsSetTheBatches() {
    DisaggregatedEstimate free = Serving.evaluate(request(POOLS, fp8(8, 0, 0))).disaggregated();
    double tpot = 0.7 * free.decode().tpotSeconds();
    double ttft = 0.6 * free.ttftSeconds();
    DisaggregatedEstimate d = Serving.evaluate(request(POOLS, fp8(8, ttft, tpot)))
        .disaggregated();
    assertTrue(d.feasible(), d.reasons().toString());
    assertEquals("tpot", d.decode().batchLimitedBy());
    assertTrue(d.decode().tpotSeconds() <= tpot);
    assertTrue(d.decode().batch() < free.decode().batch());
    Disaggregation oneMore = new Disaggregation(POOLS.prefill(), new Disaggregation.Pool(1, 32,
        64, d.decode().batch() + 1, true, 0));
    assertTrue(Serving.evaluate(request(oneMore, fp8(8, ttft, tpot))).disaggregated().decode()
        .tpotSeconds() > tpot, "one sequence more misses the TPOT target");
    assertEquals("ttft", d.prefill().batchLimitedBy());
    assertTrue(d.ttftSeconds() <= ttft);
    assertTrue(d.prefill().batch() < 8);
    Disaggregation prefillMore = new Disaggregation(new Disaggregation.Pool(1, 16, 32,
        d.prefill().batch() + 1, true, 0), POOLS.decode());
    assertTrue(Serving.evaluate(request(prefillMore, fp8(8, ttft, tpot))).disaggregated()
        .ttftSeconds() > ttft, "one prompt more misses the TTFT target");
    DisaggregatedEstimate impossible = Serving.evaluate(request(POOLS, fp8(8, 1e-4, 1e-5)))
        .disaggregated();
    assertFalse(impossible.feasible());
    assertTrue(impossible.reasons().stream().anyMatch(r -> r.startsWith("ttft:")));
    assertTrue(impossible.reasons().stream().anyMatch(r -> r.startsWith("tpot:")));
  }

  @Test
  void theBalancedSplitIsTheBestOfAllSplits() {
    Disaggregation.Pool p = new Disaggregation.Pool(1, 8, 16, 0);
    Disaggregation.Pool q = new Disaggregation.Pool(2, 4, 8, 0);
    // 2 prefill groups of 8 at 30 req/s each; 4 decode replicas-groups of 4 devices... q: ep 4
    // over tp 2 is 2 replicas a group of 4 devices, 4 groups at 10 req/s each.
    DisaggregatedEstimate.Balanced b = Disaggregated.balance(p, q, 60, 40, 32);
    double best = 0;
    for (int a = 1; a * 8 + 4 <= 32; a++) {
      int c = (32 - a * 8) / 4;
      best = Math.max(best, Math.min(a * 30.0, c * 10.0));
    }
    assertEquals(best, b.requestsPerSecond(), 1e-12);
    assertEquals(Math.min(b.prefillReplicas() / 8 * 30.0, b.decodeReplicas() / 2 * 10.0),
        b.requestsPerSecond(), 1e-12);
    assertTrue(b.devices() <= 32);
  }

  @Test
  void redundantExpertsAreHeldAndSpreadTheLoad() {
    Disaggregation.Pool plain = new Disaggregation.Pool(1, 16, 16, 256);
    Disaggregation.Pool copies = new Disaggregation.Pool(1, 16, 16, 256, false, 32);
    TransformerSpec slots = Disaggregated.withSlots(DEEPSEEK, copies);
    assertEquals(288, slots.moe().experts());
    assertEquals(DEEPSEEK, Disaggregated.withSlots(DEEPSEEK, plain));
    InferenceWorkload w = fp8(256, 0, 0);
    InferenceEstimate a = ESTIMATOR.estimate(DEEPSEEK, h100(16), w, 1, 16, 1, 16);
    InferenceEstimate b = ESTIMATOR.estimate(slots, h100(16), w, 1, 16, 1, 16);
    double expert = DEEPSEEK.mlpParameters(DEEPSEEK.moe().expertFfnHidden());
    // Two more experts a device in every MoE layer, one byte each; the router is counted at
    // E + R columns too (h·R weights a layer, an approximation of 0.3 % of the difference).
    assertEquals((2 * expert + 32.0 * DEEPSEEK.hidden()) * DEEPSEEK.moeLayers(),
        b.weightsBytes() - a.weightsBytes(), 1e-9 * a.weightsBytes());
    IllegalArgumentException dense = assertThrows(IllegalArgumentException.class,
        () -> Disaggregated.withSlots(CATALOG.models().get("llama3-8b"), copies));
    assertTrue(dense.getMessage().contains("redundantExperts: 32 needs a mixture of experts"),
        dense.getMessage());
  }

  @Test
  void theJsonHasEverySection() throws Exception {
    String json = Files.readString(Path.of("../examples/serve-deepseek-v3-disaggregated.json"));
    JsonNode out = Serving.toJson(Serving.evaluate(Serving.parse(json, CATALOG)));
    JsonNode d = out.get("disaggregated");
    for (String f : new String[] {"feasible", "reasons", "prefill", "decode", "kvBytesPerRequest",
        "kvTransferSeconds", "kvTransferExposedSeconds", "ttftSeconds", "requestsPerSecond",
        "outputTokensPerSecond", "outputTokensPerSecondPerDevice", "limitedBy", "balanced"}) {
      assertTrue(d.has(f), f);
    }
    for (String f : new String[] {"devices", "tp", "ep", "replicas", "twoBatchOverlap",
        "redundantExperts", "batchPerReplica", "batchLimitedBy", "prefillSeconds",
        "periodSeconds", "inputTokensPerSecond", "inputTokensPerSecondPerDevice",
        "inputTokensPerSecondPerNode", "requestsPerSecond", "weightsBytes", "totalBytes"}) {
      assertTrue(d.get("prefill").has(f), "prefill." + f);
    }
    for (String f : new String[] {"devices", "tp", "ep", "replicas", "batchPerReplica",
        "batchLimitedBy", "maxBatchPerReplica", "tpotSeconds", "outputTokensPerSecond",
        "outputTokensPerSecondPerDevice", "outputTokensPerSecondPerNode", "requestsPerSecond"}) {
      assertTrue(d.get("decode").has(f), "decode." + f);
    }
    assertEquals(0.0, out.at("/memory/activationsBytes").asDouble(),
        "the decode pool runs no prefill");
    assertEquals(d.at("/decode/tpotSeconds").asDouble(),
        out.at("/inference/tpotSeconds").asDouble(), 1e-15);
    assertEquals(d.get("ttftSeconds").asDouble(), out.at("/inference/ttftP99Seconds").asDouble(),
        1e-15);
  }

  private static IllegalArgumentException refused(String layout, String workloadExtra) {
    String json = "{\"model\": {\"catalog\": \"deepseek-v3\"}, \"cluster\": {\"accelerator\":"
        + " \"h100-sxm-80gb\", \"devices\": 48}, \"workload\": {\"type\": \"inference\","
        + " \"precision\": \"fp8\", \"batchSize\": 8, \"promptTokens\": 2000,"
        + " \"outputTokens\": 500" + workloadExtra + "}, \"layout\": " + layout + "}";
    return assertThrows(IllegalArgumentException.class, () -> Serving.parse(json, CATALOG));
  }

  private static final String GOOD = "{\"disaggregated\": {\"prefill\": {\"tp\": 1, \"ep\": 8,"
      + " \"replicas\": 16}, \"decode\": {\"tp\": 1, \"ep\": 16, \"replicas\": 32}}}";

  @Test
  void everyRefusalIsNamed() {
    assertTrue(refused(GOOD.replace("{\"disaggregated\"", "{\"tp\": 2, \"disaggregated\""), "")
        .getMessage().startsWith("layout.tp: give it per pool in layout.disaggregated"));
    assertTrue(refused(GOOD, ", \"mode\": \"capacity\"").getMessage()
        .startsWith("workload.mode: layout.disaggregated is estimated in mode fixed"));
    assertTrue(refused(GOOD, ", \"arrivalRatePerSecond\": 3").getMessage()
        .startsWith("workload.arrivalRatePerSecond: layout.disaggregated gives the rate"));
    assertTrue(refused(GOOD.replace("\"replicas\": 32", "\"replicas\": 16"), "").getMessage()
        .contains("prefill 16 + decode 16 = 32, do not equal cluster.devices 48"));
    assertTrue(refused(GOOD.replace(", \"replicas\": 16", ""), "").getMessage()
        .startsWith("layout.disaggregated.prefill.replicas: missing required field"));
    assertTrue(refused(GOOD.replace("\"replicas\": 32", "\"replicas\": 0"), "").getMessage()
        .startsWith("layout.disaggregated.decode.replicas: must be > 0, got 0"));
    assertTrue(refused("{\"disaggregated\": {\"prefill\": {\"tp\": 1, \"replicas\": 48}}}", "")
        .getMessage().startsWith("layout.disaggregated.decode: missing required field"));
    assertTrue(refused(GOOD.replace("\"ep\": 16", "\"ep\": 16, \"redundantExperts\": -1"), "")
        .getMessage().startsWith("layout.disaggregated.decode.redundantExperts: must be >= 0"));
    assertTrue(refused(GOOD.replace("\"ep\": 16", "\"ep\": 16, \"bogus\": 1"), "")
        .getMessage().contains("bogus"));
  }

  @Test
  void expertsOverReplicasAreRefusedWhereTheyAreNotModelled() {
    String json = "{\"model\": {\"catalog\": \"deepseek-v3\"}, \"cluster\": {\"accelerator\":"
        + " \"h100-sxm-80gb\", \"devices\": 16}, \"workload\": {\"type\": \"inference\","
        + " \"precision\": \"fp8\", \"batchSize\": 8, \"promptTokens\": 2000,"
        + " \"outputTokens\": 500, \"arrivalRatePerSecond\": 2}, \"layout\": {\"tp\": 1,"
        + " \"ep\": 16, \"dp\": 16}}";
    String capacity = json.replace(", \"arrivalRatePerSecond\": 2", ", \"mode\": \"capacity\"");
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> Serving.parse(capacity, CATALOG));
    assertTrue(e.getMessage().startsWith("layout.ep: 16 over layout.tp 1 (experts over ep/tp"
        + " replicas) is estimated in workload.mode fixed"), e.getMessage());
    IllegalArgumentException overlapAlone = assertThrows(IllegalArgumentException.class,
        () -> Serving.parse(json.replace("\"ep\": 16", "\"ep\": 1, \"twoBatchOverlap\": true"),
            CATALOG));
    assertTrue(overlapAlone.getMessage().startsWith("layout.twoBatchOverlap: overlaps the"
        + " expert exchange between replicas, which needs layout.ep > layout.tp"),
        overlapAlone.getMessage());
    // Under a request rate each replica is queued at its group's step times: two-batch overlap
    // changes them, and the queue's capacity is the replicas' together.
    InferenceResult loaded = Serving.evaluate(Serving.parse(json, CATALOG));
    InferenceResult overlapped = Serving.evaluate(Serving.parse(json.replace("\"dp\": 16",
        "\"dp\": 16, \"twoBatchOverlap\": true"), CATALOG));
    assertTrue(loaded.capacityPerSecond() > 2 && loaded.p99LatencySeconds() > 0,
        loaded::toString);
    assertTrue(overlapped.estimate().twoBatchOverlap() && !loaded.estimate().twoBatchOverlap());
    assertNotEquals(loaded.estimate().decodeSecondsPerToken(),
        overlapped.estimate().decodeSecondsPerToken());
    IllegalArgumentException span = assertThrows(IllegalArgumentException.class,
        () -> ESTIMATOR.estimate(DEEPSEEK, h100(24), fp8(1, 0, 0), 1, 16, 1, 24));
    assertTrue(span.getMessage().startsWith("layout.ep: 16 spans ep/tp = 16 replicas"),
        span.getMessage());
    IllegalArgumentException pipeline = assertThrows(IllegalArgumentException.class,
        () -> ESTIMATOR.estimate(DEEPSEEK, h100(32), fp8(1, 0, 0), 1, 16, 2, 16));
    assertTrue(pipeline.getMessage().contains("modelled without pipeline parallelism"),
        pipeline.getMessage());
    // A fixed batch is estimated.
    String fixed = json.replace(", \"arrivalRatePerSecond\": 2", "");
    assertTrue(Serving.evaluate(Serving.parse(fixed, CATALOG)).estimate().decodeSecondsPerToken()
        > 0);
  }
}
