package io.hyperframes.stat;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.common.math.Quantiles;
import java.util.Arrays;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Example;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;
import org.apache.commons.math3.stat.descriptive.rank.Percentile;

/**
 * The one quantile implementation agrees, bit for bit, with the libraries whose definitions it
 * names: Guava's {@code Quantiles} (type 7) for {@code LINEAR} and Commons Math's default
 * estimator for {@code WEIBULL}. The callers it replaced used those libraries or the same
 * formula, so every figure built on a percentile is unchanged.
 */
class QuantileProperties {

  @Provide
  Arbitrary<double[]> samples() {
    return Arbitraries.doubles().between(-1e6, 1e6).array(double[].class).ofMinSize(1)
        .ofMaxSize(300);
  }

  @Property(tries = 1000)
  void linearIsGuavasPercentile(@ForAll("samples") double[] values,
      @ForAll @IntRange(min = 0, max = 100) int p) {
    double[] sorted = sorted(values);
    double guava = Quantiles.percentiles().index(p).compute(values.clone());
    // Guava interpolates as lower + (upper - lower) * remainder / 100: the last bit may differ.
    assertEquals(guava, Quantile.ofSorted(sorted, p / 100.0, Quantile.Definition.LINEAR),
        1e-12 * Math.max(1, Math.abs(guava)), "p" + p + " of " + values.length);
  }

  @Property(tries = 1000)
  void medianIsGuavasMedianExactly(@ForAll("samples") double[] values) {
    double[] copy = values.clone();
    assertEquals(Quantiles.median().compute(values.clone()), Quantile.median(values));
    assertTrue(Arrays.equals(copy, values), "the input is not changed");
  }

  @Property(tries = 1000)
  void weibullIsCommonsMathsDefaultExactly(@ForAll("samples") double[] values,
      @ForAll @IntRange(min = 1, max = 100) int p) {
    double[] sorted = sorted(values);
    Percentile reference = new Percentile();
    reference.setData(sorted);
    assertEquals(reference.evaluate(p), Quantile.ofSorted(sorted, p / 100.0,
        Quantile.Definition.WEIBULL), "p" + p + " of " + values.length);
  }

  @Property(tries = 1000)
  void aQuantileLiesBetweenTheExtremesAndRisesWithQ(@ForAll("samples") double[] values,
      @ForAll @IntRange(min = 0, max = 99) int p) {
    double[] sorted = sorted(values);
    for (Quantile.Definition d : Quantile.Definition.values()) {
      double lo = Quantile.ofSorted(sorted, p / 100.0, d);
      double hi = Quantile.ofSorted(sorted, (p + 1) / 100.0, d);
      assertTrue(lo >= sorted[0] && hi <= sorted[sorted.length - 1], d + " within the extremes");
      assertTrue(hi >= lo - 1e-9, d + " p" + p + ": " + lo + " then " + hi);
    }
  }

  @Example
  void badInputIsNamed() {
    assertThrows(IllegalArgumentException.class,
        () -> Quantile.ofSorted(new double[0], 0.5, Quantile.Definition.LINEAR));
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> Quantile.ofSorted(new double[] {1, 2}, 1.5, Quantile.Definition.LINEAR));
    assertTrue(e.getMessage().contains("1.5"), e.getMessage());
    assertThrows(IllegalArgumentException.class,
        () -> Quantile.ofSorted(new double[] {1, 2}, Double.NaN, Quantile.Definition.WEIBULL));
    assertThrows(IllegalArgumentException.class, () -> Quantile.median(null));
  }

  private static double[] sorted(double[] values) {
    double[] s = values.clone();
    Arrays.sort(s);
    return s;
  }
}
