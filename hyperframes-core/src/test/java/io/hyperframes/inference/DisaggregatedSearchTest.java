package io.hyperframes.inference;

import static org.junit.jupiter.api.Assertions.assertEquals;
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
}
