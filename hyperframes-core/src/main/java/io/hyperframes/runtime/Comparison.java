package io.hyperframes.runtime;

import static com.google.common.base.Preconditions.checkArgument;

import com.google.common.collect.ImmutableList;
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
   * @param pValue two-sided Mann–Whitney p-value
   * @param significant pValue &lt; alpha
   * @param regression significant and worse by more than the threshold
   */
  public record MetricChange(String name, String unit, double medianA, double medianB,
      double change, double pValue, boolean significant, boolean regression) {}

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
      double p = x.samples().length < 2 && y.samples().length < 2 ? 1.0
          : test.mannWhitneyUTest(x.samples(), y.samples());
      boolean significant = p < alpha;
      boolean worse = x.higherIsBetter() ? change < -threshold : change > threshold;
      out.add(new MetricChange(name, x.unit(), ma, mb, change, p, significant,
          significant && worse));
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
}
