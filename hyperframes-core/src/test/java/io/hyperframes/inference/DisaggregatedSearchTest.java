package io.hyperframes.inference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.hyperframes.catalog.Catalog;
import io.hyperframes.json.Json;
import org.apache.commons.math3.distribution.PoissonDistribution;
import org.junit.jupiter.api.Test;

/**
 * The disaggregated side of a serving plan: the prefill queue obeys the laws of a queue, the
 * pools meet the SLO with no replica to spare, and the plan says which kind needs fewer devices.
 */
class DisaggregatedSearchTest {

  private static final double[] PERIOD = {0, 0.1};
  private static final double[] LATENCY = {0, 0.12};

  @Test
  void anIdleQueueGivesTheUnloadedLatency() {
    assertEquals(0.12, PrefillQueue.ttftAt(1e-3, 1, PERIOD, LATENCY, 99, 1000, 7), 1e-12);
  }

  /**
   * One replica, one prompt at a time, a service of 0.1 s: an M/D/1 queue, where an arrival finds
   * the server idle with probability 1 − ρ. At ρ = 0.5 the 40th percentile has not waited and the
   * 60th has.
   */
  @Test
  void anMd1QueueWaitsAsOftenAsItsLoad() {
    double rate = 5;
    assertEquals(0.12, PrefillQueue.ttftAt(rate, 1, PERIOD, LATENCY, 40, 100_000, 11), 1e-12);
    assertTrue(PrefillQueue.ttftAt(rate, 1, PERIOD, LATENCY, 60, 100_000, 11) > 0.12 + 1e-6);
  }

  @Test
  void waitsGrowWithTheRateAndShrinkWithReplicas() {
    double slow = PrefillQueue.ttftAt(6, 1, PERIOD, LATENCY, 99, 20_000, 3);
    double fast = PrefillQueue.ttftAt(8, 1, PERIOD, LATENCY, 99, 20_000, 3);
    double two = PrefillQueue.ttftAt(8, 2, PERIOD, LATENCY, 99, 20_000, 3);
    assertTrue(fast > slow && two < fast, slow + " " + fast + " " + two);
    // Batching: four prompts in 0.16 s carry a load one at a time could not.
    double[] period = {0, 0.1, 0.12, 0.14, 0.16};
    double[] latency = {0, 0.12, 0.14, 0.16, 0.18};
    double batched = PrefillQueue.ttftAt(15, 1, period, latency, 99, 20_000, 3);
    assertTrue(batched < 1, "stable with batches: " + batched);
  }

  @Test
  void badArgumentsAreNamed() {
    var e = assertThrows(IllegalArgumentException.class,
        () -> PrefillQueue.ttftAt(5, 1, PERIOD, LATENCY, 100, 1000, 1));
    assertTrue(e.getMessage().contains("workload.latencySlo.percentile"), e.getMessage());
    assertThrows(IllegalArgumentException.class,
        () -> PrefillQueue.ttftAt(0, 1, PERIOD, LATENCY, 99, 1000, 1));
  }

  /**
   * LLaMA-2-70B at 20 requests/s: the disaggregated pools meet both targets, the decode pool has
   * just the slots of the 99th percentile of the sequences in flight, and the plan names the kind
   * with fewer devices.
   */
  @Test
  void thePoolsMeetTheSloWithNoReplicaToSpare() throws Exception {
    String request = java.nio.file.Files.readString(java.nio.file.Path.of("..", "examples",
        "serve-70b-slo.json"));
    var result = ServingPlans.plan(Json.parseObject("r", request), Catalog.builtIn());
    InferencePlanner.DisaggregatedConfig d = result.plan().disaggregated();
    assertNotNull(d);
    InferenceWorkload w = result.request().workload();
    assertTrue(d.ttftSeconds() <= w.ttftSloSeconds() && d.tpotSeconds() <= w.tpotSloSeconds());
    assertEquals(d.prefill().tp() * d.prefill().replicas(), d.prefill().devices());
    assertEquals(d.prefill().devices() + d.decode().devices(), d.devices());
    double inFlight = w.arrivalRatePerSecond() * w.outputTokens() * d.tpotSeconds();
    int slots = new PoissonDistribution(inFlight).inverseCumulativeProbability(0.99);
    assertTrue(d.decode().replicas() * d.decode().batchLimit() >= slots);
    assertTrue((d.decode().replicas() - 1) * d.decode().batchLimit() < slots);
    InferencePlanner.Config best = result.plan().best();
    assertEquals(d.devices() < best.devices() ? "disaggregated" : "aggregated",
        result.plan().choice());
    var json = ServingPlans.toJson(result);
    assertEquals(d.devices(), json.get("bestDisaggregated").get("devices").asInt());
    assertEquals(d.decode().batchLimit(),
        json.get("bestDisaggregated").get("decode").get("batchLimit").asInt());
    assertEquals(result.plan().choice(), json.get("choice").asText());
    assertTrue(ServingPlans.describe(d).startsWith(d.devices() + " devices (prefill tp "
        + d.prefill().tp()), ServingPlans.describe(d));
    var e = assertThrows(IllegalArgumentException.class,
        () -> ServingPlans.describe((InferencePlanner.DisaggregatedConfig) null));
    assertEquals("configuration: must be given", e.getMessage());
  }

  /**
   * A model no node holds: DeepSeek-V3's FP8 weights (about 671 GB) exceed a node of eight 80 GB
   * H100, so no replica within a node serves it, and before the search spread experts over
   * replicas the plan said no configuration up to 4096 devices meets the SLO. Now the
   * aggregated configuration and both pools spread the experts over whole expert-parallel
   * groups and meet the SLO, and the decode pool's TPOT is the estimate of
   * {@code layout.disaggregated} with that pool.
   */
  @Test
  void aModelNoNodeHoldsIsServedWithExpertsOverSeveralReplicas() throws Exception {
    var result = ServingPlans.plan(Json.parseObject("r", ServingRequests.DEEPSEEK_H100),
        Catalog.builtIn());
    // The plan docs/inference.md prints ("A model no node holds").
    InferencePlanner.Config best = result.plan().best();
    assertNotNull(best, "an aggregated configuration with the experts over replicas");
    assertEquals(16, best.devices(), ServingPlans.describe(best));
    assertEquals(16, best.ep(), ServingPlans.describe(best));
    assertEquals(0, best.replicas() % best.replicasPerGroup(), "whole groups");
    assertEquals(32, result.plan().disaggregated().devices());
    InferencePlanner.DisaggregatedConfig d = result.plan().disaggregated();
    assertNotNull(d);
    assertEquals("aggregated", result.plan().choice());
    // The JSON's estimate of the best is that configuration's under the request rate.
    var estimate = ServingPlans.toJson(result);
    assertEquals(best.ep(), estimate.get("layout").get("ep").asInt());
    assertEquals(best.twoBatchOverlap(), estimate.get("layout").get("twoBatchOverlap")
        .asBoolean());
    assertEquals(best.twoBatchOverlap(), estimate.get("best").get("twoBatchOverlap")
        .asBoolean());
    for (InferencePlanner.PoolConfig p : java.util.List.of(d.prefill(), d.decode())) {
      assertTrue(p.ep() > p.tp(), p::toString);
      assertEquals(0, p.ep() % p.tp(), p::toString);
      assertEquals(0, p.replicas() % (p.ep() / p.tp()), "whole groups: " + p);
      assertEquals(p.tp() * p.replicas(), p.devices());
    }
    InferenceWorkload w = result.request().workload();
    assertTrue(d.ttftSeconds() <= w.ttftSloSeconds() && d.tpotSeconds() <= w.tpotSloSeconds(),
        d::toString);
    InferencePlanner.PoolConfig q = d.decode();
    Disaggregation.Pool pool = new Disaggregation.Pool(q.tp(), q.ep(), q.ep() / q.tp(), 0,
        q.twoBatchOverlap(), 0);
    InferenceEstimate e = Disaggregated.decode(result.estimator(), result.request().model(),
        result.request().cluster().withDevices(q.ep()), w.withFormats(d.weights(), d.kvCache()),
        pool, q.batchLimit());
    assertTrue(e.feasible(), e::toString);
    assertEquals(d.tpotSeconds(), e.tpotSeconds(), 1e-12);
    var json = ServingPlans.toJson(result).get("bestDisaggregated");
    assertEquals(q.ep(), json.get("decode").get("ep").asInt());
    assertEquals(q.twoBatchOverlap(), json.get("decode").get("twoBatchOverlap").asBoolean());
    assertTrue(ServingPlans.describe(d).contains("ep " + q.ep() + " × " + q.replicas()
        + " replicas"), ServingPlans.describe(d));
    // Launched as one worker per expert-parallel group (LaunchDynamoTest), except on
    // TensorRT-LLM workers: a refusal naming the pool.
    // The front: no single replica holds the model, so every point is an expert-parallel
    // group, and each is its group's estimate at its batch (the JSON says which overlap).
    var front = result.plan().pareto();
    assertFalse(front.isEmpty(), "a front of expert-parallel groups");
    InferencePlanner.FrontPoint widest = front.get(front.size() - 1);
    assertTrue(front.stream().allMatch(p -> p.replicasPerGroup() > 1), front::toString);
    // Its ends as docs/inference.md describes them.
    InferencePlanner.FrontPoint first = front.get(0);
    assertEquals(java.util.List.of(8, 256, 1), java.util.List.of(first.tp(), first.ep(),
        first.batch()), first::toString);
    assertEquals(java.util.List.of(1, 88, 128, true, 8), java.util.List.of(widest.tp(),
        widest.ep(), widest.batch(), widest.twoBatchOverlap(), widest.redundantExperts()),
        widest::toString);
    InferenceEstimate g = result.estimator().estimate(Disaggregated.withSlots(
        result.request().model(), widest.redundantExperts()),
        result.request().cluster().withDevices(widest.ep()), w.withFormats(widest.weights(),
            widest.kvCache()).withBatchSize(widest.batch()), widest.tp(), widest.ep(), 1,
        widest.replicasPerGroup(), widest.twoBatchOverlap());
    assertEquals(g.outputTokensPerSecondPerDevice(), widest.tokensPerSecondPerGpu(), 1e-9);
    assertEquals(1 / g.tpotSeconds(), widest.tokensPerSecondPerUser(), 1e-9);
    var pareto = ServingPlans.toJson(result).get("pareto");
    assertEquals(front.size(), pareto.size());
    assertEquals(widest.twoBatchOverlap(), pareto.get(front.size() - 1).get("twoBatchOverlap")
        .asBoolean());
    assertTrue(ServingPlans.describe(widest).contains("ep " + widest.ep() + " over "
        + widest.replicasPerGroup() + " replicas"), ServingPlans.describe(widest));
    var refused = assertThrows(IllegalArgumentException.class, () -> io.hyperframes.launch.Launch
        .serving(result, io.hyperframes.launch.Target.DYNAMO,
            io.hyperframes.launch.LaunchOptions.defaults(), io.hyperframes.launch.Target.TRTLLM));
    assertTrue(refused.getMessage().startsWith("--emit dynamo --backend trtllm: the plan's"
        + " prefill pool spreads the experts over " + d.prefill().ep() / d.prefill().tp()
        + " replicas"), refused.getMessage());
  }

  /**
   * The configurations whose experts span replicas: none for a dense model; for a mixture of
   * experts, ep a multiple of tp above it ({@link InferencePlanner#spanningSizes}), with and
   * without two-batch overlap, each replica's estimate in its group feasible, the group holding
   * the redundant experts that share the slots equally over its devices.
   */
  @Test
  void expertsSpanReplicasOnlyWhereTheModelHasRoutedExperts() throws Exception {
    var ds = ServingPlans.plan(Json.parseObject("r", ServingRequests.DEEPSEEK_H100),
        Catalog.builtIn());
    InferenceWorkload w = ds.request().workload();
    var spanning = InferencePlanner.spanningReplicas(ds.request().model(),
        ds.request().cluster(), w, java.util.List.of(w.weights()), java.util.List.of(w.kvCache()),
        ds.estimator());
    assertFalse(spanning.isEmpty());
    int experts = ds.request().model().moe().experts();
    for (InferencePlanner.Replica r : spanning) {
      int ratio = r.ep() / r.tp();
      assertTrue(r.ep() > r.tp() && r.ep() % r.tp() == 0, r::toString);
      assertTrue(InferencePlanner.spanningSizes(ds.request().model(), r.tp(), 8)
          .contains(r.ep()), r::toString);
      assertEquals(InferencePlanner.redundantExperts(ds.request().model(), r.ep()),
          r.redundantExperts());
      assertEquals(experts + r.redundantExperts(), r.model().moe().experts());
      assertEquals(0, (experts + r.redundantExperts()) % r.ep());
      assertTrue(r.ep() <= InferencePlanner.MAX_SPANNING_EP);
      assertEquals(r.ep(), r.cluster().devices());
      assertEquals(ratio, r.group());
      assertTrue(r.one().feasible());
    }
    assertTrue(spanning.stream().anyMatch(InferencePlanner.Replica::twoBatchOverlap));
    assertTrue(spanning.stream().anyMatch(r -> !r.twoBatchOverlap()));
    assertTrue(spanning.stream().anyMatch(r -> r.ep() == 24 && r.redundantExperts() == 8));
    String request = java.nio.file.Files.readString(java.nio.file.Path.of("..", "examples",
        "serve-70b-slo.json"));
    var dense = ServingPlans.plan(Json.parseObject("r", request), Catalog.builtIn());
    InferenceWorkload dw = dense.request().workload();
    assertTrue(InferencePlanner.spanningReplicas(dense.request().model(),
        dense.request().cluster(), dw, java.util.List.of(dw.weights()),
        java.util.List.of(dw.kvCache()), dense.estimator()).isEmpty());
  }
}
