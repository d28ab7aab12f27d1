package io.hyperframes.cli;

import ai.djl.Model;
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
import ai.djl.training.dataset.Batch;
import ai.djl.training.loss.Loss;
import ai.djl.training.optimizer.Optimizer;
import ai.djl.training.tracker.Tracker;
import ai.djl.translate.TranslateException;
import java.io.BufferedReader;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The JVM user's real alternative, measured beside HyperFrames in the same run: the benchmark MLP
 * (784-2048-2048-10, ReLU, batch 256, Adam 1e-3, softmax cross-entropy) in DJL on its PyTorch
 * CPU engine, trained on the same rows held in memory (DJL's {@link ArrayDataset}, no loader
 * cost) and timed the same way. DJL runs offline ({@code ai.djl.offline=true}): the native
 * library comes from the {@code pytorch-native-cpu} jar on the class path, nothing is downloaded.
 */
final class DjlBaseline implements AutoCloseable {

  /** Throughput and test accuracy of DJL's training. */
  record Trained(double samplesPerSecond, double accuracy) {}

  private final Model model;
  private final NDManager manager;

  private DjlBaseline(Model model) {
    this.model = model;
    this.manager = model.getNDManager();
  }

  /** A fresh model on the PyTorch engine (offline). */
  static DjlBaseline create() {
    System.setProperty("ai.djl.offline", "true");
    SequentialBlock block = new SequentialBlock()
        .add(Linear.builder().setUnits(TrainBench.HIDDEN).build())
        .add(Activation::relu)
        .add(Linear.builder().setUnits(TrainBench.HIDDEN).build())
        .add(Activation::relu)
        .add(Linear.builder().setUnits(TrainBench.CLASSES).build());
    Model model = Model.newInstance("hyperframes-bench-mlp", "PyTorch");
    model.setBlock(block);
    block.initialize(model.getNDManager(), DataType.FLOAT32, new Shape(1, TrainBench.FEATURES));
    return new DjlBaseline(model);
  }

  /**
   * Trains for {@code epochs} over the rows of {@code csv} (features then the class index, as
   * {@link TrainBench} writes them) and measures accuracy on the test set.
   */
  Trained train(Path csv, int rows, float[] testX, int[] testLabels, int epochs)
      throws IOException, TranslateException {
    float[] x = new float[rows * TrainBench.FEATURES];
    float[] y = new float[rows];
    try (BufferedReader r = Files.newBufferedReader(csv, StandardCharsets.UTF_8)) {
      for (int i = 0; i < rows; i++) {
        String[] f = r.readLine().split(",");
        for (int j = 0; j < TrainBench.FEATURES; j++) {
          x[i * TrainBench.FEATURES + j] = Float.parseFloat(f[j]);
        }
        y[i] = Float.parseFloat(f[TrainBench.FEATURES]);
      }
    }
    ArrayDataset data = new ArrayDataset.Builder()
        .setData(manager.create(x, new Shape(rows, TrainBench.FEATURES)))
        .optLabels(manager.create(y, new Shape(rows)))
        .setSampling(TrainBench.BATCH, false, true).build();
    DefaultTrainingConfig config = new DefaultTrainingConfig(Loss.softmaxCrossEntropyLoss())
        .optOptimizer(Optimizer.adam().optLearningRateTracker(Tracker.fixed(1e-3f)).build());
    long samples = 0;
    long start;
    try (Trainer trainer = model.newTrainer(config)) {
      trainer.initialize(new Shape(TrainBench.BATCH, TrainBench.FEATURES));
      // one untimed step so that engine start-up is not counted
      for (Batch b : trainer.iterateDataset(data)) {
        EasyTrain.trainBatch(trainer, b);
        trainer.step();
        b.close();
        break;
      }
      start = System.nanoTime();
      for (int e = 0; e < epochs; e++) {
        for (Batch b : trainer.iterateDataset(data)) {
          EasyTrain.trainBatch(trainer, b);
          trainer.step();
          samples += b.getSize();
          b.close();
        }
      }
    }
    double seconds = (System.nanoTime() - start) / 1e9;
    return new Trained(samples / seconds, accuracy(testX, testLabels));
  }

  private double accuracy(float[] testX, int[] labels) {
    try (NDManager m = manager.newSubManager()) {
      NDArray x = m.create(testX, new Shape(labels.length, TrainBench.FEATURES));
      NDArray predicted = forward(x).argMax(1);
      long[] p = predicted.toLongArray();
      int right = 0;
      for (int i = 0; i < labels.length; i++) {
        right += p[i] == labels[i] ? 1 : 0;
      }
      return (double) right / labels.length;
    }
  }

  /** Class probabilities of a batch, as a user's predictor computes them. */
  NDArray forward(NDArray x) {
    NDList out = model.getBlock().forward(new ParameterStore(x.getManager(), false),
        new NDList(x), false);
    return out.singletonOrThrow().softmax(1);
  }

  /**
   * One inference call as a user's predictor makes it: the input copied into a per-call manager,
   * forward, softmax, everything the call created released with the manager.
   */
  void infer(NDArray x) {
    try (NDManager call = manager.newSubManager()) {
      NDArray in = x.duplicate();
      in.attach(call);
      forward(in).toFloatArray();
    }
  }

  /** An input batch of {@code rows} random rows, owned by this baseline. */
  NDArray input(int rows) {
    return manager.randomUniform(0f, 1f, new Shape(rows, TrainBench.FEATURES));
  }

  @Override
  public void close() {
    model.close();
  }
}
