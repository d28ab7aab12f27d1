package io.hyperframes.djl;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.djl.Model;
import ai.djl.ndarray.NDManager;
import ai.djl.ndarray.types.Shape;
import ai.djl.training.EasyTrain;
import ai.djl.training.Trainer;
import ai.djl.training.dataset.ArrayDataset;
import io.hyperframes.runtime.LossScale;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The DJL fit loop: same training as EasyTrain, loss scaling, the non-finite guard, checkpoints. */
class DjlTrainerTest {

  private static final int BATCH = 64;

  @Test
  void trainsLikeEasyTrainOnTheSameBatches() throws Exception {
    Mlps.Rows train = Mlps.rows(4096, 1);
    Mlps.Rows test = Mlps.rows(4096, 2);
    double plain;
    float[] plainWeights;
    try (Model model = Mlps.model(11); Trainer t = Mlps.trainer(model, BATCH)) {
      ArrayDataset ds = Mlps.dataset(model.getNDManager(), train, BATCH, false);
      EasyTrain.fit(t, 3, ds, null);
      plain = Mlps.accuracy(model, test);
      plainWeights = Mlps.weights(model);
    }
    double wrapped;
    try (Model model = Mlps.model(11); Trainer t = Mlps.trainer(model, BATCH);
        PrefetchingDataset ds = PrefetchingDataset.builder(
            Mlps.dataset(model.getNDManager(), train, BATCH, false)).batchSize(BATCH)
            .workers(2).depth(4).build()) {
      DjlTrainer.Result r = DjlTrainer.train(t).data(ds).epochs(3).fit();
      assertEquals(3, r.epochs());
      assertEquals(3L * 4096 / BATCH, r.steps());
      assertEquals(0, r.skippedSteps());
      assertEquals(r.steps(), r.summary().steps());
      assertTrue(r.summary().forwardShare() > 0
          && r.summary().forwardShare() < r.summary().computeShare());
      wrapped = Mlps.accuracy(model, test);
      float[] w = Mlps.weights(model);
      assertEquals(plainWeights.length, w.length);
      for (int i = 0; i < w.length; i++) {
        assertEquals(plainWeights[i], w[i], 1e-4f, "weight " + i);
      }
    }
    assertTrue(plain > 0.6, "the task is learnt: " + plain);
    assertEquals(plain, wrapped, 0.005, "accuracy with and without the wrapper");
  }

  @Test
  void infiniteGradientsAreSkippedWithTheScaleBackedOffAndTheWeightsUnchanged() throws Exception {
    try (Model model = Mlps.model(3); Trainer t = Mlps.trainer(model, BATCH)) {
      NDManager m = model.getNDManager();
      Mlps.Rows rows = Mlps.rows(BATCH, 5);
      float[] x = rows.x().clone();
      x[7] = Float.POSITIVE_INFINITY;
      ArrayDataset poisoned = new ArrayDataset.Builder()
          .setData(m.create(x, new Shape(BATCH, Mlps.FEATURES)))
          .optLabels(m.create(rows.y(), new Shape(BATCH))).setSampling(BATCH, false).build();
      float[] before = Mlps.weights(model);
      LossScale scale = LossScale.of(1024, 2, 0.5, 2000);
      DjlTrainer.Result r = DjlTrainer.train(t).data(poisoned).lossScaling(scale).fit();
      assertEquals(0, r.steps());
      assertEquals(1, r.skippedSteps());
      assertEquals(512.0, scale.scale(), 0.0, "the scale backs off");
      assertEquals(512.0, r.lossScale().get("scale"), 0.0);
      assertArrayEquals(before, Mlps.weights(model), "a skipped step leaves the weights");

      // The next clean step trains normally: no Inf or NaN left behind in the gradients.
      ArrayDataset clean = Mlps.dataset(m, rows, BATCH, false);
      DjlTrainer.Result next = DjlTrainer.train(t).data(clean).lossScaling(scale).fit();
      assertEquals(1, next.steps());
      float[] after = Mlps.weights(model);
      boolean moved = false;
      for (int i = 0; i < after.length; i++) {
        assertTrue(Float.isFinite(after[i]), "weight " + i + " is " + after[i]);
        moved |= after[i] != before[i];
      }
      assertTrue(moved, "the clean step updated the weights");
    }
  }

  @Test
  void anFp16ModelOverflowsIntoASkippedStepAndTrainsOnAfterIt() throws Exception {
    // An FP16 model (parameters and activations in half precision); the loss scale starts at
    // 2^16, which overflows FP16 gradients at once (max 65504): PyTorch's GradScaler backs off
    // until the scaled gradients fit, and so must this loop.
    try (Model model = Mlps.model(4, ai.djl.ndarray.types.DataType.FLOAT16)) {
      try (Trainer t = Mlps.trainer(model, BATCH)) {
        NDManager m = model.getNDManager();
        Mlps.Rows rows = Mlps.rows(BATCH * 8, 6);
        ArrayDataset half = new ArrayDataset.Builder()
            .setData(m.create(rows.x(), new Shape(BATCH * 8, Mlps.FEATURES))
                .toType(ai.djl.ndarray.types.DataType.FLOAT16, false))
            .optLabels(m.create(rows.y(), new Shape(BATCH * 8))
                .toType(ai.djl.ndarray.types.DataType.FLOAT16, false))
            .setSampling(BATCH, false).build();
        assertEquals(ai.djl.ndarray.types.DataType.FLOAT16, model.getBlock().getParameters()
            .get(0).getValue().getArray().getDataType(), "an FP16 model");
        float[] before = Mlps.weights(model);
        LossScale scale = LossScale.of(1e30, 2, 0.5, 2000);
        DjlTrainer.Result r = DjlTrainer.train(t).data(half).lossScaling(scale).fit();
        assertTrue(r.skippedSteps() >= 1, "an overflowing scale skips: " + r);
        assertEquals(8, r.steps() + r.skippedSteps());
        assertEquals(1e30 * Math.pow(0.5, r.skippedSteps()), scale.scale(), 1e15);
        float[] after = Mlps.weights(model);
        boolean moved = false;
        for (int i = 0; i < after.length; i++) {
          assertTrue(Float.isFinite(after[i]), "weight " + i + " is " + after[i]);
          moved |= after[i] != before[i];
        }
        assertEquals(r.steps() > 0, moved, "weights move only with applied steps");
      }
    }
  }

  @Test
  void lossScalingUnscalesBeforeTheStep() throws Exception {
    // The same batches with scale 1 and scale 2^10: the same weights (powers of two are exact).
    Mlps.Rows rows = Mlps.rows(512, 9);
    float[][] w = new float[2][];
    double[] scales = {1.0, 1024.0};
    for (int k = 0; k < 2; k++) {
      try (Model model = Mlps.model(21); Trainer t = Mlps.trainer(model, BATCH)) {
        DjlTrainer.train(t).data(Mlps.dataset(model.getNDManager(), rows, BATCH, false))
            .lossScaling(LossScale.of(scales[k], 2, 0.5, 2000)).epochs(2).fit();
        w[k] = Mlps.weights(model);
      }
    }
    for (int i = 0; i < w[0].length; i++) {
      assertEquals(w[0][i], w[1][i], 1e-5f, "weight " + i);
    }
  }

  @Test
  void checkpointsRestoreTheTrainedModel(@TempDir Path dir) throws Exception {
    Mlps.Rows train = Mlps.rows(1024, 1);
    Mlps.Rows test = Mlps.rows(1024, 2);
    double trained;
    DjlTrainer.Result r;
    try (Model model = Mlps.model(5); Trainer t = Mlps.trainer(model, BATCH)) {
      r = DjlTrainer.train(t).data(Mlps.dataset(model.getNDManager(), train, BATCH, true))
          .epochs(2).lossScaling(LossScale.pytorchDefaults())
          .checkpoints(dir, 10, 2).fit();
      trained = Mlps.accuracy(model, test);
    }
    Path last = r.lastCheckpoint().orElseThrow();
    assertTrue(Files.exists(last));
    assertEquals(2, DjlCheckpoints.list(dir).size(), "keeps the newest two");
    DjlCheckpoints.Checkpoint c = DjlCheckpoints.latest(dir).orElseThrow();
    assertEquals(r.steps(), c.step());
    assertEquals(1, c.epoch());
    assertEquals(65536.0, c.state().get("scale"), 0.0);
    try (Model fresh = Mlps.model(99)) {
      c.restore(fresh.getBlock(), fresh.getNDManager());
      assertEquals(trained, Mlps.accuracy(fresh, test), 1e-12);
    }
  }

  @Test
  void badSettingsNameTheField() throws Exception {
    try (Model model = Mlps.model(1); Trainer t = Mlps.trainer(model, BATCH)) {
      DjlTrainer d = DjlTrainer.train(t);
      assertTrue(assertThrows(IllegalArgumentException.class, () -> d.epochs(0)).getMessage()
          .startsWith("epochs:"));
      assertTrue(assertThrows(IllegalArgumentException.class,
          () -> d.checkpoints(Path.of("x"), 0, 1)).getMessage()
          .startsWith("checkpoints.everySteps:"));
      assertTrue(assertThrows(IllegalStateException.class, d::fit).getMessage()
          .startsWith("data:"));
      d.data(Mlps.dataset(model.getNDManager(), Mlps.rows(BATCH, 1), BATCH, false)).fit();
      assertFalse(assertThrows(IllegalStateException.class, d::fit).getMessage().isEmpty());
    }
  }
}
