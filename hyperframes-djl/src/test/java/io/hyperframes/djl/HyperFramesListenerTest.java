package io.hyperframes.djl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.djl.Model;
import ai.djl.ndarray.NDManager;
import ai.djl.training.EasyTrain;
import ai.djl.training.Trainer;
import ai.djl.training.dataset.ArrayDataset;
import io.hyperframes.runtime.StepMeter;
import org.junit.jupiter.api.Test;

/** The listener meters EasyTrain.fit as it is: every step, and the data wait where it is. */
class HyperFramesListenerTest {

  private static final int BATCH = 64;

  @Test
  void meteredFitRecordsEveryStepAndItsPhases() throws Exception {
    HyperFramesListener listener = new HyperFramesListener();
    try (Model model = Mlps.model(1); Trainer t = Mlps.trainer(model, BATCH, listener)) {
      t.setMetrics(new ai.djl.metric.Metrics());   // DJL then times each forward pass
      ArrayDataset ds = Mlps.dataset(model.getNDManager(), Mlps.rows(1024, 1), BATCH, true);
      EasyTrain.fit(t, 2, listener.metered(ds), null);
    }
    StepMeter.Summary s = listener.summary();
    assertEquals(2 * 1024 / BATCH, s.steps());
    assertEquals(1.0, s.dataWaitShare() + s.computeShare() + s.optimizerShare(), 1e-6);
    assertTrue(s.optimizerShare() > 0, "the optimizer phase is seen");
    assertTrue(s.forwardShare() > 0 && s.forwardShare() < s.computeShare(),
        "forward within compute: " + s);
    assertTrue(s.samplesPerSecond() > 0);
  }

  @Test
  void aSlowLoaderIsNamed() throws Exception {
    HyperFramesListener listener = new HyperFramesListener();
    try (Model model = Mlps.model(1); Trainer t = Mlps.trainer(model, BATCH, listener)) {
      NDManager m = model.getNDManager();
      ArrayDataset fast = Mlps.dataset(m, Mlps.rows(512, 1), BATCH, false);
      SlowDataset slow = new SlowDataset(fast, 500_000, BATCH);
      EasyTrain.fit(t, 1, listener.metered(slow), null);
    }
    StepMeter.Summary s = listener.summary();
    assertEquals(512 / BATCH, s.steps());
    assertTrue(s.dataWaitShare() > 0.3, "data wait " + s.dataWaitShare());
    assertTrue(s.findings().stream().anyMatch(f -> f.id().equals("loader-bound")),
        s.findings().toString());
  }

  @Test
  void withoutMeteringWholeStepsAreCounted() throws Exception {
    HyperFramesListener listener = new HyperFramesListener();
    try (Model model = Mlps.model(1); Trainer t = Mlps.trainer(model, BATCH)) {
      ArrayDataset ds = Mlps.dataset(model.getNDManager(), Mlps.rows(1024, 1), BATCH, false);
      // Not in the trainer's config: notified by hand where EasyTrain.fit would notify it.
      for (int e = 0; e < 2; e++) {
        listener.onEpoch(t);
        for (var b : t.iterateDataset(ds)) {
          EasyTrain.trainBatch(t, b);
          listener.onTrainingBatch(t, new ai.djl.training.listener.TrainingListener.BatchData(
              b, java.util.Map.of(), java.util.Map.of()));
          t.step();
          b.close();
        }
      }
    }
    // The first batch of each epoch only starts the clock.
    assertEquals(2 * (1024 / BATCH - 1), listener.summary().steps());
    assertEquals(1.0, listener.summary().computeShare(), 1e-9);
  }
}
