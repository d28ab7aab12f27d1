package io.hyperframes.runtime;

/**
 * Batches addressable by index, produced independently (so that several workers can build them at
 * once). Implementations must be thread-safe for concurrent {@link #batch} calls on different
 * indices.
 *
 * @param <T> the batch type (ND4J {@code DataSet} or {@code MultiDataSet})
 */
public interface BatchSource<T> {

  /** Batches per epoch. */
  int batches();

  /**
   * Builds batch {@code index} of epoch {@code epoch} (0-based). Called from worker threads; an
   * exception is delivered to the consumer in place of the batch.
   */
  T batch(int epoch, int index) throws Exception;

  /**
   * This source with {@code prepare} applied to every non-null batch, on the worker thread that
   * built it (pre-processing, detaching from workspaces).
   */
  default BatchSource<T> preparing(java.util.function.Consumer<? super T> prepare) {
    BatchSource<T> self = this;
    return new BatchSource<>() {
      @Override
      public int batches() {
        return self.batches();
      }

      @Override
      public T batch(int epoch, int index) throws Exception {
        T b = self.batch(epoch, index);
        if (b != null) {
          prepare.accept(b);
        }
        return b;
      }
    };
  }
}
