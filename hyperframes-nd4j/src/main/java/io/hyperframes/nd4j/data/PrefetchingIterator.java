package io.hyperframes.nd4j.data;

import static com.google.common.base.Preconditions.checkArgument;

import io.hyperframes.runtime.BatchSource;
import io.hyperframes.runtime.Prefetcher;
import java.io.Serializable;
import java.util.function.BiConsumer;
import java.util.function.Consumer;

/**
 * What the DL4J iterators over a {@link Prefetcher} share: the workers, the pre-processor
 * applied on them before each batch is detached, and the iteration, reset and close contract.
 *
 * @param <T> the batch type ({@code DataSet}, {@code MultiDataSet})
 * @param <P> its pre-processor type
 */
abstract class PrefetchingIterator<T, P> implements Serializable, AutoCloseable {
  private static final long serialVersionUID = 1L;

  private final transient Prefetcher<Built<T, P>> prefetcher;
  private final transient BiConsumer<P, T> preProcess;
  private transient volatile P preProcessor;

  /** A batch and the pre-processor its worker applied (null: none was set yet). */
  private record Built<T, P>(T batch, P applied) {}

  /**
   * Starts {@code workers} threads building batches of {@code source}, at most {@code depth}
   * ahead; each batch goes through the pre-processor set then ({@code preProcess}) and is
   * detached from any workspace ({@code detach}).
   */
  PrefetchingIterator(BatchSource<T> source, BiConsumer<P, T> preProcess, Consumer<T> detach,
      int workers, int depth) {
    checkArgument(source != null, "source: must be given");
    this.preProcess = preProcess;
    BatchSource<Built<T, P>> built = new BatchSource<>() {
      @Override
      public int batches() {
        return source.batches();
      }

      @Override
      public Built<T, P> batch(int epoch, int index) throws Exception {
        T b = source.batch(epoch, index);
        if (b == null) {
          return null;
        }
        P p = preProcessor;
        if (p != null) {
          preProcess.accept(p, b);
        }
        detach.accept(b);
        return new Built<>(b, p);
      }
    };
    this.prefetcher = new Prefetcher<>(built, workers, depth, "hyperframes-loader");
  }

  public boolean hasNext() {
    return prefetcher.hasNext();
  }

  /**
   * The next batch, pre-processed: the workers start building at construction, so a batch built
   * before {@link #setPreProcessor} was first called gets the pre-processor here, on the calling
   * thread.
   */
  public T next() {
    Built<T, P> b = prefetcher.next();
    if (b == null) {
      return null;
    }
    P p = preProcessor;
    if (b.applied() == null && p != null) {
      preProcess.accept(p, b.batch());
    }
    return b.batch();
  }

  /** True: {@link #reset()} starts the source's batches again. */
  public boolean resetSupported() {
    return true;
  }

  /** False, so that DL4J does not wrap this iterator in its own single-threaded prefetcher. */
  public boolean asyncSupported() {
    return false;
  }

  public void reset() {
    prefetcher.reset();
  }

  /**
   * Applied on the worker threads to the batches they build from now on (and by {@link #next()}
   * to those built before any was set). Replacing one mid-epoch leaves the batches already built
   * with the old one.
   */
  public void setPreProcessor(P preProcessor) {
    this.preProcessor = preProcessor;
  }

  public P getPreProcessor() {
    return preProcessor;
  }

  /** Stops the workers. */
  @Override
  public void close() {
    prefetcher.close();
  }
}
