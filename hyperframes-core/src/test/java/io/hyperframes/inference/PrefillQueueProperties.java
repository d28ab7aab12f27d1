package io.hyperframes.inference;

import static org.junit.jupiter.api.Assertions.assertTrue;

import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.DoubleRange;
import net.jqwik.api.constraints.IntRange;

/**
 * The prefill queue of the disaggregated search ({@link PrefillQueue}) with one prompt a batch
 * is a first-come-first-served queue of identical servers, whose waits are monotone (the
 * Kiefer-Wolfowitz recursion of the G/G/c queue: each arrival's wait never falls when the
 * arrivals come closer together, and never rises with a server more). With the same seed a
 * higher rate brings every arrival closer, so no percentile of the time to first token falls
 * when the rate rises or rises when a replica is added, and none is below the unloaded latency.
 */
class PrefillQueueProperties {

  @Property(tries = 1000)
  void ttftRisesWithTheRateAndFallsWithReplicas(
      @ForAll @DoubleRange(min = 0.1, max = 50) double rate,
      @ForAll @DoubleRange(min = 1, max = 3) double faster,
      @ForAll @DoubleRange(min = 0.01, max = 1) double service,
      @ForAll @DoubleRange(min = 0, max = 0.5) double overhead,
      @ForAll @IntRange(min = 1, max = 8) int replicas,
      @ForAll @IntRange(min = 1, max = 99) int percentile,
      @ForAll long seed) {
    double[] period = {0, service};
    double[] latency = {0, service + overhead};
    double base = PrefillQueue.ttftAt(rate, replicas, period, latency, percentile, 300, seed);
    double busier = PrefillQueue.ttftAt(rate * faster, replicas, period, latency, percentile,
        300, seed);
    double wider = PrefillQueue.ttftAt(rate, replicas + 1, period, latency, percentile, 300,
        seed);
    double slack = 1e-9 * (1 + base);
    assertTrue(base >= service + overhead - slack, () -> "below the unloaded latency: " + base);
    assertTrue(busier >= base - slack, () -> "rate x" + faster + ": " + base + " -> " + busier);
    assertTrue(wider <= base + slack, () -> "a replica more: " + base + " -> " + wider);
  }
}
