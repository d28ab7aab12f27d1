package io.hyperframes.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.BitSet;
import java.util.SplittableRandom;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.LongRange;

/**
 * The loader's contract over 100 000 samples with random worker failures and random close
 * points: no sample lost or duplicated, no deadlock, no thread left behind.
 */
class PrefetcherProperties {

  static final int SAMPLES = 100_000;
  static final int PER_BATCH = 100;

  @Property(tries = 30)
  void everySampleExactlyOnceDespiteFailuresAndEarlyClose(
      @ForAll @IntRange(min = 1, max = 8) int workers,
      @ForAll @IntRange(min = 1, max = 16) int depth,
      @ForAll @IntRange(min = 0, max = 50) int failurePerMille,
      @ForAll @IntRange(min = 0, max = 1200) int closeAfter,
      @ForAll @LongRange(min = 0, max = 1000) long seed) {
    int before = loaderThreads();
    int batches = SAMPLES / PER_BATCH;
    BatchSource<int[]> source = new BatchSource<>() {
      @Override
      public int batches() {
        return batches;
      }

      @Override
      public int[] batch(int epoch, int index) {
        SplittableRandom r = new SplittableRandom(seed * 1_000_003L + index * 31L
            + System.nanoTime());
        if (r.nextInt(1000) < failurePerMille) {
          throw new IllegalStateException("injected failure in batch " + index);
        }
        int[] ids = new int[PER_BATCH];
        for (int i = 0; i < PER_BATCH; i++) {
          ids[i] = index * PER_BATCH + i;
        }
        return ids;
      }
    };
    BitSet seen = new BitSet(SAMPLES);
    int[] failures = new int[1];
    int[] delivered = new int[1];
    assertTimeoutPreemptively(Duration.ofSeconds(60), () -> {
      Prefetcher<int[]> p = new Prefetcher<>(source, workers, depth, "test-loader");
      try {
        while (p.hasNext() && delivered[0] < closeAfter) {
          int[] ids;
          try {
            ids = p.next();
          } catch (PrefetchException e) {
            failures[0]++;
            assertTrue(e.getCause() instanceof IllegalStateException, "cause kept");
            continue;
          }
          for (int id : ids) {
            assertTrue(!seen.get(id), "sample " + id + " delivered twice");
            seen.set(id);
          }
          delivered[0]++;
        }
      } finally {
        p.close();
      }
    });
    int expectedBatches = Math.min(closeAfter, batches);
    assertEquals(expectedBatches * PER_BATCH, seen.cardinality(), "samples lost");
    assertEquals(expectedBatches * PER_BATCH, seen.nextClearBit(0), "not a prefix in order");
    assertEquals(before, loaderThreads(), "worker threads left behind");
  }

  @Property(tries = 20)
  void resetStartsAFreshEpochInOrder(@ForAll @IntRange(min = 1, max = 6) int workers,
      @ForAll @IntRange(min = 0, max = 40) int resetAfter) {
    BatchSource<Integer> source = new BatchSource<>() {
      @Override
      public int batches() {
        return 40;
      }

      @Override
      public Integer batch(int epoch, int index) {
        return epoch * 1000 + index;
      }
    };
    try (Prefetcher<Integer> p = new Prefetcher<>(source, workers, 4, "test-loader")) {
      for (int i = 0; i < resetAfter; i++) {
        assertEquals(i, p.next().intValue());
      }
      p.reset();
      for (int i = 0; i < 40; i++) {
        assertEquals(1000 + i, p.next().intValue(), "epoch 1, batch " + i);
      }
      assertTrue(!p.hasNext());
    }
  }

  static int loaderThreads() {
    return (int) Thread.getAllStackTraces().keySet().stream()
        .filter(t -> t.getName().startsWith("test-loader") && t.isAlive()).count();
  }
}
