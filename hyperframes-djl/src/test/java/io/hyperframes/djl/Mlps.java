package io.hyperframes.djl;

import ai.djl.Model;
import ai.djl.engine.Engine;
import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDList;
import ai.djl.ndarray.NDManager;
import ai.djl.ndarray.types.DataType;
import ai.djl.ndarray.types.Shape;
import ai.djl.nn.Activation;
import ai.djl.nn.SequentialBlock;
import ai.djl.nn.core.Linear;
import ai.djl.training.DefaultTrainingConfig;
import ai.djl.training.ParameterStore;
import ai.djl.training.Trainer;
import ai.djl.training.dataset.ArrayDataset;
import ai.djl.training.loss.Loss;
import ai.djl.training.optimizer.Optimizer;
import ai.djl.training.tracker.Tracker;
import java.util.SplittableRandom;

/** Test fixtures: a small MLP on DJL's PyTorch engine and a synthetic classification task. */
final class Mlps {
  static final int FEATURES = 32;
  static final int CLASSES = 4;

  private Mlps() {}

  /** A 32-64-64-4 ReLU MLP, initialised with the engine's seed fixed. */
  static Model model(long seed) {
    return model(seed, DataType.FLOAT32);
  }

  /** The same MLP with parameters in {@code type}. */
  static Model model(long seed, DataType type) {
    Engine.getInstance().setRandomSeed((int) seed);
    SequentialBlock block = new SequentialBlock()
        .add(Linear.builder().setUnits(64).build())
        .add(Activation::relu)
        .add(Linear.builder().setUnits(64).build())
        .add(Activation::relu)
        .add(Linear.builder().setUnits(CLASSES).build());
    Model model = Model.newInstance("hyperframes-test-mlp", "PyTorch");
    model.setBlock(block);
    block.initialize(model.getNDManager(), type, new Shape(1, FEATURES));
    return model;
  }

  /** A trainer with softmax cross-entropy and Adam 1e-3. */
  static Trainer trainer(Model model, int batch,
      ai.djl.training.listener.TrainingListener... listeners) {
    DefaultTrainingConfig config = new DefaultTrainingConfig(Loss.softmaxCrossEntropyLoss())
        .optOptimizer(Optimizer.adam().optLearningRateTracker(Tracker.fixed(1e-3f)).build())
        .addTrainingListeners(listeners);
    Trainer t = model.newTrainer(config);
    t.initialize(new Shape(batch, FEATURES));
    return t;
  }

  /** Rows of {@code n} samples: four noisy clusters, one per class (x row-major, y labels). */
  record Rows(float[] x, float[] y) {}

  static Rows rows(int n, long seed) {
    SplittableRandom rnd = new SplittableRandom(seed);
    float[][] centres = new float[CLASSES][FEATURES];
    SplittableRandom c = new SplittableRandom(7);
    for (float[] centre : centres) {
      for (int j = 0; j < FEATURES; j++) {
        centre[j] = (float) (c.nextDouble() * 2 - 1);
      }
    }
    float[] x = new float[n * FEATURES];
    float[] y = new float[n];
    for (int i = 0; i < n; i++) {
      int k = rnd.nextInt(CLASSES);
      y[i] = k;
      for (int j = 0; j < FEATURES; j++) {
        x[i * FEATURES + j] = centres[k][j] + (float) (rnd.nextGaussian() * 0.9);
      }
    }
    return new Rows(x, y);
  }

  static ArrayDataset dataset(NDManager m, Rows r, int batch, boolean shuffle) {
    int n = r.y().length;
    return new ArrayDataset.Builder()
        .setData(m.create(r.x(), new Shape(n, FEATURES)))
        .optLabels(m.create(r.y(), new Shape(n)))
        .setSampling(batch, shuffle).build();
  }

  /** Share of {@code r} the model classifies right. */
  static double accuracy(Model model, Rows r) {
    int n = r.y().length;
    try (NDManager m = model.getNDManager().newSubManager()) {
      NDArray x = m.create(r.x(), new Shape(n, FEATURES));
      NDList out = model.getBlock().forward(new ParameterStore(m, false), new NDList(x), false);
      long[] p = out.singletonOrThrow().argMax(1).toLongArray();
      int right = 0;
      for (int i = 0; i < n; i++) {
        right += p[i] == (long) r.y()[i] ? 1 : 0;
      }
      return (double) right / n;
    }
  }

  /** Every parameter of the model, flattened, in order. */
  static float[] weights(Model model) {
    java.util.List<Float> all = new java.util.ArrayList<>();
    for (var p : model.getBlock().getParameters()) {
      for (float v : p.getValue().getArray().toType(DataType.FLOAT32, false).toFloatArray()) {
        all.add(v);
      }
    }
    float[] out = new float[all.size()];
    for (int i = 0; i < out.length; i++) {
      out[i] = all.get(i);
    }
    return out;
  }
}
