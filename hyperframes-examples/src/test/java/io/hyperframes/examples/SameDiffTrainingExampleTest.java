package io.hyperframes.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** The SameDiff example: prefetched and metered, the same accuracy (within half a point). */
class SameDiffTrainingExampleTest {

  @Test
  void theWrappedLoopReachesTheSameAccuracy() {
    SameDiffTrainingExample.Outcome o = SameDiffTrainingExample.run(8192, 2, 256);
    assertTrue(o.plainAccuracy() > 0.5 && o.plainAccuracy() < 0.995,
        "a task that is learnt but not trivial: " + o.plainAccuracy());
    assertEquals(o.plainAccuracy(), o.wrappedAccuracy(), 0.005);
    assertEquals(2 * 8192 / 256, o.summary().steps());
  }
}
