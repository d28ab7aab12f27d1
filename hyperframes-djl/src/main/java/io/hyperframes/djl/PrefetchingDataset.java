package io.hyperframes.djl;

import static com.google.common.base.Preconditions.checkArgument;
import static com.google.common.base.Preconditions.checkState;

import ai.djl.ndarray.NDList;
import ai.djl.ndarray.NDManager;
import ai.djl.training.dataset.Batch;
import ai.djl.training.dataset.Dataset;
import ai.djl.training.dataset.RandomAccessDataset;
import ai.djl.training.dataset.Record;
import ai.djl.translate.Batchifier;
import ai.djl.translate.TranslateException;
import ai.djl.util.Progress;
import io.hyperframes.runtime.BatchSource;
import io.hyperframes.runtime.Prefetcher;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.NoSuchElementException;
import java.util.SplittableRandom;

/**
 * A DJL {@link Dataset} that builds the batches of a {@link RandomAccessDataset} on N worker
 * threads ahead of the training loop, in order, each sample exactly once per epoch.
 *
 * <p>Contract (the {@link Prefetcher}'s): every {@code getData} call is one epoch over a fresh
 * seeded permutation (or the source order without {@code shuffle}); at most {@code depth}
 * batches are built but not yet taken (bounded memory); a worker's exception reaches the loop
 * as a {@link io.hyperframes.runtime.PrefetchException} at that batch's position, and calling
 * {@code next()} again retries it. Each batch owns its own {@link NDManager} (a sub-manager of
 * the one {@code getData} is given), so closing the batch after the step, as {@code EasyTrain}
 * does, releases everything it holds; batches built but never delivered (an epoch abandoned
 * part way, {@link #close()}) are closed by the dataset. {@link #close()} joins every worker and
 * never blocks on a full queue.
 *
 * <pre>{@code
 * try (PrefetchingDataset train = PrefetchingDataset.builder(arrayDataset)
 *     .batchSize(256).workers(4).depth(8).shuffle(42).build()) {
 *   EasyTrain.fit(trainer, epochs, train, null);
 * }
 * }</pre>
 *
 * <p>The source's {@code get(manager, index)} is called from worker threads; it must be safe
 * for concurrent calls on different indices (DJL's {@code ArrayDataset} is). One consumer at a
 * time: the next epoch begins when the previous iterator is abandoned or finished.
 */
public final class PrefetchingDataset implements Dataset, AutoCloseable {

  private final RandomAccessDataset source;
  private final int batchSize;
  private final int workers;
  private final int depth;
  private final Long seed;
  private final boolean dropLast;
  private final Batchifier dataBatchifier;
  private final Batchifier labelBatchifier;
  private final long samples;
  private final int batches;
  private volatile NDManager manager;
  private volatile long[] order;
  private Prefetcher<Batch> prefetcher;
  private volatile int epochs;
  private boolean closed;

  private PrefetchingDataset(Builder b) {
    this.source = b.source;
    this.batchSize = b.batchSize;
    this.workers = b.workers;
    this.depth = b.depth;
    this.seed = b.seed;
    this.dropLast = b.dropLast;
    this.dataBatchifier = b.dataBatchifier;
    this.labelBatchifier = b.labelBatchifier;
    this.samples = source.size();
    long n = dropLast ? samples / batchSize : (samples + batchSize - 1) / batchSize;
    checkArgument(n <= Integer.MAX_VALUE, "source.size: %s samples make more than 2^31 batches",
        samples);
    this.batches = (int) n;
  }

  /** A builder over {@code source} (its own sampler and batch size are not used). */
  public static Builder builder(RandomAccessDataset source) {
    checkArgument(source != null, "source: must be given");
    return new Builder(source);
  }

  /** Settings of a {@link PrefetchingDataset}. */
  public static final class Builder {
    private final RandomAccessDataset source;
    private int batchSize = 32;
    private int workers = 2;
    private int depth = 8;
    private Long seed;
    private boolean dropLast;
    private Batchifier dataBatchifier = Batchifier.STACK;
    private Batchifier labelBatchifier = Batchifier.STACK;

    private Builder(RandomAccessDataset source) {
      this.source = source;
    }

    /** Samples per batch (default 32). */
    public Builder batchSize(int n) {
      checkArgument(n >= 1, "batchSize: must be >= 1, got %s", n);
      this.batchSize = n;
      return this;
    }

    /** Worker threads building batches (default 2). */
    public Builder workers(int n) {
      checkArgument(n >= 1 && n <= 256, "workers: must be in [1, 256], got %s", n);
      this.workers = n;
      return this;
    }

    /** Batches built ahead at most (default 8): the memory bound. */
    public Builder depth(int n) {
      checkArgument(n >= 1 && n <= 4096, "depth: must be in [1, 4096], got %s", n);
      this.depth = n;
      return this;
    }

    /** A new permutation every epoch, from {@code seed} and the epoch number. */
    public Builder shuffle(long seed) {
      this.seed = seed;
      return this;
    }

    /** Drop the last, smaller batch of an epoch (default: keep it). */
    public Builder dropLast(boolean drop) {
      this.dropLast = drop;
      return this;
    }

    /** How samples are stacked into a batch (default {@link Batchifier#STACK} for both). */
    public Builder batchifiers(Batchifier data, Batchifier labels) {
      checkArgument(data != null && labels != null, "batchifiers: must be given");
      this.dataBatchifier = data;
      this.labelBatchifier = labels;
      return this;
    }

    /**
     * The dataset; its workers start with the first epoch.
     *
     * @throws IllegalArgumentException when the source is empty
     */
    public PrefetchingDataset build() {
      checkArgument(source.size() > 0, "source.size: must be > 0, got %s", source.size());
      return new PrefetchingDataset(this);
    }
  }

  /** Batches per epoch. */
  public int batchesPerEpoch() {
    return batches;
  }

  /** Samples of the source. */
  public long samples() {
    return samples;
  }

  @Override
  public synchronized Iterable<Batch> getData(NDManager manager) {
    checkArgument(manager != null, "manager: must be given");
    checkState(!closed, "dataset: closed");
    this.manager = manager;
    this.order = permutation(epochs++);
    if (prefetcher == null) {
      prefetcher = new Prefetcher<>(new Source(), workers, depth, "hyperframes-djl-prefetch",
          Batch::close);
    } else {
      prefetcher.reset();
    }
    Prefetcher<Batch> p = prefetcher;
    int epoch = epochs;
    return () -> {
      checkState(epoch == epochs, "dataset: this epoch was replaced by a later getData call");
      return new Iterator<>() {
        @Override
        public boolean hasNext() {
          return epoch == epochs && p.hasNext();
        }

        @Override
        public Batch next() {
          if (!hasNext()) {
            throw new NoSuchElementException("dataset: epoch finished");
          }
          return p.next();
        }
      };
    };
  }

  /** DJL's executor variant: the prefetcher's own workers build the batches, not the executor. */
  @Override
  public Iterable<Batch> getData(NDManager manager,
      java.util.concurrent.ExecutorService executor) {
    return getData(manager);
  }

  @Override
  public void prepare(Progress progress) throws IOException, TranslateException {
    source.prepare(progress);
  }

  private long[] permutation(int epoch) {
    long[] o = new long[(int) Math.min(samples, Integer.MAX_VALUE)];
    for (int i = 0; i < o.length; i++) {
      o[i] = i;
    }
    if (seed != null) {
      SplittableRandom rnd = new SplittableRandom(seed * 0x9E3779B97F4A7C15L + epoch);
      for (int i = o.length - 1; i > 0; i--) {
        int j = rnd.nextInt(i + 1);
        long t = o[i];
        o[i] = o[j];
        o[j] = t;
      }
    }
    return o;
  }

  /** Builds one batch in its own sub-manager. */
  private final class Source implements BatchSource<Batch> {
    @Override
    public int batches() {
      return batches;
    }

    @Override
    public Batch batch(int epoch, int index) throws Exception {
      long[] o = order;
      int from = index * batchSize;
      int to = (int) Math.min((long) from + batchSize, o.length);
      NDManager m = manager.newSubManager();
      try {
        List<NDList> data = new ArrayList<>(to - from);
        List<NDList> labels = new ArrayList<>(to - from);
        List<Long> indices = new ArrayList<>(to - from);
        for (int i = from; i < to; i++) {
          Record r = source.get(m, o[i]);
          data.add(r.getData());
          labels.add(r.getLabels());
          indices.add(o[i]);
        }
        NDList x = dataBatchifier.batchify(data.toArray(NDList[]::new));
        NDList y = labelBatchifier.batchify(labels.toArray(NDList[]::new));
        return new Batch(m, x, y, to - from, dataBatchifier, labelBatchifier, index, batches,
            indices);
      } catch (Exception | Error e) {
        m.close();
        throw e;
      }
    }
  }

  /** Stops and joins the workers; batches built but not taken are closed. Idempotent. */
  @Override
  public synchronized void close() {
    closed = true;
    if (prefetcher != null) {
      prefetcher.close();
    }
  }
}
