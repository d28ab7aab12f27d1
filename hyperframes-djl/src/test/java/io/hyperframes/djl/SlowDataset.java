package io.hyperframes.djl;

import ai.djl.ndarray.NDManager;
import ai.djl.training.dataset.RandomAccessDataset;
import ai.djl.training.dataset.Record;
import java.io.IOException;

/** A dataset whose every sample costs {@code nanos} of CPU before it is read (a slow decoder). */
final class SlowDataset extends SampleDataset {
  private final RandomAccessDataset inner;
  private final long nanos;

  SlowDataset(RandomAccessDataset inner, long nanos, int batch) {
    super(inner.size(), batch);
    this.inner = inner;
    this.nanos = nanos;
  }

  @Override
  Record read(NDManager manager, long index) throws IOException {
    long end = System.nanoTime() + nanos;
    while (System.nanoTime() < end) {
      Thread.onSpinWait();
    }
    return inner.get(manager, index);
  }
}
