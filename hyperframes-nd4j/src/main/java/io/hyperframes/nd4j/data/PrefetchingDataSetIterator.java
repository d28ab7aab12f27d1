package io.hyperframes.nd4j.data;

import static com.google.common.base.Preconditions.checkArgument;
import static com.google.common.base.Preconditions.checkState;

import io.hyperframes.runtime.Prefetcher;
import io.hyperframes.runtime.BatchSource;
import java.util.List;
import org.nd4j.linalg.dataset.DataSet;
import org.nd4j.linalg.dataset.api.DataSetPreProcessor;
import org.nd4j.linalg.dataset.api.iterator.DataSetIterator;

/**
 * A {@link DataSetIterator} that builds batches on N worker threads ahead of training (see
 * {@link Prefetcher} for the ordering, exactly-once, failure and close contract). Batches are
 * built outside any ND4J workspace and detached, so they stay valid however long training keeps
 * them. {@link #asyncSupported()} is false so that DL4J does not wrap it in its own
 * single-threaded prefetcher. Close it (try-with-resources) to stop the workers.
 */
public final class PrefetchingDataSetIterator
    extends PrefetchingIterator<DataSet, DataSetPreProcessor> implements DataSetIterator {
  private static final long serialVersionUID = 1L;

  private final int batchSize;
  private final int inputColumns;
  private final int totalOutcomes;

  private PrefetchingDataSetIterator(Builder b) {
    super(b.source, DataSetPreProcessor::preProcess, DataSet::detach, b.workers, b.depth);
    this.batchSize = b.batchSize;
    this.inputColumns = b.inputColumns;
    this.totalOutcomes = b.totalOutcomes;
  }

  /** A builder over {@code source}. */
  public static Builder builder(BatchSource<DataSet> source) {
    checkArgument(source != null, "source: must be given");
    return new Builder(source);
  }

  /** Options; each may be set once. */
  public static final class Builder {
    private final BatchSource<DataSet> source;
    private int workers = -1;
    private int depth = -1;
    private int batchSize = -1;
    private int inputColumns = -1;
    private int totalOutcomes = -1;

    private Builder(BatchSource<DataSet> source) {
      this.source = source;
    }

    /** Worker threads (default 2; the golden parameter dataLoaderWorkers). */
    public Builder workers(int n) {
      checkState(workers < 0, "workers: already set to %s", workers);
      checkArgument(n >= 1 && n <= 256, "workers: must be in [1, 256], got %s", n);
      workers = n;
      return this;
    }

    /** Batches built ahead (default 2 per worker; the golden parameter prefetchDepth). */
    public Builder depth(int d) {
      checkState(depth < 0, "depth: already set to %s", depth);
      checkArgument(d >= 1 && d <= 4096, "depth: must be in [1, 4096], got %s", d);
      depth = d;
      return this;
    }

    /** Examples per batch, reported by {@link #batch()}. */
    public Builder batchSize(int n) {
      batchSize = once("batchSize", batchSize, n);
      return this;
    }

    /** Feature columns, reported by {@link #inputColumns()}. */
    public Builder inputColumns(int n) {
      inputColumns = once("inputColumns", inputColumns, n);
      return this;
    }

    /** Label columns, reported by {@link #totalOutcomes()}. */
    public Builder totalOutcomes(int n) {
      totalOutcomes = once("totalOutcomes", totalOutcomes, n);
      return this;
    }

    /** {@code value} for a count set at most once ({@code current} < 0: not yet) and > 0. */
    private static int once(String field, int current, int value) {
      checkState(current < 0, "%s: already set to %s", field, current);
      checkArgument(value >= 1, "%s: must be > 0, got %s", field, value);
      return value;
    }

    /** Starts the workers. */
    public PrefetchingDataSetIterator build() {
      checkState(batchSize > 0, "batchSize: must be set");
      if (workers < 0) {
        workers = 2;
      }
      if (depth < 0) {
        depth = 2 * workers;
      }
      return new PrefetchingDataSetIterator(this);
    }
  }

  /**
   * The next batch; {@code num} must equal the source's batch size (batches are built ahead).
   */
  @Override
  public DataSet next(int num) {
    checkArgument(num == batchSize, "num: batches are built ahead with %s examples, got %s",
        batchSize, num);
    return next();
  }

  @Override
  public int inputColumns() {
    return inputColumns;
  }

  @Override
  public int totalOutcomes() {
    return totalOutcomes;
  }

  @Override
  public int batch() {
    return batchSize;
  }

  @Override
  public List<String> getLabels() {
    return null;
  }
}
