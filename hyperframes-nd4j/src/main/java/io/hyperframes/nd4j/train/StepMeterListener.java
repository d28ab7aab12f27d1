package io.hyperframes.nd4j.train;

import static com.google.common.base.Preconditions.checkArgument;

import io.hyperframes.runtime.MeteredLoop;
import io.hyperframes.runtime.StepMeter;
import java.util.List;
import java.util.function.Supplier;
import org.deeplearning4j.datasets.iterator.AsyncDataSetIterator;
import org.deeplearning4j.nn.api.Model;
import org.deeplearning4j.optimize.api.BaseTrainingListener;
import org.nd4j.linalg.dataset.DataSet;
import org.nd4j.linalg.dataset.api.DataSetPreProcessor;
import org.nd4j.linalg.dataset.api.iterator.DataSetIterator;

/**
 * Feeds a {@link StepMeter} from DL4J's training callbacks.
 *
 * <p>DL4J has no callback before the forward pass ({@code onForwardPass} comes after it, with the
 * activations), so the listener cannot see where the data wait ends. Pass the training iterator
 * through {@link #metered} and it measures the time spent waiting in {@code hasNext()} and
 * {@code next()}: data wait is that time, compute is the rest until the end of the backward pass,
 * optimizer from there to the end of the iteration. Without {@link #metered} the data wait is
 * recorded as zero and everything before the end of the backward pass counts as compute.
 *
 * <pre>{@code
 * StepMeterListener listener = new StepMeterListener(meter);
 * net.setListeners(listener);
 * net.fit(listener.metered(iterator), epochs);
 * }</pre>
 */
public final class StepMeterListener extends BaseTrainingListener implements MeteredLoop {

  /** Queue DL4J's {@code fit} gives an iterator that supports asynchronous prefetch (CPU). */
  private static final int DL4J_ASYNC_QUEUE = 2;

  private final StepMeter meter;
  private long iterationEnd;
  private long backwardEnd;
  private long waitNanos;

  /** A listener recording into {@code meter}. */
  public StepMeterListener(StepMeter meter) {
    checkArgument(meter != null, "meter: must be given");
    this.meter = meter;
  }

  @Override
  public StepMeter meter() {
    return meter;
  }

  /**
   * {@code iterator} with the time spent in {@code hasNext()} and {@code next()} charged to this
   * listener's data wait. DL4J's {@code fit} wraps an iterator that supports asynchronous
   * prefetch in its own queue of 2; it cannot wrap this one (its wait would then be hidden on
   * DL4J's thread), so this method applies the same wrapping inside, keeping DL4J's default
   * behaviour.
   *
   * @throws IllegalArgumentException when {@code iterator} is null
   */
  @SuppressWarnings("deprecation") // the class DL4J's own fit uses for this wrapping in 1.0.0-M2.1
  public DataSetIterator metered(DataSetIterator iterator) {
    checkArgument(iterator != null, "iterator: must be given");
    DataSetIterator inner = iterator.asyncSupported()
        ? new AsyncDataSetIterator(iterator, DL4J_ASYNC_QUEUE, true) : iterator;
    return new Metered(inner);
  }

  @Override
  public void onEpochStart(Model model) {
    iterationEnd = System.nanoTime();
  }

  @Override
  public void onBackwardPass(Model model) {
    backwardEnd = System.nanoTime();
  }

  @Override
  public void iterationDone(Model model, int iteration, int epoch) {
    long now = System.nanoTime();
    long b = backwardEnd > 0 ? backwardEnd : now;
    long start = iterationEnd > 0 ? iterationEnd : b;
    long total = Math.max(0, now - start);
    long data = Math.min(waitNanos, total);
    long optimizer = Math.min(Math.max(0, now - b), total - data);
    meter.record(data, total - data - optimizer, optimizer, total, model.batchSize());
    iterationEnd = now;
    backwardEnd = 0;
    waitNanos = 0;
  }

  /** Charges the time in hasNext/next to the listener; everything else is delegated. */
  private final class Metered implements DataSetIterator {
    private static final long serialVersionUID = 1L;

    private final DataSetIterator inner;

    Metered(DataSetIterator inner) {
      this.inner = inner;
    }

    /** Runs {@code read} and charges its time to the data wait. */
    private <T> T timed(Supplier<T> read) {
      long t0 = System.nanoTime();
      try {
        return read.get();
      } finally {
        waitNanos += System.nanoTime() - t0;
      }
    }

    @Override
    public boolean hasNext() {
      return timed(inner::hasNext);
    }

    @Override
    public DataSet next() {
      return timed(inner::next);
    }

    @Override
    public DataSet next(int num) {
      return timed(() -> inner.next(num));
    }

    @Override
    public int inputColumns() {
      return inner.inputColumns();
    }

    @Override
    public int totalOutcomes() {
      return inner.totalOutcomes();
    }

    @Override
    public boolean resetSupported() {
      return inner.resetSupported();
    }

    @Override
    public boolean asyncSupported() {
      return false;
    }

    @Override
    public void reset() {
      inner.reset();
    }

    @Override
    public int batch() {
      return inner.batch();
    }

    @Override
    public void setPreProcessor(DataSetPreProcessor preProcessor) {
      inner.setPreProcessor(preProcessor);
    }

    @Override
    public DataSetPreProcessor getPreProcessor() {
      return inner.getPreProcessor();
    }

    @Override
    public List<String> getLabels() {
      return inner.getLabels();
    }
  }
}
