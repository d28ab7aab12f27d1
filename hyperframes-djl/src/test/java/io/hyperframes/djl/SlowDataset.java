package io.hyperframes.djl;

import ai.djl.ndarray.NDManager;
import ai.djl.training.dataset.RandomAccessDataset;
import ai.djl.training.dataset.Record;
import ai.djl.util.Progress;
import java.io.IOException;

/** A dataset whose every sample costs {@code nanos} of CPU before it is read (a slow decoder). */
final class SlowDataset extends RandomAccessDataset {
  private final RandomAccessDataset inner;
  private final long nanos;

  SlowDataset(RandomAccessDataset inner, long nanos, int batch) {
    super(new Builder().setSampling(batch, false));
    this.inner = inner;
    this.nanos = nanos;
  }

  private static final class Builder extends BaseBuilder<Builder> {
    @Override
    protected Builder self() {
      return this;
    }
  }

  @Override
  public Record get(NDManager manager, long index) throws IOException {
    long end = System.nanoTime() + nanos;
    while (System.nanoTime() < end) {
      Thread.onSpinWait();
    }
    return inner.get(manager, index);
  }

  @Override
  protected long availableSize() {
    return inner.size();
  }

  @Override
  public void prepare(Progress progress) {}
}
