package io.hyperframes.runtime;

/**
 * A training-loop hook that records the loop's steps into a {@link StepMeter}: the DL4J, SameDiff
 * and DJL listeners are ones. Code that reports on a loop (a progress line, a benchmark record)
 * can take any of them.
 */
public interface MeteredLoop {

  /** The meter the steps are recorded into. */
  StepMeter meter();

  /** The summary of the steps measured so far ({@link StepMeter#summary()}). */
  default StepMeter.Summary summary() {
    return meter().summary();
  }
}
