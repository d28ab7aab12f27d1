package io.hyperframes.nd4j.data;

import static com.google.common.base.Preconditions.checkArgument;

import io.hyperframes.runtime.BatchSource;
import org.nd4j.linalg.dataset.api.MultiDataSet;
import org.nd4j.linalg.dataset.api.MultiDataSetPreProcessor;
import org.nd4j.linalg.dataset.api.iterator.MultiDataSetIterator;

/**
 * The {@link MultiDataSetIterator} form of {@link PrefetchingDataSetIterator}, for DL4J
 * {@code ComputationGraph}s: same workers, ordering, failure and close contract.
 */
public final class PrefetchingMultiDataSetIterator
    extends PrefetchingIterator<MultiDataSet, MultiDataSetPreProcessor>
    implements MultiDataSetIterator {
  private static final long serialVersionUID = 1L;

  /**
   * Starts {@code workers} threads building batches of {@code source}, at most {@code depth}
   * ahead.
   */
  public PrefetchingMultiDataSetIterator(BatchSource<MultiDataSet> source, int workers,
      int depth) {
    super(source, MultiDataSetPreProcessor::preProcess, MultiDataSet::detach, workers,
        depth);
  }

  /** Batches are built ahead at the source's size: {@code num} is not used. */
  @Override
  public MultiDataSet next(int num) {
    checkArgument(num > 0, "num: must be > 0, got %s", num);
    return next();
  }
}
