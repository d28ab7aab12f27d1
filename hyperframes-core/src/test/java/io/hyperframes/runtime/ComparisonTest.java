package io.hyperframes.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Map;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** Records round-trip; comparisons find real regressions and ignore noise. */
class ComparisonTest {

  /** Noise of the simulated throughput samples: 5 % coefficient of variation. */
  private static final double NOISE = 0.05;
  private static final int SAMPLES = 30;
  private static final int TRIALS = 1000;

  private static BenchmarkRecord record(double[] samples, Map<String, String> conditions) {
    return new BenchmarkRecord(BenchmarkRecord.SCHEMA, conditions,
        Map.of("throughput", new BenchmarkRecord.Metric("samples/s", true, samples)));
  }

  private static double[] samples(SplittableRandom r, double mean) {
    double[] s = new double[SAMPLES];
    for (int i = 0; i < SAMPLES; i++) {
      s[i] = mean * (1 + NOISE * r.nextGaussian());
    }
    return s;
  }

  @Test
  void aFivePercentThroughputRegressionIsFoundWithNinetyFivePercentPower() {
    SplittableRandom r = new SplittableRandom(20261201);
    int found = 0;
    int falseAlarms = 0;
    for (int t = 0; t < TRIALS; t++) {
      BenchmarkRecord a = record(samples(r, 1000), Map.of());
      BenchmarkRecord slower = record(samples(r, 950), Map.of());
      BenchmarkRecord same = record(samples(r, 1000), Map.of());
      if (Comparison.of(a, slower, 0.05, 0.01).regressed()) {
        found++;
      }
      if (Comparison.of(a, same, 0.05, 0.01).regressed()) {
        falseAlarms++;
      }
    }
    assertTrue(found >= 0.95 * TRIALS, "power " + found + " of " + TRIALS);
    assertTrue(falseAlarms <= 0.05 * TRIALS, "false alarms " + falseAlarms + " of " + TRIALS);
  }

  /** An AR(1) series: each step keeps {@code rho} of the previous one's deviation (drift). */
  private static double[] drifting(SplittableRandom r, int n, double rho) {
    double[] s = new double[n];
    double d = 0;
    for (int i = 0; i < n; i++) {
      d = rho * d + Math.sqrt(1 - rho * rho) * r.nextGaussian();
      s[i] = 1000 * (1 + NOISE * d);
    }
    return s;
  }

  @Test
  void driftingStepsAreBatchedSoThatTwoRunsOfTheSameCodeRarelyDiffer() {
    SplittableRandom r = new SplittableRandom(7);
    int batchedAlarms = 0;
    int rawAlarms = 0;
    org.apache.commons.math3.stat.inference.MannWhitneyUTest raw =
        new org.apache.commons.math3.stat.inference.MannWhitneyUTest();
    for (int t = 0; t < TRIALS; t++) {
      double[] x = drifting(r, 64, 0.8);
      double[] y = drifting(r, 64, 0.8);
      Comparison c = Comparison.of(record(x, Map.of()), record(y, Map.of()), 0.05, 0.0);
      if (c.metrics().get(0).significant()) {
        batchedAlarms++;
      }
      if (raw.mannWhitneyUTest(x, y) < 0.05) {
        rawAlarms++;
      }
    }
    // Taken as independent, drifting steps make a "significant" difference of most pairs of
    // runs of the same code; batched, the false alarms come down towards the nominal 5 %.
    assertTrue(rawAlarms > 0.3 * TRIALS, "raw " + rawAlarms);
    assertTrue(batchedAlarms < 0.15 * TRIALS && batchedAlarms < rawAlarms / 3,
        "batched " + batchedAlarms + " raw " + rawAlarms);
    // Independent samples are not batched.
    assertEquals(1, Comparison.batchSize(samples(new SplittableRandom(3), 1000)));
    assertEquals(0.0, Comparison.lag1(new double[] {2, 2, 2}));
  }

  @Test
  void latencyRegressesUpwardsAndConditionsThatDifferAreListed() {
    double[] fast = new double[SAMPLES];
    double[] slow = new double[SAMPLES];
    for (int i = 0; i < SAMPLES; i++) {
      fast[i] = 1.0 + 0.001 * i;
      slow[i] = 1.2 + 0.001 * i;
    }
    BenchmarkRecord a = new BenchmarkRecord(BenchmarkRecord.SCHEMA, Map.of("batch", "256",
        "cpu", "EPYC"), Map.of("p99", new BenchmarkRecord.Metric("s", false, fast)));
    BenchmarkRecord b = new BenchmarkRecord(BenchmarkRecord.SCHEMA, Map.of("batch", "128",
        "cpu", "EPYC"), Map.of("p99", new BenchmarkRecord.Metric("s", false, slow)));
    Comparison worse = Comparison.of(a, b, 0.05, 0.02);
    assertTrue(worse.regressed());
    // Medians 1.0145 and 1.2145 (30 evenly spaced samples each).
    assertEquals(0.2 / 1.0145, worse.metrics().get(0).change(), 1e-9);
    assertEquals(java.util.List.of("batch: 256 → 128"), worse.conditionDifferences());
    assertFalse(Comparison.of(b, a, 0.05, 0.02).regressed(), "faster is not a regression");
  }

  @Test
  void recordsRoundTripAndBadDocumentsNameTheField() {
    BenchmarkRecord a = record(new double[] {1, 2, 3}, BenchmarkRecord.hostConditions());
    assertEquals(a, BenchmarkRecord.parse(a.toJson()));
    assertEquals(2.0, a.metrics().get("throughput").median());
    IllegalArgumentException schema = assertThrows(IllegalArgumentException.class,
        () -> BenchmarkRecord.parse(a.toJson().replace(BenchmarkRecord.SCHEMA, "other/9")));
    assertTrue(schema.getMessage().startsWith("schema: expected"), schema.getMessage());
    IllegalArgumentException sample = assertThrows(IllegalArgumentException.class,
        () -> BenchmarkRecord.parse(a.toJson().replace("1.0,", "\"x\",")));
    assertTrue(sample.getMessage().startsWith("metrics.throughput.samples[0]"),
        sample.getMessage());
    IllegalArgumentException nan = assertThrows(IllegalArgumentException.class,
        () -> record(new double[] {Double.NaN}, Map.of()));
    assertTrue(nan.getMessage().startsWith("metric samples[0]: must be finite"),
        nan.getMessage());
    IllegalArgumentException alpha = assertThrows(IllegalArgumentException.class,
        () -> Comparison.of(a, a, 0, 0.01));
    assertTrue(alpha.getMessage().startsWith("alpha:"), alpha.getMessage());
  }
}
