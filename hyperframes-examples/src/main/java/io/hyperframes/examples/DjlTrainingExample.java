package io.hyperframes.examples;

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
import ai.djl.training.EasyTrain;
import ai.djl.training.ParameterStore;
import ai.djl.training.Trainer;
import ai.djl.training.dataset.ArrayDataset;
import ai.djl.training.loss.Loss;
import ai.djl.training.optimizer.Optimizer;
import ai.djl.training.tracker.Tracker;
import io.hyperframes.djl.DjlTrainer;
import io.hyperframes.djl.HyperFramesListener;
import io.hyperframes.djl.PrefetchingDataset;
import io.hyperframes.runtime.StepMeter;
import java.util.Locale;
import java.util.SplittableRandom;

/**
 * An existing DJL training loop, then the same loop wrapped by HyperFrames: an MLP on a
 * synthetic ten-class task trained once with {@code EasyTrain.fit} and once with
 * {@link DjlTrainer} over a {@link PrefetchingDataset}, metered by a {@link HyperFramesListener}.
 * Both start from the same initial weights; the example prints both accuracies and the meter's
 * summary. Run: {@code java -cp hyperframes-examples/target/hyperframes.jar
 * io.hyperframes.examples.DjlTrainingExample} (DJL on PyTorch's CPU engine, offline).
 */
public final class DjlTrainingExample {

  /** Input features of the task. */
  public static final int FEATURES = 128;
  /** Classes of the task. */
  public static final int CLASSES = 10;

  private DjlTrainingExample() {}

  /**
   * What the two runs reached.
   *
   * @param plainAccuracy test accuracy after EasyTrain.fit
   * @param wrappedAccuracy test accuracy after DjlTrainer.fit on the same data
   * @param summary the wrapped run's step meter
   * @param steps optimizer steps of the wrapped run
   */
  public record Outcome(double plainAccuracy, double wrappedAccuracy, StepMeter.Summary summary,
      long steps) {}

  /** Trains both ways on {@code samples} rows for {@code epochs} epochs at batch {@code batch}. */
  public static Outcome run(int samples, int epochs, int batch) throws Exception {
    System.setProperty("ai.djl.offline", "true");
    float[][] train = rows(samples, 1);
    float[][] test = rows(4096, 2);
    double plain;
    // Before: the user's loop as it is.
    try (Model model = model(7); Trainer trainer = model.newTrainer(config())) {
      trainer.initialize(new Shape(batch, FEATURES));
      EasyTrain.fit(trainer, epochs, dataset(model.getNDManager(), train, batch), null);
      plain = accuracy(model, test);
    }
    // After: the same model, config and data; the loop wrapped.
    HyperFramesListener meter = new HyperFramesListener();
    DjlTrainer.Result r;
    double wrapped;
    try (Model model = model(7);
        Trainer trainer = model.newTrainer(config().addTrainingListeners(meter));
        PrefetchingDataset data = PrefetchingDataset.builder(
            dataset(model.getNDManager(), train, batch)).batchSize(batch).workers(2).depth(8)
            .shuffle(42).build()) {
      trainer.initialize(new Shape(batch, FEATURES));
      r = DjlTrainer.train(trainer).data(data).epochs(epochs).listener(meter).fit();
      wrapped = accuracy(model, test);
    }
    return new Outcome(plain, wrapped, r.summary(), r.steps());
  }

  /** Prints both accuracies and the wrapped run's summary. */
  public static void main(String[] args) throws Exception {
    Outcome o = run(16384, 3, 256);
    System.out.printf(Locale.ROOT, "EasyTrain.fit   accuracy %.2f %%%n", 100 * o.plainAccuracy());
    System.out.printf(Locale.ROOT, "DjlTrainer.fit  accuracy %.2f %%, %s%n",
        100 * o.wrappedAccuracy(), o.summary().line());
    o.summary().findings().forEach(f -> System.out.println("  " + f.id() + ": " + f.title()));
  }

  /** A 128-256-256-10 ReLU MLP with its initial weights drawn from {@code seed}. */
  public static Model model(int seed) {
    Engine.getInstance().setRandomSeed(seed);
    SequentialBlock block = new SequentialBlock()
        .add(Linear.builder().setUnits(256).build()).add(Activation::relu)
        .add(Linear.builder().setUnits(256).build()).add(Activation::relu)
        .add(Linear.builder().setUnits(CLASSES).build());
    Model model = Model.newInstance("djl-example-mlp", "PyTorch");
    model.setBlock(block);
    block.initialize(model.getNDManager(), DataType.FLOAT32, new Shape(1, FEATURES));
    return model;
  }

  /** Softmax cross-entropy, Adam at 1e-3: the user's training configuration. */
  public static DefaultTrainingConfig config() {
    return new DefaultTrainingConfig(Loss.softmaxCrossEntropyLoss())
        .optOptimizer(Optimizer.adam().optLearningRateTracker(Tracker.fixed(1e-3f)).build());
  }

  /** {x, y}: noisy clusters, one per class, overlapping enough that accuracy is not 100 %. */
  public static float[][] rows(int n, long seed) {
    SplittableRandom centres = new SplittableRandom(3);
    float[][] c = new float[CLASSES][FEATURES];
    for (float[] row : c) {
      for (int j = 0; j < FEATURES; j++) {
        row[j] = (float) (centres.nextDouble() * 2 - 1);
      }
    }
    SplittableRandom rnd = new SplittableRandom(seed);
    float[] x = new float[n * FEATURES];
    float[] y = new float[n];
    for (int i = 0; i < n; i++) {
      int k = rnd.nextInt(CLASSES);
      y[i] = k;
      for (int j = 0; j < FEATURES; j++) {
        x[i * FEATURES + j] = c[k][j] + (float) (rnd.nextGaussian() * 2.5);
      }
    }
    return new float[][] {x, y};
  }

  /** The rows as DJL's in-memory dataset, shuffled batches of {@code batch}. */
  public static ArrayDataset dataset(NDManager m, float[][] rows, int batch) {
    int n = rows[1].length;
    return new ArrayDataset.Builder().setData(m.create(rows[0], new Shape(n, FEATURES)))
        .optLabels(m.create(rows[1], new Shape(n))).setSampling(batch, true).build();
  }

  /** Share of {@code rows} the model classifies right. */
  public static double accuracy(Model model, float[][] rows) {
    int n = rows[1].length;
    try (NDManager m = model.getNDManager().newSubManager()) {
      NDArray x = m.create(rows[0], new Shape(n, FEATURES));
      NDList out = model.getBlock().forward(new ParameterStore(m, false), new NDList(x), false);
      long[] p = out.singletonOrThrow().argMax(1).toLongArray();
      return share(p, rows[1]);
    }
  }

  /** Share of {@code predicted} class indices that equal {@code labels}. */
  static double share(long[] predicted, float[] labels) {
    int right = 0;
    for (int i = 0; i < labels.length; i++) {
      right += predicted[i] == (long) labels[i] ? 1 : 0;
    }
    return (double) right / labels.length;
  }
}
