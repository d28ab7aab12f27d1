package io.hyperframes.nd4j.dl4j;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.hyperframes.nd4j.FusedDense.Precision;
import java.io.File;
import java.nio.file.Path;
import java.util.List;
import org.deeplearning4j.nn.conf.ComputationGraphConfiguration;
import org.deeplearning4j.nn.conf.MultiLayerConfiguration;
import org.deeplearning4j.nn.conf.NeuralNetConfiguration;
import org.deeplearning4j.nn.conf.layers.DenseLayer;
import org.deeplearning4j.nn.conf.layers.OutputLayer;
import org.deeplearning4j.nn.graph.ComputationGraph;
import org.deeplearning4j.nn.multilayer.MultiLayerNetwork;
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

class Dl4jAdapterTest {

  private static final int IN = 48;
  private static final int HIDDEN = 96;
  private static final int CLASSES = 5;

  private static MultiLayerConfiguration mlp(Activation hidden2) {
    return new NeuralNetConfiguration.Builder()
        .seed(7).updater(new Adam(1e-3)).dataType(DataType.FLOAT)
        .list()
        .layer(new DenseLayer.Builder().nIn(IN).nOut(HIDDEN).activation(Activation.RELU).build())
        .layer(new DenseLayer.Builder().nIn(HIDDEN).nOut(HIDDEN).activation(hidden2).build())
        .layer(new OutputLayer.Builder(LossFunction.MCXENT).nIn(HIDDEN).nOut(CLASSES)
            .activation(Activation.SOFTMAX).build())
        .build();
  }

  private static MultiLayerNetwork net(MultiLayerConfiguration conf) {
    MultiLayerNetwork net = new MultiLayerNetwork(conf);
    net.init();
    return net;
  }

  /** A deterministic batch: labels from the sign pattern of a fixed projection. */
  private static DataSet batch(int rows, long seed) {
    INDArray x = uniform(new java.util.Random(seed), rows, IN);
    INDArray proj = uniform(new java.util.Random(99), IN, CLASSES);
    INDArray scores = x.mmul(proj);
    INDArray labels = Nd4j.zeros(DataType.FLOAT, rows, CLASSES);
    for (int r = 0; r < rows; r++) {
      labels.putScalar(r, scores.getRow(r).argMax().getInt(0), 1f);
    }
    return new DataSet(x, labels);
  }

  private static INDArray uniform(java.util.Random random, int rows, int cols) {
    float[] v = new float[rows * cols];
    for (int i = 0; i < v.length; i++) {
      v[i] = random.nextFloat() * 2 - 1;
    }
    return Nd4j.create(v, new long[] {rows, cols}, 'c');
  }

  private static double maxRelDiff(INDArray a, INDArray b) {
    double scale = Math.max(1e-6, b.amaxNumber().doubleValue());
    return a.sub(b).amaxNumber().doubleValue() / scale;
  }

  @Test
  void replacesDenseLayersOnlyAndKeepsTheArgument() {
    MultiLayerConfiguration conf = mlp(Activation.RELU);
    Dl4jAdapter.Accelerated<MultiLayerConfiguration> acc = Dl4jAdapter.accelerate(conf,
        Precision.BF16);
    assertEquals(List.of("layer0", "layer1"), acc.fused());
    assertEquals(List.of(), acc.skipped());
    assertInstanceOf(FusedDenseLayer.class, acc.configuration().getConf(0).getLayer());
    assertInstanceOf(FusedDenseLayer.class, acc.configuration().getConf(1).getLayer());
    assertInstanceOf(OutputLayer.class, acc.configuration().getConf(2).getLayer());
    assertEquals(DenseLayer.class, conf.getConf(0).getLayer().getClass(),
        "the caller's configuration is not modified");
    assertNotSame(conf, acc.configuration());
  }

  @Test
  void unsupportedActivationIsSkippedWithTheReason() {
    Dl4jAdapter.Accelerated<MultiLayerConfiguration> acc = Dl4jAdapter.accelerate(
        mlp(Activation.SIGMOID), Precision.FP32);
    assertEquals(List.of("layer0"), acc.fused());
    assertEquals(1, acc.skipped().size());
    assertTrue(acc.skipped().get(0).startsWith("layer1: activation"), acc.skipped().get(0));
    assertEquals(DenseLayer.class, acc.configuration().getConf(1).getLayer().getClass());
  }

  @Test
  void badArgumentsNameTheField() {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> Dl4jAdapter.accelerate((MultiLayerConfiguration) null, Precision.BF16));
    assertTrue(e.getMessage().startsWith("conf:"), e.getMessage());
    e = assertThrows(IllegalArgumentException.class,
        () -> Dl4jAdapter.accelerate(mlp(Activation.RELU), null));
    assertTrue(e.getMessage().startsWith("precision:"), e.getMessage());
    DenseLayer sigmoid = (DenseLayer) mlp(Activation.SIGMOID).getConf(1).getLayer();
    e = assertThrows(IllegalArgumentException.class,
        () -> FusedDenseLayer.from(sigmoid, Precision.BF16));
    assertTrue(e.getMessage().contains("cannot be fused"), e.getMessage());
  }

  @Test
  void fp32OutputsAndGradientsMatchDl4j() {
    MultiLayerNetwork plain = net(mlp(Activation.SWISH));
    MultiLayerNetwork fused = net(Dl4jAdapter.accelerate(mlp(Activation.SWISH), Precision.FP32)
        .configuration());
    fused.setParams(plain.params().dup());
    DataSet ds = batch(64, 1);

    double out = maxRelDiff(fused.output(ds.getFeatures()), plain.output(ds.getFeatures()));
    assertTrue(out < 1e-5, "FP32 output differs by " + out);

    plain.setInput(ds.getFeatures());
    plain.setLabels(ds.getLabels());
    plain.computeGradientAndScore();
    fused.setInput(ds.getFeatures());
    fused.setLabels(ds.getLabels());
    fused.computeGradientAndScore();
    assertEquals(plain.score(), fused.score(), 1e-5 * Math.abs(plain.score()));
    double grad = maxRelDiff(fused.gradient().gradient(), plain.gradient().gradient());
    assertTrue(grad < 1e-4, "FP32 gradient differs by " + grad);
  }

  @Test
  void bf16OutputsMatchWithinBf16Rounding() {
    MultiLayerNetwork plain = net(mlp(Activation.RELU));
    MultiLayerNetwork fused = net(Dl4jAdapter.accelerate(mlp(Activation.RELU), Precision.BF16)
        .configuration());
    fused.setParams(plain.params().dup());
    DataSet ds = batch(64, 2);
    INDArray a = fused.output(ds.getFeatures());
    INDArray b = plain.output(ds.getFeatures());
    // Probabilities: BF16 inputs carry 8 significant bits, the sums over K ≤ 96 stay near 2^-8.
    double diff = a.sub(b).amaxNumber().doubleValue();
    assertTrue(diff < 2e-2, "BF16 probabilities differ by " + diff);
    // Not bit-identical: the BF16 kernel ran, not DL4J's FP32 fallback.
    assertTrue(diff > 0, "BF16 output equals FP32 output: the fused path did not run");
    assertInstanceOf(FusedDenseLayerImpl.class, fused.getLayer(0));

    // One training step: BF16 gradients move the parameters slightly differently from FP32.
    DataSet step = batch(64, 3);
    plain.fit(step);
    fused.fit(step);
    double paramDiff = maxRelDiff(fused.params(), plain.params());
    assertTrue(paramDiff > 0 && paramDiff < 1e-2, "params after one step differ by " + paramDiff);
  }

  @Test
  void fp32TrainingFollowsDl4jStepForStep() {
    MultiLayerNetwork plain = net(mlp(Activation.RELU));
    MultiLayerNetwork fused = net(Dl4jAdapter.accelerate(mlp(Activation.RELU), Precision.FP32)
        .configuration());
    fused.setParams(plain.params().dup());
    for (int step = 0; step < 20; step++) {
      DataSet ds = batch(32, 100 + step);
      plain.fit(ds);
      fused.fit(ds);
    }
    double diff = maxRelDiff(fused.params(), plain.params());
    assertTrue(diff < 1e-3, "parameters after 20 Adam steps differ by " + diff);
    FusedDenseLayerImpl first = (FusedDenseLayerImpl) fused.getLayer(0);
    assertEquals(20, first.reused, "backward used the forward's pre-activation");
    assertEquals(0, first.recomputed);
  }

  @Test
  void bf16TrainingLearns() {
    MultiLayerNetwork fused = net(Dl4jAdapter.accelerate(mlp(Activation.RELU), Precision.BF16)
        .configuration());
    DataSet test = batch(512, 5);
    double before = fused.score(test);
    for (int step = 0; step < 150; step++) {
      fused.fit(batch(64, 1000 + step));
    }
    double after = fused.score(test);
    assertTrue(after < 0.6 * before, "loss " + before + " -> " + after);
    double accuracy = fused.evaluate(new org.nd4j.linalg.dataset.adapter.SingletonDataSetIterator(
        test)).accuracy();
    assertTrue(accuracy > 0.7, "accuracy " + accuracy);
  }

  @Test
  void savedModelsLoadAndParametersAreInterchangeable(@TempDir Path dir) throws Exception {
    MultiLayerNetwork fused = net(Dl4jAdapter.accelerate(mlp(Activation.RELU), Precision.BF16)
        .configuration());
    fused.fit(batch(32, 3));
    File file = dir.resolve("fused.zip").toFile();
    ModelSerializer.writeModel(fused, file, true);
    MultiLayerNetwork restored = ModelSerializer.restoreMultiLayerNetwork(file, true);
    FusedDenseLayer layer = assertInstanceOf(FusedDenseLayer.class,
        restored.getLayerWiseConfigurations().getConf(0).getLayer());
    assertEquals(Precision.BF16, layer.getPrecision());
    assertEquals(fused.getLayerWiseConfigurations(), restored.getLayerWiseConfigurations());
    INDArray x = batch(16, 4).getFeatures();
    assertEquals(fused.output(x), restored.output(x));
    assertEquals(fused.getUpdater().getStateViewArray(),
        restored.getUpdater().getStateViewArray());
    // Training goes on from the restored Adam moments, not from zeros.
    fused.fit(batch(32, 5));
    restored.fit(batch(32, 5));
    assertEquals(fused.params(), restored.params(), "one step after the restore");

    // The same parameters in a plain DL4J network give the same answers (FP32 against BF16).
    MultiLayerNetwork plain = net(mlp(Activation.RELU));
    plain.setParams(restored.params());
    assertTrue(plain.output(x).sub(restored.output(x)).amaxNumber().doubleValue() < 2e-2);
  }

  @Test
  void computationGraphsAreAcceleratedToo() {
    ComputationGraphConfiguration conf = new NeuralNetConfiguration.Builder()
        .seed(3).updater(new Adam(1e-3)).dataType(DataType.FLOAT)
        .graphBuilder()
        .addInputs("in")
        .addLayer("h1", new DenseLayer.Builder().nIn(IN).nOut(HIDDEN)
            .activation(Activation.RELU).build(), "in")
        .addLayer("h2", new DenseLayer.Builder().nIn(HIDDEN).nOut(HIDDEN)
            .activation(Activation.TANH).build(), "h1")
        .addLayer("out", new OutputLayer.Builder(LossFunction.MCXENT).nIn(HIDDEN).nOut(CLASSES)
            .activation(Activation.SOFTMAX).build(), "h2")
        .setOutputs("out")
        .build();
    Dl4jAdapter.Accelerated<ComputationGraphConfiguration> acc = Dl4jAdapter.accelerate(conf,
        Precision.FP32);
    assertEquals(List.of("h1"), acc.fused());
    assertEquals(1, acc.skipped().size());
    ComputationGraph plain = new ComputationGraph(conf);
    plain.init();
    ComputationGraph fused = new ComputationGraph(acc.configuration());
    fused.init();
    fused.setParams(plain.params().dup());
    DataSet ds = batch(32, 8);
    double diff = maxRelDiff(fused.outputSingle(ds.getFeatures()),
        plain.outputSingle(ds.getFeatures()));
    assertTrue(diff < 1e-5, "graph output differs by " + diff);
    fused.fit(ds);
    plain.fit(ds);
    assertTrue(maxRelDiff(fused.params(), plain.params()) < 1e-4);
  }

  @Test
  void dropoutFallsBackToDl4jAndStillTrains() {
    MultiLayerConfiguration conf = new NeuralNetConfiguration.Builder()
        .seed(11).updater(new Adam(1e-3)).dataType(DataType.FLOAT).dropOut(0.9)
        .list()
        .layer(new DenseLayer.Builder().nIn(IN).nOut(HIDDEN).activation(Activation.RELU).build())
        .layer(new OutputLayer.Builder(LossFunction.MCXENT).nIn(HIDDEN).nOut(CLASSES)
            .activation(Activation.SOFTMAX).dropOut(0.0).build())
        .build();
    MultiLayerNetwork fused = net(Dl4jAdapter.accelerate(conf, Precision.BF16).configuration());
    DataSet test = batch(256, 9);
    double before = fused.score(test);
    for (int step = 0; step < 100; step++) {
      fused.fit(batch(64, 2000 + step));
    }
    assertTrue(fused.score(test) < before);
  }
}
