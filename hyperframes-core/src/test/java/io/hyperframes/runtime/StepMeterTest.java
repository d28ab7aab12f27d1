package io.hyperframes.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** The step meter's bookkeeping and findings. */
class StepMeterTest {

  @Test
  void sharesAndFindingsFollowTheRecordedPhases() {
    StepMeter m = new StepMeter();
    for (int i = 0; i < 200; i++) {
      // 3 ms data wait, 5 ms compute, 2 ms optimizer, 32 samples
      m.record(3_000_000, 5_000_000, 2_000_000, 10_000_000, 32);
    }
    StepMeter.Summary s = m.summary();
    assertEquals(200, s.steps());
    assertEquals(0.3, s.dataWaitShare(), 1e-9);
    assertEquals(0.5, s.computeShare(), 1e-9);
    assertEquals(0.2, s.optimizerShare(), 1e-9);
    assertEquals(3200.0, s.samplesPerSecond(), 1e-6);
    assertEquals(0.010, s.p50Seconds(), 0.010 * 0.002);
    assertTrue(s.findings().stream().anyMatch(f -> f.id().equals("loader-bound")));
    assertEquals("200 steps, 3200 samples/s, data wait 30.0 %, compute 50.0 %, optimizer 20.0 %",
        s.line());
    StepMeter marked = new StepMeter();
    // 1 ms data wait, 2 ms forward of 6 ms compute, 1 ms optimizer, 8 samples
    marked.record(1_000_000, 2_000_000, 6_000_000, 1_000_000, 8_000_000, 8);
    assertEquals("1 steps, 1000 samples/s, data wait 12.5 %, compute 75.0 % (forward 25.0 %),"
        + " optimizer 12.5 %", marked.summary().line());
  }

  @Test
  void tryWithResourcesMeasuresAStep() {
    StepMeter m = new StepMeter();
    try (StepMeter.Step s = m.begin()) {
      s.dataReady(8);
      s.computeDone();
    }
    assertEquals(1, m.summary().steps());
    assertThrows(IllegalStateException.class, () -> {
      StepMeter.Step s = m.begin();
      m.begin();
      s.close();
    });
  }
}
