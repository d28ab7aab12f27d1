package io.hyperframes.schedule;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;

class RankedSetTest {

  /**
   * Law: ranking by a key array gives the order of ranking by {@link Double#compare} on the
   * keys with ties by index, over keys drawn with many ties, signed zeros, infinities and NaN.
   */
  @Property(tries = 300)
  void rankingByKeysIsTheComparatorsOrder(@ForAll @IntRange(min = 0, max = 200) int n,
      @ForAll long seed) {
    SplittableRandom r = new SplittableRandom(seed);
    double[] pool = {-0.0, 0.0, 1, 1, 2.5, -3, Double.NaN, Double.POSITIVE_INFINITY,
        Double.NEGATIVE_INFINITY};
    double[] key = new double[n];
    for (int i = 0; i < n; i++) {
      key[i] = r.nextInt(3) == 0 ? r.nextDouble() * 10 : pool[r.nextInt(pool.length)];
    }
    RankedSet byKey = new RankedSet(key);
    RankedSet byComparator = new RankedSet(n, (a, b) -> Double.compare(key[a], key[b]));
    for (int i = 0; i < n; i++) {
      byKey.add(i);
      byComparator.add(i);
    }
    assertEquals(order(byComparator), order(byKey));
  }

  private static List<Integer> order(RankedSet s) {
    List<Integer> out = new ArrayList<>();
    for (int rank = s.firstRank(); rank >= 0; rank = s.nextRank(rank)) {
      out.add(s.jobAt(rank));
    }
    return out;
  }
}
