package io.hyperframes.nd4j.data;

import static com.google.common.base.Preconditions.checkArgument;

import io.hyperframes.runtime.Prefetcher;
import io.hyperframes.runtime.BatchSource;
import org.nd4j.linalg.dataset.api.MultiDataSet;
import org.nd4j.linalg.dataset.api.MultiDataSetPreProcessor;
import org.nd4j.linalg.dataset.api.iterator.MultiDataSetIterator;

/**
 * The {@link MultiDataSetIterator} form of {@link PrefetchingDataSetIterator}, for DL4J
 * {@code ComputationGraph}s: same workers, ordering, failure and close contract.
 */
public final class PrefetchingMultiDataSetIterator implements MultiDataSetIterator,
    AutoCloseable {
  private static final long serialVersionUID = 1L;

  private final transient Prefetcher<MultiDataSet> prefetcher;
  private transient volatile MultiDataSetPreProcessor preProcessor;

  /**
   * Starts {@code workers} threads building batches of {@code source}, at most {@code depth}
   * ahead.
   */
  public PrefetchingMultiDataSetIterator(BatchSource<MultiDataSet> source, int workers,
      int depth) {
    checkArgument(source != null, "source: must be given");
    this.prefetcher = new Prefetcher<>(source.preparing(ds -> {
      MultiDataSetPreProcessor p = preProcessor;
      if (p != null) {
        p.preProcess(ds);
      }
      ds.detach();
    }), workers, depth, "hyperframes-loader");
  }

  @Override
  public boolean hasNext() {
    return prefetcher.hasNext();
  }

  @Override
  public MultiDataSet next() {
    return prefetcher.next();
  }

  /** Batches are built ahead at the source's size: {@code num} is not used. */
  @Override
  public MultiDataSet next(int num) {
    checkArgument(num > 0, "num: must be > 0, got %s", num);
    return next();
  }

  @Override
  public void setPreProcessor(MultiDataSetPreProcessor preProcessor) {
    this.preProcessor = preProcessor;
  }

  @Override
  public MultiDataSetPreProcessor getPreProcessor() {
    return preProcessor;
  }

  @Override
  public boolean resetSupported() {
    return true;
  }

  @Override
  public boolean asyncSupported() {
    return false;
  }

  @Override
  public void reset() {
    prefetcher.reset();
  }

  @Override
  public void close() {
    prefetcher.close();
  }
}
