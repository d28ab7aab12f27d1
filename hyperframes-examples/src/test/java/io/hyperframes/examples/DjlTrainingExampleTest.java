package io.hyperframes.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** The DJL example: the wrapped loop learns as well as EasyTrain (within half a point). */
class DjlTrainingExampleTest {

  @Test
  void theWrappedLoopReachesTheSameAccuracy() throws Exception {
    DjlTrainingExample.Outcome o = DjlTrainingExample.run(16384, 3, 256);
    assertTrue(o.plainAccuracy() > 0.5 && o.plainAccuracy() < 0.995,
        "a task that is learnt but not trivial: " + o.plainAccuracy());
    assertEquals(o.plainAccuracy(), o.wrappedAccuracy(), 0.005);
    assertEquals(3 * 16384 / 256, o.steps());
    assertEquals(o.steps(), o.summary().steps());
  }
}
