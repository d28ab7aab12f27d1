package io.hyperframes.djl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.djl.Model;
import ai.djl.ndarray.NDManager;
import ai.djl.ndarray.types.Shape;
import ai.djl.training.dataset.ArrayDataset;
import ai.djl.training.dataset.Batch;
import ai.djl.training.dataset.Record;
import io.hyperframes.runtime.PrefetchException;
import java.io.IOException;
import java.time.Duration;
import java.util.BitSet;
import java.util.Iterator;
import java.util.concurrent.atomic.AtomicIntegerArray;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.LongRange;
import net.jqwik.api.lifecycle.AfterContainer;
import net.jqwik.api.lifecycle.BeforeContainer;

/**
 * The DJL prefetcher, as the DL4J one: 100 000 samples, random worker failures and close
 * points; every sample exactly once per completed epoch, none twice in a cut one, no deadlock,
 * no worker thread left behind.
 */
class PrefetchingDatasetProperties {

  private static final int SAMPLES = 100_000;
  private static Model model;
  private static ArrayDataset rows;

  @BeforeContainer
  static void data() {
    model = Model.newInstance("prefetch-property", "PyTorch");
    NDManager m = model.getNDManager();
    float[] x = new float[SAMPLES];
    for (int i = 0; i < SAMPLES; i++) {
      x[i] = i;
    }
    rows = new ArrayDataset.Builder().setData(m.create(x, new Shape(SAMPLES, 1)))
        .optLabels(m.create(x, new Shape(SAMPLES))).setSampling(1, false).build();
  }

  @AfterContainer
  static void release() {
    model.close();
  }

  /** Fails a sample's read on its first attempts, for a seeded share of the samples. */
  static final class Flaky extends SampleDataset {
    private final AtomicIntegerArray attempts = new AtomicIntegerArray(SAMPLES);
    private final long seed;
    private final int failPerMille;

    Flaky(long seed, int failPerMille) {
      super(SAMPLES, 1);
      this.seed = seed;
      this.failPerMille = failPerMille;
    }

    @Override
    Record read(NDManager manager, long index) throws IOException {
      int attempt = attempts.getAndIncrement((int) index);
      long h = (index * 0x9E3779B97F4A7C15L) ^ (seed * 0xC2B2AE3D27D4EB4FL) ^ attempt;
      h ^= h >>> 29;
      h *= 0xBF58476D1CE4E5B9L;
      h ^= h >>> 32;
      if (attempt < 2 && Math.floorMod(h, 1000) < failPerMille) {
        throw new IOException("injected failure at sample " + index + ", attempt " + attempt);
      }
      return rows.get(manager, index);
    }
  }

  @Property(tries = 10)
  void everySampleOncePerEpochThroughFailuresAndClose(
      @ForAll @IntRange(min = 1, max = 4) int workers,
      @ForAll @IntRange(min = 1, max = 16) int depth,
      @ForAll @IntRange(min = 100, max = 4096) int batch,
      @ForAll @IntRange(min = 0, max = 3) int failPerMille,
      @ForAll @LongRange(min = 0, max = 1_000_000) long seed,
      @ForAll @IntRange(min = 0, max = 1500) int closePermille) {
    assertTimeoutPreemptively(Duration.ofSeconds(120), () -> {
      Flaky source = new Flaky(seed, failPerMille);
      // Close after this share of two epochs' batches (past 1000 ‰: never, both epochs run).
      int perEpoch = (SAMPLES + batch - 1) / batch;
      int closeAfter = closePermille > 1000 ? Integer.MAX_VALUE
          : (int) ((long) closePermille * 2 * perEpoch / 1000);
      int delivered = 0;
      int failures = 0;
      try (NDManager m = model.getNDManager().newSubManager();
          PrefetchingDataset ds = PrefetchingDataset.builder(source).batchSize(batch)
              .workers(workers).depth(depth).shuffle(seed).build()) {
        int epochs = 0;
        outer:
        while (epochs < 2) {
          BitSet seen = new BitSet(SAMPLES);
          Iterator<Batch> it = ds.getData(m).iterator();
          while (it.hasNext()) {
            if (delivered == closeAfter) {
              break outer;
            }
            Batch b;
            try {
              b = it.next();
            } catch (PrefetchException e) {
              failures++;
              assertTrue(e.getCause() instanceof IOException, e.toString());
              continue;
            }
            float[] values = b.getData().head().toFloatArray();
            assertEquals(b.getSize(), values.length);
            for (float v : values) {
              int i = (int) v;
              assertFalse(seen.get(i), "sample " + i + " twice in epoch " + epochs);
              seen.set(i);
            }
            b.close();
            delivered++;
          }
          assertEquals(SAMPLES, seen.cardinality(), "epoch " + epochs + " is complete");
          epochs++;
        }
      }
      assertTrue(failPerMille > 0 || failures == 0);
      for (Thread t : Thread.getAllStackTraces().keySet()) {
        assertFalse(t.getName().startsWith("hyperframes-djl-prefetch") && t.isAlive(),
            "worker left behind: " + t.getName());
      }
    });
  }
}
