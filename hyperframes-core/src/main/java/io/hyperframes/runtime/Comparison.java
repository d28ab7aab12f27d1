package io.hyperframes.runtime;

import static com.google.common.base.Preconditions.checkArgument;

import com.google.common.collect.ImmutableList;
import io.hyperframes.stat.Quantile;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.apache.commons.math3.stat.inference.MannWhitneyUTest;

/**
 * Two benchmark records compared metric by metric: the change of the median and whether it is
 * more than noise.
 *
 * <p>A metric changed significantly when the two-sided Mann–Whitney U test (Mann and Whitney
 * 1947; Apache Commons Math {@link MannWhitneyUTest}, normal approximation) rejects equal
 * distributions at {@code alpha}: it assumes nothing about the shape of the noise, which for
 * step times is skewed. It regressed when it changed significantly and its median moved the bad
 * way by more than {@code threshold} (a fraction of A's median); a significant move smaller than
 * that is reported but not a regression. Conditions that differ between the records (hardware,
 * batch, threads, versions, …) are listed, since they explain a change as well as the code does.
 *
 * @param metrics the metrics both records have, by name
 * @param onlyInOne metrics only one record has
 * @param conditionDifferences "name: A → B" for every condition that differs or is missing
 * @param alpha the significance level used
 * @param threshold the smallest median change, as a fraction, that counts as a regression
 */
public record Comparison(List<MetricChange> metrics, List<String> onlyInOne,
    List<String> conditionDifferences, double alpha, double threshold) {

  /**
   * One metric of both records.
   *
   * @param name the metric
   * @param unit its unit
   * @param medianA median of A's samples
   * @param medianB median of B's samples
   * @param change (medianB − medianA) / medianA
   * @param pValue two-sided Mann–Whitney p-value of the batch medians
   * @param significant pValue &lt; alpha
   * @param regression significant and worse by more than the threshold
   * @param batch consecutive samples per batch the test ran on (1: the samples themselves;
   *     see {@link #batchSize})
   */
  public record MetricChange(String name, String unit, double medianA, double medianB,
      double change, double pValue, boolean significant, boolean regression, int batch) {}

  public Comparison {
    metrics = ImmutableList.copyOf(metrics);
    onlyInOne = ImmutableList.copyOf(onlyInOne);
    conditionDifferences = ImmutableList.copyOf(conditionDifferences);
  }

  /** Whether any metric regressed. */
  public boolean regressed() {
    return metrics.stream().anyMatch(MetricChange::regression);
  }

  /**
   * Compares B against A.
   *
   * @param alpha significance level, in (0, 0.5]
   * @param threshold smallest median change that counts as a regression, in [0, 1)
   * @throws IllegalArgumentException naming the argument when it is out of range, or when a
   *     metric has a different unit or direction in the two records
   */
  public static Comparison of(BenchmarkRecord a, BenchmarkRecord b, double alpha,
      double threshold) {
    checkArgument(a != null && b != null, "records: both must be given");
    checkArgument(alpha > 0 && alpha <= 0.5, "alpha: must be in (0, 0.5], got %s", alpha);
    checkArgument(threshold >= 0 && threshold < 1, "threshold: must be in [0, 1), got %s",
        threshold);
    MannWhitneyUTest test = new MannWhitneyUTest();
    List<MetricChange> out = new ArrayList<>();
    List<String> only = new ArrayList<>();
    Set<String> names = new TreeSet<>(a.metrics().keySet());
    names.addAll(b.metrics().keySet());
    for (String name : names) {
      BenchmarkRecord.Metric x = a.metrics().get(name);
      BenchmarkRecord.Metric y = b.metrics().get(name);
      if (x == null || y == null) {
        only.add(name + (x == null ? " (only in B)" : " (only in A)"));
        continue;
      }
      checkArgument(x.unit().equals(y.unit()) && x.higherIsBetter() == y.higherIsBetter(),
          "metrics.%s: unit or direction differs (%s vs %s)", name, x, y);
      double ma = x.median();
      double mb = y.median();
      double change = ma == 0 ? (mb == 0 ? 0 : Double.POSITIVE_INFINITY) : (mb - ma) / Math.abs(ma);
      int batch = Math.max(batchSize(x.samples()), batchSize(y.samples()));
      double[] bx = batchMedians(x.samples(), batch);
      double[] by = batchMedians(y.samples(), batch);
      double p = bx.length < 2 && by.length < 2 ? 1.0 : test.mannWhitneyUTest(bx, by);
      boolean significant = p < alpha;
      boolean worse = x.higherIsBetter() ? change < -threshold : change > threshold;
      out.add(new MetricChange(name, x.unit(), ma, mb, change, p, significant,
          significant && worse, batch));
    }
    List<String> differences = new ArrayList<>();
    Set<String> keys = new TreeSet<>(a.conditions().keySet());
    keys.addAll(b.conditions().keySet());
    Map<String, String> ca = a.conditions();
    Map<String, String> cb = b.conditions();
    for (String k : keys) {
      String va = ca.get(k);
      String vb = cb.get(k);
      if (va == null || !va.equals(vb)) {
        differences.add(k + ": " + (va == null ? "(absent)" : va) + " → "
            + (vb == null ? "(absent)" : vb));
      }
    }
    return new Comparison(out, only, differences, alpha, threshold);
  }

  /**
   * How many consecutive samples of a series to batch so that the batches are close to
   * independent (the batch-means method of simulation output analysis; Law, "Simulation
   * Modeling and Analysis", 5th ed., §9.5.3; Fishman's doubling rule): starting from 1, the
   * batch size doubles while the batch medians' lag-1 autocorrelation exceeds its 95 % bound
   * for independent data, 2/√m for m batches, and no fewer than 8 batches remain, then once
   * more while 4 remain. Steps of a
   * benchmark drift (warm-up, other load, clock changes), and a test that takes drifting steps
   * for independent samples finds differences between two runs of the same code; independent
   * samples stay unbatched and keep the test's full power.
   */
  static int batchSize(double[] samples) {
    int size = 1;
    double[] m = samples;
    while (m.length >= 16 && lag1(m) > 2 / Math.sqrt(m.length)) {
      size *= 2;
      m = batchMedians(samples, size);
    }
    // Once drift is found, one doubling more: on few batches the autocorrelation test has
    // little power, and correlated batches left in make false alarms (simulated: AR(1) steps
    // with rho 0.8, 64 a side, false alarms 18 % without it, 12 % with it; independent samples
    // are unaffected).
    if (size > 1 && samples.length / (2 * size) >= 4) {
      size *= 2;
    }
    return size;
  }

  /** Medians of consecutive batches of {@code size} samples (a short last batch dropped). */
  static double[] batchMedians(double[] samples, int size) {
    if (size == 1) {
      return samples;
    }
    int n = samples.length / size;
    double[] out = new double[Math.max(n, 1)];
    if (n == 0) {
      out[0] = Quantile.median(samples);
      return out;
    }
    for (int i = 0; i < n; i++) {
      out[i] = Quantile.median(java.util.Arrays.copyOfRange(samples, i * size, (i + 1) * size));
    }
    return out;
  }

  /** Lag-1 sample autocorrelation (0 for a constant series). */
  static double lag1(double[] v) {
    double mean = java.util.Arrays.stream(v).average().orElse(0);
    double num = 0;
    double den = 0;
    for (int i = 0; i < v.length; i++) {
      double d = v[i] - mean;
      den += d * d;
      if (i > 0) {
        num += d * (v[i - 1] - mean);
      }
    }
    return den == 0 ? 0 : num / den;
  }
}
