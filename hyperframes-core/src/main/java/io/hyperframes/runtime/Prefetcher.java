package io.hyperframes.runtime;

import static com.google.common.base.Preconditions.checkArgument;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Builds batches on N worker threads ahead of the consumer and delivers them in order, each
 * exactly once per epoch, with at most {@code depth} batches built but not yet consumed.
 *
 * <p>Contract: {@link #next()} returns batch 0, 1, ... of the epoch in order; a worker's exception
 * is thrown to the consumer as a {@link PrefetchException} at that batch's position, and the next
 * call retries the batch; {@link #reset()} starts a new epoch (batches already built for the old
 * one are dropped); {@link #close()} stops and joins every worker and never blocks on a full
 * queue. Batches built but never delivered (dropped by {@code reset()} or {@code close()}, or
 * finished by a worker after either) go to the {@code discard} callback when one is given, so
 * that batches owning native memory (DJL's) are released. Thread-safe for one consumer thread.
 */
public final class Prefetcher<T> implements AutoCloseable {

  /*
   * One lock guards the epoch state. Workers claim the lowest unclaimed index below
   * delivered + depth, build it without the lock, and store the result tagged with the epoch it
   * was claimed in; results of an old epoch are dropped. The consumer waits for the result of
   * `delivered`. A failed batch is stored as its Throwable; taking it rethrows and re-queues the
   * index for retry (`retry`), which workers claim first.
   */

  private final BatchSource<T> source;
  private final int depth;
  private final java.util.function.Consumer<? super T> discard;
  private final ReentrantLock lock = new ReentrantLock();
  private final Condition changed = lock.newCondition();
  private final List<Thread> workers = new ArrayList<>();
  private final Map<Integer, Object> results = new HashMap<>();
  private int epoch;
  private int nextClaim;
  private int delivered;
  private int retry = -1;
  private boolean closed;

  /**
   * Starts {@code workers} threads named {@code name-i}.
   *
   * @throws IllegalArgumentException when an argument is out of range
   */
  public Prefetcher(BatchSource<T> source, int workers, int depth, String name) {
    this(source, workers, depth, name, b -> { });
  }

  /**
   * As {@link #Prefetcher(BatchSource, int, int, String)}, handing every built but undelivered
   * batch to {@code discard} (on the thread that dropped it).
   */
  public Prefetcher(BatchSource<T> source, int workers, int depth, String name,
      java.util.function.Consumer<? super T> discard) {
    checkArgument(source != null, "source: must be given");
    checkArgument(discard != null, "discard: must be given");
    this.discard = discard;
    checkArgument(workers >= 1 && workers <= 256, "workers: must be in [1, 256], got %s", workers);
    checkArgument(depth >= 1 && depth <= 4096, "depth: must be in [1, 4096], got %s", depth);
    checkArgument(source.batches() >= 0, "source.batches: must be >= 0, got %s",
        source.batches());
    this.source = source;
    this.depth = depth;
    for (int i = 0; i < workers; i++) {
      Thread t = new Thread(this::work, name + "-" + i);
      t.setDaemon(true);
      this.workers.add(t);
    }
    this.workers.forEach(Thread::start);
  }

  private void work() {
    while (true) {
      int index;
      int claimedEpoch;
      lock.lock();
      try {
        while (!closed && retry < 0 && (nextClaim >= source.batches()
            || nextClaim >= delivered + depth)) {
          changed.awaitUninterruptibly();
        }
        if (closed) {
          return;
        }
        if (retry >= 0) {
          index = retry;
          retry = -1;
        } else {
          index = nextClaim++;
        }
        claimedEpoch = epoch;
      } finally {
        lock.unlock();
      }
      Object result;
      try {
        result = source.batch(claimedEpoch, index);
        if (result == null) {
          result = new Failure(new NullPointerException("source returned null for batch "
              + index));
        }
      } catch (Throwable t) {
        result = new Failure(t);
      }
      boolean kept = false;
      lock.lock();
      try {
        if (claimedEpoch == epoch && !closed) {
          results.put(index, result);
          kept = true;
          changed.signalAll();
        }
      } finally {
        lock.unlock();
      }
      if (!kept) {
        discardAll(List.of(result));
      }
    }
  }

  @SuppressWarnings("unchecked")
  private void discardAll(java.util.Collection<Object> dropped) {
    for (Object r : dropped) {
      if (!(r instanceof Failure)) {
        try {
          discard.accept((T) r);
        } catch (RuntimeException e) {
          // A failing release must not stop the others or the caller's reset/close.
        }
      }
    }
  }

  private record Failure(Throwable cause) {}

  /** Whether the epoch has batches left. */
  public boolean hasNext() {
    lock.lock();
    try {
      return !closed && delivered < source.batches();
    } finally {
      lock.unlock();
    }
  }

  /**
   * The next batch of the epoch, waiting for a worker if needed.
   *
   * @throws PrefetchException when the worker building it failed (call again to retry)
   * @throws NoSuchElementException at the end of the epoch
   * @throws IllegalStateException after {@link #close()}
   */
  @SuppressWarnings("unchecked")
  public T next() {
    lock.lock();
    try {
      if (closed) {
        throw new IllegalStateException("prefetcher: closed");
      }
      if (delivered >= source.batches()) {
        throw new NoSuchElementException("prefetcher: epoch finished after "
            + source.batches() + " batches");
      }
      Object r;
      while ((r = results.remove(delivered)) == null) {
        if (closed) {
          throw new IllegalStateException("prefetcher: closed while waiting");
        }
        changed.awaitUninterruptibly();
      }
      if (r instanceof Failure f) {
        retry = delivered;
        changed.signalAll();
        throw new PrefetchException(delivered, f.cause());
      }
      delivered++;
      changed.signalAll();
      return (T) r;
    } finally {
      lock.unlock();
    }
  }

  /** Starts a new epoch; batches built for the current one are dropped. */
  public void reset() {
    List<Object> dropped;
    lock.lock();
    try {
      if (closed) {
        throw new IllegalStateException("prefetcher: closed");
      }
      epoch++;
      dropped = new ArrayList<>(results.values());
      results.clear();
      nextClaim = 0;
      delivered = 0;
      retry = -1;
      changed.signalAll();
    } finally {
      lock.unlock();
    }
    discardAll(dropped);
  }

  /** Batches delivered in the current epoch. */
  public int position() {
    lock.lock();
    try {
      return delivered;
    } finally {
      lock.unlock();
    }
  }

  /** The source's batches per epoch. */
  public int batches() {
    return source.batches();
  }

  /**
   * Stops the workers and waits for them (each finishes the batch it is building). Idempotent.
   */
  @Override
  public void close() {
    List<Object> dropped;
    lock.lock();
    try {
      closed = true;
      dropped = new ArrayList<>(results.values());
      results.clear();
      changed.signalAll();
    } finally {
      lock.unlock();
    }
    discardAll(dropped);
    for (Thread t : workers) {
      try {
        t.join(TimeUnit.SECONDS.toMillis(60));
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      }
    }
  }
}
