package io.hyperframes.plan;

/**
 * Follows a search. Called from the searching threads (implementations must be thread-safe);
 * {@link #cancelled()} is polled between blocks of candidates.
 */
public interface PlanListener {

  /**
   * Progress so far.
   *
   * @param fraction share of the search done, 0 to 1
   * @param evaluated candidates evaluated
   */
  void progress(double fraction, long evaluated);

  /** Returning true stops the search with a {@link java.util.concurrent.CancellationException}. */
  default boolean cancelled() {
    return false;
  }

  /** A listener that ignores progress and never cancels. */
  PlanListener NONE = (fraction, evaluated) -> { };
}
