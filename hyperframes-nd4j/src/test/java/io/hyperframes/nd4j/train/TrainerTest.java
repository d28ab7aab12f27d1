package io.hyperframes.nd4j.train;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.hyperframes.nd4j.FusedDense.Precision;
import io.hyperframes.nd4j.data.EncodedDataset;
import io.hyperframes.nd4j.dl4j.Dl4jAdapter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;
import org.deeplearning4j.datasets.iterator.utilty.ListDataSetIterator;
import org.deeplearning4j.nn.conf.MultiLayerConfiguration;
import org.deeplearning4j.nn.conf.NeuralNetConfiguration;
import org.deeplearning4j.nn.conf.layers.DenseLayer;
import org.deeplearning4j.nn.conf.layers.OutputLayer;
import org.deeplearning4j.nn.multilayer.MultiLayerNetwork;
import org.deeplearning4j.optimize.listeners.ScoreIterationListener;
import org.deeplearning4j.util.ModelSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.nd4j.linalg.activations.Activation;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.dataset.DataSet;
import org.nd4j.linalg.factory.Nd4j;
import org.nd4j.linalg.learning.config.Adam;
import org.nd4j.linalg.lossfunctions.LossFunctions.LossFunction;

class TrainerTest {

  private static final int IN = 20;
  private static final int CLASSES = 3;

  private static MultiLayerNetwork net() {
    MultiLayerConfiguration conf = new NeuralNetConfiguration.Builder()
        .seed(5).updater(new Adam(3e-3)).dataType(DataType.FLOAT)
        .list()
        .layer(new DenseLayer.Builder().nIn(IN).nOut(64).activation(Activation.RELU).build())
        .layer(new OutputLayer.Builder(LossFunction.MCXENT).nIn(64).nOut(CLASSES)
            .activation(Activation.SOFTMAX).build())
        .build();
    MultiLayerNetwork net = new MultiLayerNetwork(
        Dl4jAdapter.accelerate(conf, Precision.BF16).configuration());
    net.init();
    return net;
  }

  /** A separable CSV set: class k shifts feature k by +3. */
  private static Path csv(Path dir, int rows) throws Exception {
    SplittableRandom r = new SplittableRandom(17);
    StringBuilder b = new StringBuilder();
    for (int i = 0; i < rows; i++) {
      int k = r.nextInt(CLASSES);
      for (int j = 0; j < IN; j++) {
        b.append(String.format(Locale.ROOT, "%.4f,", r.nextGaussian() + (j == k ? 3 : 0)));
      }
      b.append(k).append('\n');
    }
    Path p = dir.resolve("train.csv");
    Files.writeString(p, b, StandardCharsets.UTF_8);
    return p;
  }

  private static DataSet batch(long seed, boolean poisoned) {
    SplittableRandom r = new SplittableRandom(seed);
    float[] x = new float[32 * IN];
    float[] y = new float[32 * CLASSES];
    for (int i = 0; i < 32; i++) {
      int k = r.nextInt(CLASSES);
      for (int j = 0; j < IN; j++) {
        x[i * IN + j] = (float) (r.nextGaussian() + (j == k ? 3 : 0));
      }
      y[i * CLASSES + k] = 1f;
    }
    if (poisoned) {
      x[5] = Float.POSITIVE_INFINITY;
    }
    return new DataSet(Nd4j.create(x, new long[] {32, IN}, 'c'),
        Nd4j.create(y, new long[] {32, CLASSES}, 'c'));
  }

  @Test
  void trainsOnEncodedDataWithMeteringAndCheckpoints(@TempDir Path dir) throws Exception {
    Path encodedFile = dir.resolve("train.hfds");
    EncodedDataset.encodeCsv(csv(dir, 640), encodedFile, -1, CLASSES, false);
    MultiLayerNetwork net = net();
    ScoreIterationListener own = new ScoreIterationListener(1000);
    net.setListeners(own);
    DataSet test = batch(99, false);
    double before = net.score(test);
    Trainer.Result r;
    try (EncodedDataset data = EncodedDataset.open(encodedFile)) {
      r = Trainer.train(net).data(data, 64, 7).prefetch(2, 4).epochs(3)
          .checkpoints(dir.resolve("ckpt"), 7, 2).fit();
    }
    assertEquals(3, r.epochs());
    assertEquals(30, r.steps(), "10 batches of 64 per epoch");
    assertEquals(0, r.skippedSteps());
    assertEquals(30, r.summary().steps());
    assertTrue(r.summary().samplesPerSecond() > 0);
    assertEquals(List.of(own), List.copyOf(net.getListeners()), "listeners restored");
    assertEquals(3, net.getEpochCount());
    assertTrue(net.score(test) < 0.5 * before, before + " -> " + net.score(test));

    Path last = r.lastCheckpoint().orElseThrow();
    assertEquals(2, AsyncCheckpointer.checkpoints(dir.resolve("ckpt")).size(), "keeps 2");
    Map<String, Double> state = AsyncCheckpointer.extraState(last);
    assertEquals(30.0, state.get("step"));
    MultiLayerNetwork restored = ModelSerializer.restoreMultiLayerNetwork(last.toFile(), true);
    assertEquals(net.params(), restored.params());
  }

  @Test
  void trainsAComputationGraphWithCheckpointsAndTheGuard(@TempDir Path dir) throws Exception {
    org.deeplearning4j.nn.conf.ComputationGraphConfiguration conf =
        new NeuralNetConfiguration.Builder().seed(5).updater(new Adam(3e-3))
            .dataType(DataType.FLOAT).graphBuilder().addInputs("in")
            .addLayer("dense", new DenseLayer.Builder().nIn(IN).nOut(64)
                .activation(Activation.RELU).build(), "in")
            .addLayer("out", new OutputLayer.Builder(LossFunction.MCXENT).nIn(64).nOut(CLASSES)
                .activation(Activation.SOFTMAX).build(), "dense")
            .setOutputs("out").build();
    org.deeplearning4j.nn.graph.ComputationGraph graph =
        new org.deeplearning4j.nn.graph.ComputationGraph(
            Dl4jAdapter.accelerate(conf, Precision.BF16).configuration());
    graph.init();
    DataSet test = batch(99, false);
    double before = graph.score(test);
    List<DataSet> batches = new java.util.ArrayList<>();
    for (int i = 0; i < 8; i++) {
      batches.add(batch(i, i == 3));
    }
    Trainer.Result r = Trainer.train(graph).data(new ListDataSetIterator<>(batches, 1))
        .epochs(3).checkpoints(dir, 5, 2).fit();
    assertEquals(3, r.epochs());
    assertEquals(21, r.steps(), "the poisoned batch is skipped each epoch");
    assertEquals(3, r.skippedSteps());
    assertEquals(3, graph.getEpochCount());
    assertTrue(graph.score(test) < before, before + " -> " + graph.score(test));
    Path last = r.lastCheckpoint().orElseThrow();
    org.deeplearning4j.nn.graph.ComputationGraph restored =
        ModelSerializer.restoreComputationGraph(last.toFile(), true);
    assertEquals(graph.params(), restored.params());
    assertEquals(21.0, AsyncCheckpointer.extraState(last).get("step"));
    org.deeplearning4j.nn.graph.ComputationGraph twoInputs =
        new org.deeplearning4j.nn.graph.ComputationGraph(new NeuralNetConfiguration.Builder()
            .graphBuilder().addInputs("a", "b")
            .addVertex("m", new org.deeplearning4j.nn.conf.graph.MergeVertex(), "a", "b")
            .addLayer("out", new OutputLayer.Builder(LossFunction.MSE).nIn(2).nOut(1)
                .activation(Activation.IDENTITY).build(),
                "m").setOutputs("out").build());
    twoInputs.init();
    assertTrue(assertThrows(IllegalArgumentException.class, () -> Trainer.train(twoInputs))
        .getMessage().startsWith("graph:"));
  }

  @Test
  void nonFiniteGradientsSkipTheStepAndLeaveWeightsAndUpdaterUnchanged() {
    MultiLayerNetwork net = net();
    Trainer.train(net).data(new ListDataSetIterator<>(List.of(batch(1, false)), 1)).fit();
    INDArray params = net.params().dup();
    INDArray updater = net.getUpdater().getStateViewArray().dup();

    Trainer.Result r = Trainer.train(net)
        .data(new ListDataSetIterator<>(List.of(batch(2, true)), 1)).fit();
    assertEquals(1, r.skippedSteps());
    assertEquals(0, r.steps());
    assertEquals(params, net.params());
    assertEquals(updater, net.getUpdater().getStateViewArray());

    r = Trainer.train(net).data(new ListDataSetIterator<>(
        List.of(batch(3, false), batch(4, true), batch(5, false)), 1)).fit();
    assertEquals(2, r.steps());
    assertEquals(1, r.skippedSteps());
    assertTrue(Double.isFinite(net.params().sumNumber().doubleValue()));
    assertTrue(!params.equals(net.params()), "the clean steps were applied");
  }

  @Test
  void withoutTheGuardDl4jAppliesTheNonFiniteStep() {
    MultiLayerNetwork net = net();
    Trainer.Result r = Trainer.train(net).skipNonFiniteSteps(false)
        .data(new ListDataSetIterator<>(List.of(batch(2, true)), 1)).fit();
    assertEquals(1, r.steps());
    assertTrue(!Double.isFinite(net.params().sumNumber().doubleValue()),
        "the guard is what keeps the weights finite");
  }

  @Test
  void badArgumentsNameTheField() {
    assertTrue(assertThrows(IllegalArgumentException.class,
        () -> Trainer.train((MultiLayerNetwork) null)).getMessage().startsWith("net:"));
    assertTrue(assertThrows(IllegalArgumentException.class,
        () -> Trainer.train((org.deeplearning4j.nn.graph.ComputationGraph) null)).getMessage()
        .startsWith("graph:"));
    Trainer t = Trainer.train(net());
    assertTrue(assertThrows(IllegalArgumentException.class, () -> t.epochs(0))
        .getMessage().startsWith("epochs:"));
    assertTrue(assertThrows(IllegalArgumentException.class, () -> t.prefetch(0, 4))
        .getMessage().startsWith("workers:"));
    assertTrue(assertThrows(IllegalArgumentException.class,
        () -> t.checkpoints(Path.of("x"), 0, 1)).getMessage().startsWith("everySteps:"));
    assertTrue(assertThrows(IllegalStateException.class, t::fit).getMessage()
        .startsWith("data:"));
    Trainer once = Trainer.train(net()).data(new ListDataSetIterator<>(
        List.of(batch(1, false)), 1));
    once.fit();
    assertTrue(assertThrows(IllegalStateException.class, once::fit).getMessage()
        .startsWith("trainer:"));
  }
}
