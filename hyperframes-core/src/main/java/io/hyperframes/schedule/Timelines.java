package io.hyperframes.schedule;

import static com.google.common.base.Preconditions.checkArgument;

import java.util.Arrays;

/** Time-weighted means of a step function over equal bins, for utilisation charts. */
final class Timelines {
  private Timelines() {}

  /**
   * The step function that changes by {@code deltas[i]} at {@code times[i]} (0 before the first
   * change), averaged over {@code bins} equal bins of [0, end].
   *
   * @return {bin start seconds, mean value} rows
   */
  static double[][] bin(double[] times, double[] deltas, double end, int bins) {
    checkArgument(bins >= 1 && bins <= 100_000, "bins: must be in [1, 100000], got %s", bins);
    if (!(end > 0)) {
      return new double[][] {new double[0], new double[0]};
    }
    Integer[] order = new Integer[times.length];
    for (int i = 0; i < order.length; i++) {
      order[i] = i;
    }
    Arrays.sort(order, (a, b) -> Double.compare(times[a], times[b]));
    double width = end / bins;
    double[] start = new double[bins];
    double[] area = new double[bins];
    for (int b = 0; b < bins; b++) {
      start[b] = b * width;
    }
    double level = 0;
    double t = 0;
    int k = 0;
    while (t < end) {
      double next = k < order.length ? Math.min(end, times[order[k]]) : end;
      // Spread the level over [t, next) across the bins it covers.
      double a = t;
      while (a < next) {
        int b = Math.min(bins - 1, (int) (a / width));
        // a / width can round down onto the bin that ends at a.
        while (b < bins - 1 && (b + 1) * width <= a) {
          b++;
        }
        double bEnd = b == bins - 1 ? next : Math.min(next, (b + 1) * width);
        area[b] += level * (bEnd - a);
        a = bEnd;
      }
      t = next;
      if (k < order.length) {
        level += deltas[order[k]];
        k++;
      } else {
        break;
      }
    }
    for (int b = 0; b < bins; b++) {
      area[b] /= width;
    }
    return new double[][] {start, area};
  }
}
