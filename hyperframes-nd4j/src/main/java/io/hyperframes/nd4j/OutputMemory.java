package io.hyperframes.nd4j;

import java.lang.ref.Cleaner;
import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.Map;
import org.bytedeco.javacpp.FloatPointer;
import org.bytedeco.javacpp.Pointer;
import org.bytedeco.javacpp.indexer.FloatIndexer;
import org.nd4j.linalg.api.buffer.DataBuffer;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.factory.Nd4j;

/**
 * Native memory for the FP32 arrays the kernels return, reused once the arrays are gone.
 *
 * <p>Why: ND4J M2.1 allocates each new buffer by clearing fresh pages, 2–14 ms for 4 MiB on this
 * project's machine, and even plain {@code malloc} hands out fresh pages whose first touch (a
 * page fault each, inside the kernel) costs about 2 ms per 4 MiB here; reused memory costs
 * neither (docs/performance.md, "Allocation"). So each returned array's memory goes back to a
 * per-size free list when the array is unreachable, and the next call of that size takes it.
 *
 * <p>Contract: an array handed out stays the caller's for as long as it, or any view of it, is
 * reachable (ND4J views hold their parent's buffer, and the buffer is what is tracked): its
 * memory is never handed out again before that. Only once the garbage collector has found the
 * buffer unreachable does a {@link Cleaner} return the memory. Keep the array, not only its raw
 * pointer. When more than {@link #MAX_OUTSTANDING_BYTES} handed out have not come back (nothing
 * has collected them yet; less while the pool is new), the pool asks for one collection ({@code System.gc()}, at most once
 * per {@link #MIN_GC_INTERVAL_NANOS}); a JVM with {@code -XX:+DisableExplicitGC} ignores that
 * and the pool then serves fresh memory until a collection happens on its own. Free memory above
 * {@link #MAX_FREE_BYTES} (twice the collection threshold, so that everything one collection
 * returns fits) goes back to the C allocator. There is no cap per size: a cap below what one
 * collection returns sends the steady state back to fresh memory. (35 000 calls of random
 * shapes, 70 GB in 6 s, held 2.6 GB resident with this pool against 19 GB for the same loop on
 * ND4J's allocator.) Thread-safe.
 */
final class OutputMemory {

  /**
   * Bytes handed out and not yet returned above which a collection is requested, once warm: the
   * threshold starts at {@link #FIRST_OUTSTANDING_BYTES} and doubles with each request, so that a
   * fresh pool reaches reuse after a few calls instead of after 256 MiB of fresh pages.
   */
  static final long MAX_OUTSTANDING_BYTES = 256L << 20;
  /** The first collection threshold. */
  static final long FIRST_OUTSTANDING_BYTES = 32L << 20;
  /** Bytes kept on the free lists at most. */
  static final long MAX_FREE_BYTES = 512L << 20;
  /** Least time between two requested collections. */
  static final long MIN_GC_INTERVAL_NANOS = 200_000_000L;

  private final Cleaner cleaner = Cleaner.create();
  private final Map<Long, ArrayDeque<FloatPointer>> free = new HashMap<>();
  private long freeBytes;
  private long outstandingBytes;
  private long threshold = FIRST_OUTSTANDING_BYTES;
  private long lastGc = System.nanoTime() - MIN_GC_INTERVAL_NANOS;
  private long reused;
  private long fresh;

  /**
   * A dense row-major FP32 [rows, cols] array of uninitialised memory (reused or fresh). Inside
   * an active ND4J workspace the workspace allocates, as ND4J would.
   */
  INDArray allocate(long rows, long cols) {
    long length = rows * cols;
    if (length == 0 || Nd4j.getMemoryManager().getCurrentWorkspace() != null) {
      return Nd4j.createUninitialized(DataType.FLOAT, rows, cols);
    }
    FloatPointer block = take(length);
    FloatPointer view = new View(block, length);
    DataBuffer buffer = Nd4j.createBuffer(view, DataType.FLOAT, length,
        FloatIndexer.create(view));
    cleaner.register(buffer, new Release(this, block, length));
    return Nd4j.create(buffer, new long[] {rows, cols}, new long[] {cols, 1}, 0, 'c',
        DataType.FLOAT);
  }

  /** Calls served from reused memory so far. */
  synchronized long reused() {
    return reused;
  }

  /** Calls served from fresh memory so far. */
  synchronized long fresh() {
    return fresh;
  }

  private FloatPointer take(long length) {
    boolean collect = false;
    FloatPointer block;
    synchronized (this) {
      ArrayDeque<FloatPointer> list = free.get(length);
      block = list == null ? null : list.pollFirst();
      long bytes = 4 * length;
      if (block != null) {
        freeBytes -= bytes;
        reused++;
      } else {
        fresh++;
        long now = System.nanoTime();
        if (outstandingBytes > threshold && now - lastGc > MIN_GC_INTERVAL_NANOS) {
          lastGc = now;
          threshold = Math.min(MAX_OUTSTANDING_BYTES, 2 * threshold);
          collect = true;
        }
      }
      outstandingBytes += bytes;
    }
    if (collect) {
      System.gc();
    }
    return block != null ? block : new FloatPointer(length);
  }

  private void give(FloatPointer block, long length) {
    long bytes = 4 * length;
    synchronized (this) {
      outstandingBytes -= bytes;
      if (freeBytes + bytes <= MAX_FREE_BYTES) {
        free.computeIfAbsent(length, k -> new ArrayDeque<>()).addFirst(block);
        freeBytes += bytes;
        return;
      }
    }
    block.deallocate();
  }

  /** A pointer to a block's memory that owns nothing: ND4J's buffer never frees it, the pool does. */
  private static final class View extends FloatPointer {
    View(FloatPointer block, long length) {
      super((Pointer) null);
      address = block.address();
      position = 0;
      limit = length;
      capacity = length;
    }
  }

  /** Returns a block once its buffer is unreachable (holds the block, never the buffer). */
  private record Release(OutputMemory pool, FloatPointer block, long length) implements Runnable {
    @Override
    public void run() {
      pool.give(block, length);
    }
  }
}
