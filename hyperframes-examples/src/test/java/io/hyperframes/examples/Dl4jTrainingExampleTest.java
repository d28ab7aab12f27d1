package io.hyperframes.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** The DL4J example: the Trainer learns as DL4J's fit does; the fused BF16 run within a point. */
class Dl4jTrainingExampleTest {

  @Test
  void theWrappedLoopReachesTheSameAccuracy() {
    Dl4jTrainingExample.Outcome o = Dl4jTrainingExample.run(8192, 2, 256);
    assertTrue(o.plainAccuracy() > 0.5 && o.plainAccuracy() < 0.995,
        "a task that is learnt but not trivial: " + o.plainAccuracy());
    assertEquals(o.plainAccuracy(), o.trainerAccuracy(), 0.005);
    assertEquals(o.plainAccuracy(), o.acceleratedAccuracy(), 0.01);
    assertEquals(2 * 8192 / 256, o.summary().steps());
  }
}
