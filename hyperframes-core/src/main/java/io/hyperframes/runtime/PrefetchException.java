package io.hyperframes.runtime;

/**
 * A worker failed to build a batch. The iterator stays at that batch: calling {@code next()}
 * again retries it, so a transient failure loses no sample.
 */
public final class PrefetchException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  private final int index;

  PrefetchException(int index, Throwable cause) {
    super("batch " + index + ": worker failed: " + cause, cause);
    this.index = index;
  }

  /** Index of the batch that failed. */
  public int index() {
    return index;
  }
}
