package io.hyperframes.stat;

import static com.google.common.base.Preconditions.checkArgument;

import java.util.Arrays;

/**
 * The one implementation of an empirical quantile in HyperFrames. Streaming percentiles of the
 * step meter stay in HdrHistogram, which never holds the samples.
 *
 * <p>Two definitions are used, each named where it is called, from Hyndman and Fan, "Sample
 * quantiles in statistical packages", The American Statistician 50(4), 1996:
 * <ul>
 *   <li>{@link Definition#LINEAR} (their type 7, the default of R, NumPy and Guava's
 *       {@code Quantiles}): every latency percentile (serving estimates, the serving replay, the
 *       prefill queue) and every median of repeated measurements;</li>
 *   <li>{@link Definition#WEIBULL} (their type 6, Apache Commons Math's default estimator,
 *       {@code Percentile.EstimationType.LEGACY}): the leave-one-source-out interval bands. The
 *       shipped bands were written with it; a test checks it against Commons Math.</li>
 * </ul>
 */
public final class Quantile {

  /** Where the {@code q}-quantile of {@code n} sorted values sits between order statistics. */
  public enum Definition {
    /** Position {@code q·(n − 1)} (0-based), linear between the two order statistics around it. */
    LINEAR,
    /**
     * Position {@code q·(n + 1)} (1-based), linear between the two order statistics around it;
     * below the first or past the last it is the extreme value.
     */
    WEIBULL
  }

  private Quantile() {}

  /**
   * The {@code q}-quantile of values sorted in ascending order.
   *
   * @param sorted ascending values, at least one (not checked for order: the callers sort)
   * @param q the quantile in [0, 1]
   * @param definition where the quantile sits between order statistics
   * @throws IllegalArgumentException on no values or a {@code q} outside [0, 1]
   */
  public static double ofSorted(double[] sorted, double q, Definition definition) {
    checkArgument(sorted != null && sorted.length > 0, "quantile: no values");
    if (!(q >= 0 && q <= 1)) {
      throw new IllegalArgumentException("quantile: q must be in [0, 1], got " + q);
    }
    int n = sorted.length;
    switch (definition) {
      case LINEAR: {
        double pos = q * (n - 1);
        int i = (int) Math.floor(pos);
        int j = Math.min(n - 1, i + 1);
        return sorted[i] + (pos - i) * (sorted[j] - sorted[i]);
      }
      case WEIBULL: {
        // Commons Math 3.6.1, Percentile.EstimationType.LEGACY: index and estimate.
        double pos = q == 0 ? 0 : q == 1 ? n : q * (n + 1);
        if (pos < 1) {
          return sorted[0];
        }
        if (pos >= n) {
          return sorted[n - 1];
        }
        double floor = Math.floor(pos);
        int i = (int) floor;
        double lower = sorted[i - 1];
        return lower + (pos - floor) * (sorted[i] - lower);
      }
      default:
        throw new AssertionError(definition);
    }
  }

  /** The median ({@link Definition#LINEAR}) of values in any order; the array is not changed. */
  public static double median(double[] values) {
    checkArgument(values != null && values.length > 0, "median: no values");
    double[] sorted = values.clone();
    Arrays.sort(sorted);
    return ofSorted(sorted, 0.5, Definition.LINEAR);
  }
}
