package io.hyperframes.inference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.hyperframes.precision.NumberFormat;
import org.junit.jupiter.api.Test;

/** The TTFT target is checked at the percentile the SLO names, not at p50 or p99. */
class SloPercentileTest {

  private static InferenceWorkload slo(double ttftSeconds, double percentile) {
    return new InferenceWorkload(NumberFormat.FP16, NumberFormat.FP16, 8, 512, 64, 1.0,
        ttftSeconds, 0.0, percentile, 16);
  }

  /** A server whose TTFT quantile q is 10·q seconds: p50 5 s, p95 9.5 s, p99 9.9 s. */
  private static ServingLoad.Percentiles linear() {
    return new ServingLoad.Percentiles(20, 25, 30, 5.0, 9.9, 4, q -> 10 * q);
  }

  @Test
  void aP95TargetIsMetAtP95() {
    ServingLoad.Percentiles q = linear();
    assertEquals(9.5, q.ttftAt(95), 1e-12);
    assertTrue(Serving.meets(q, slo(9.6, 95)), "p95 9.5 s meets a 9.6 s target");
    assertFalse(Serving.meets(q, slo(9.4, 95)), "p95 9.5 s misses 9.4 s though p50 is 5 s");
    assertFalse(Serving.meets(q, slo(9.6, 99.5)), "p99.5 9.95 s misses 9.6 s");
    assertTrue(Serving.meets(q, slo(5.1, 50)));
  }

  @Test
  void simulatedDistributionSeparatesThePercentiles() {
    double[] prefill = new double[17];
    double[] decode = new double[17];
    for (int b = 1; b <= 16; b++) {
      prefill[b] = 0.05 * b;
      decode[b] = 0.02 + 0.001 * b;
    }
    ServingLoad load = new ServingLoad(prefill, decode, 32);
    ServingLoad.Percentiles q = load.simulate(0.7 * load.capacityPerSecond(), 4000, 7);
    double p50 = q.ttftAt(50);
    double p95 = q.ttftAt(95);
    double p99 = q.ttftAt(99);
    assertTrue(p50 < p95 && p95 < p99, p50 + " " + p95 + " " + p99);
    assertEquals(q.ttftP50(), p50, 1e-12);
    assertEquals(q.ttftP99(), p99, 1e-12);
    double between = (p95 + p99) / 2;
    assertTrue(Serving.meets(q, slo(between, 95)));
    assertFalse(Serving.meets(q, slo(between, 99)));
  }

  /**
   * The request path delays every first token by the same fixed time and occupies no iteration:
   * capacity is unchanged and every latency percentile moves by exactly that time.
   */
  @Test
  void theRequestPathDelaysEveryLatencyAndNotTheServer() {
    double[] prefill = new double[17];
    double[] decode = new double[17];
    for (int b = 1; b <= 16; b++) {
      prefill[b] = 0.05 * b;
      decode[b] = 0.02 + 0.001 * b;
    }
    ServingLoad without = new ServingLoad(prefill, decode, 32);
    ServingLoad with = new ServingLoad(prefill, decode, 32, 0.007);
    assertEquals(without.capacityPerSecond(), with.capacityPerSecond(), 0.0);
    double rate = 0.6 * without.capacityPerSecond();
    ServingLoad.Percentiles a = without.simulate(rate, 2000, 11);
    ServingLoad.Percentiles b = with.simulate(rate, 2000, 11);
    assertEquals(a.ttftP50() + 0.007, b.ttftP50(), 1e-12);
    assertEquals(a.ttftAt(95) + 0.007, b.ttftAt(95), 1e-12);
    assertEquals(a.p99() + 0.007, b.p99(), 1e-12);
    assertEquals(a.meanRunning(), b.meanRunning(), 0.0);
    ServingLoad.Percentiles c = without.analytical(rate);
    ServingLoad.Percentiles d = with.analytical(rate);
    assertEquals(c.p50() + 0.007, d.p50(), 1e-12);
  }
}
