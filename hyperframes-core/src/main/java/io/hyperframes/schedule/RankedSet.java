package io.hyperframes.schedule;

import java.util.BitSet;
import java.util.Comparator;
import java.util.Iterator;
import java.util.NoSuchElementException;

/**
 * A set of job indices iterated in a fixed order, for the waiting queue of a replay: the order
 * is a property of the jobs alone, so every job's rank is computed once and the set is a bit
 * set over ranks (constant-time add, remove and membership; iteration by next set bit).
 */
final class RankedSet implements Iterable<Integer> {
  private final int[] rankOf;
  private final int[] jobAt;
  private final BitSet bits;
  private int size;
  /** No rank below this is in the set (queues drain from the front: skip the empty words). */
  private int low;

  /** Ranks jobs {@code 0 .. n-1} by their index. */
  RankedSet(int n) {
    rankOf = new int[n];
    for (int i = 0; i < n; i++) {
      rankOf[i] = i;
    }
    jobAt = rankOf;
    bits = new BitSet(n);
  }

  /** Ranks jobs {@code 0 .. n-1} by {@code order}, ties by index. */
  RankedSet(int n, Comparator<Integer> order) {
    Integer[] sorted = new Integer[n];
    for (int i = 0; i < n; i++) {
      sorted[i] = i;
    }
    java.util.Arrays.sort(sorted, (a, b) -> {
      int c = order.compare(a, b);
      return c != 0 ? c : Integer.compare(a, b);
    });
    rankOf = new int[n];
    jobAt = new int[n];
    for (int r = 0; r < n; r++) {
      jobAt[r] = sorted[r];
      rankOf[sorted[r]] = r;
    }
    bits = new BitSet(n);
  }

  /**
   * Ranks jobs {@code 0 .. n-1} by {@code key} ({@link Double#compare} order), ties by index:
   * the ranks {@link #RankedSet(int, Comparator)} gives that order, from a primitive sort (a
   * sort of boxed indices through two comparators took a fifth of an SJF replay).
   */
  RankedSet(double[] key) {
    int n = key.length;
    double[] sorted = key.clone();
    java.util.Arrays.sort(sorted);
    // Equal keys share their first position; each takes the next slot from there, by index.
    int[] taken = new int[n];
    rankOf = new int[n];
    jobAt = new int[n];
    for (int i = 0; i < n; i++) {
      int lo = 0;
      int hi = n;
      while (lo < hi) {
        int mid = (lo + hi) >>> 1;
        if (Double.compare(sorted[mid], key[i]) < 0) {
          lo = mid + 1;
        } else {
          hi = mid;
        }
      }
      int r = lo + taken[lo]++;
      rankOf[i] = r;
      jobAt[r] = i;
    }
    bits = new BitSet(n);
  }

  boolean isEmpty() {
    return size == 0;
  }

  int size() {
    return size;
  }

  boolean contains(int job) {
    return bits.get(rankOf[job]);
  }

  void add(int job) {
    int r = rankOf[job];
    if (!bits.get(r)) {
      bits.set(r);
      size++;
      low = Math.min(low, r);
    }
  }

  void remove(int job) {
    if (bits.get(rankOf[job])) {
      bits.clear(rankOf[job]);
      size--;
    }
  }

  /** Removes and returns the first job in order; -1 when empty. */
  int pollFirst() {
    int job = first();
    if (job >= 0) {
      remove(job);
    }
    return job;
  }

  void clear() {
    bits.clear();
    size = 0;
    low = 0;
  }

  /** The rank after {@code rank} that holds a job; -1 when none. */
  int nextRank(int rank) {
    return bits.nextSetBit(rank + 1);
  }

  /** The job index at {@code rank}. */
  int jobAt(int rank) {
    return jobAt[rank];
  }

  /** The first rank that holds a job; -1 when empty. */
  int firstRank() {
    int r = bits.nextSetBit(low);
    low = r < 0 ? rankOf.length : r;
    return r;
  }

  /** The first job in order, as a job index; -1 when empty. */
  int first() {
    int r = bits.nextSetBit(low);
    low = r < 0 ? rankOf.length : r;
    return r < 0 ? -1 : jobAt[r];
  }

  @Override
  public Iterator<Integer> iterator() {
    return new Iterator<>() {
      int next = firstRank();

      @Override
      public boolean hasNext() {
        return next >= 0;
      }

      @Override
      public Integer next() {
        if (next < 0) {
          throw new NoSuchElementException();
        }
        int job = jobAt[next];
        next = bits.nextSetBit(next + 1);
        return job;
      }
    };
  }
}
