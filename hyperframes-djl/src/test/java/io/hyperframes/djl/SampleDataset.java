package io.hyperframes.djl;

import ai.djl.ndarray.NDManager;
import ai.djl.training.dataset.RandomAccessDataset;
import ai.djl.training.dataset.Record;
import ai.djl.util.Progress;
import java.io.IOException;

/**
 * A dataset of {@code size} samples read one by one through {@link #read} (the fixtures below:
 * a slow decoder, a flaky source).
 */
abstract class SampleDataset extends RandomAccessDataset {
  private final long size;

  SampleDataset(long size, int batch) {
    super(new Settings().setSampling(batch, false));
    this.size = size;
  }

  private static final class Settings extends BaseBuilder<Settings> {
    @Override
    protected Settings self() {
      return this;
    }
  }

  abstract Record read(NDManager manager, long index) throws IOException;

  @Override
  public final Record get(NDManager manager, long index) throws IOException {
    return read(manager, index);
  }

  @Override
  protected long availableSize() {
    return size;
  }

  @Override
  public void prepare(Progress progress) {}
}
