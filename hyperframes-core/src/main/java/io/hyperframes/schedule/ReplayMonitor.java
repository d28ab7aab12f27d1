package io.hyperframes.schedule;

/**
 * Watches a long replay: its progress, for a progress bar, and a way to stop it. Both methods
 * are called on the replaying thread; keep them cheap.
 */
public interface ReplayMonitor {
  /** A monitor that shows nothing and never cancels. */
  ReplayMonitor NONE = new ReplayMonitor() {};

  /**
   * The share of the replay done, in [0, 1] (jobs finished or placed over all jobs), at most
   * about once per percent and once at the end with 1.
   */
  default void progress(double fraction) {}

  /**
   * Polled regularly (every round, or every 1 024 events); returning true stops the replay
   * with {@link java.util.concurrent.CancellationException}.
   */
  default boolean cancelled() {
    return false;
  }
}
