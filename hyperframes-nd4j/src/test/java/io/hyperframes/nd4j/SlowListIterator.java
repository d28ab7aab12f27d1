package io.hyperframes.nd4j;

import java.util.List;
import org.deeplearning4j.datasets.iterator.utilty.ListDataSetIterator;
import org.nd4j.linalg.dataset.DataSet;

/**
 * Test fixture: DL4J's list iterator with a loader that takes {@code millis} for every batch, so
 * that waiting for data dominates a step (for the meters' {@code loader-bound} finding).
 */
public final class SlowListIterator extends ListDataSetIterator<DataSet> {
  private static final long serialVersionUID = 1L;

  private final long millis;

  /** {@code batches} one at a time, each after {@code millis} of sleep. */
  public SlowListIterator(List<DataSet> batches, long millis) {
    super(batches, 1);
    this.millis = millis;
  }

  @Override
  public DataSet next() {
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    return super.next();
  }
}
