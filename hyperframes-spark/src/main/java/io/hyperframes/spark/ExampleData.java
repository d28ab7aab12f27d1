package io.hyperframes.spark;

import io.hyperframes.nd4j.FusedDense;
import io.hyperframes.nd4j.dl4j.Dl4jAdapter;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.deeplearning4j.nn.conf.MultiLayerConfiguration;
import org.deeplearning4j.nn.conf.NeuralNetConfiguration;
import org.deeplearning4j.nn.conf.layers.DenseLayer;
import org.deeplearning4j.nn.conf.layers.OutputLayer;
import org.deeplearning4j.nn.multilayer.MultiLayerNetwork;
import org.deeplearning4j.nn.weights.WeightInit;
import org.nd4j.linalg.activations.Activation;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.dataset.DataSet;
import org.nd4j.linalg.factory.Nd4j;
import org.nd4j.linalg.learning.config.Adam;
import org.nd4j.linalg.lossfunctions.LossFunctions;

/**
 * The example MLP (784-H-H-10, ReLU, softmax, Adam 1e-3, seed 7) and the synthetic
 * classification set of {@code hyperframes bench train}: ten class centres with a tenth of their
 * 784 features at 1, and every row its centre plus Gaussian noise of deviation 2.2.
 */
final class ExampleData {
  static final int FEATURES = 784;
  static final int CLASSES = 10;

  private final float[][] centres = new float[CLASSES][FEATURES];
  private final SplittableRandom random;

  ExampleData(long seed) {
    random = new SplittableRandom(seed);
    for (float[] c : centres) {
      for (int j = 0; j < FEATURES; j++) {
        c[j] = random.nextDouble() < 0.1 ? 1f : 0f;
      }
    }
  }

  /** The next {@code count} mini-batches of {@code rows} rows. */
  List<DataSet> batches(int count, int rows) {
    List<DataSet> out = new ArrayList<>(count);
    for (int b = 0; b < count; b++) {
      float[] x = new float[rows * FEATURES];
      float[] y = new float[rows * CLASSES];
      for (int i = 0; i < rows; i++) {
        int k = random.nextInt(CLASSES);
        for (int j = 0; j < FEATURES; j++) {
          x[i * FEATURES + j] = (float) (centres[k][j] + 2.2 * random.nextGaussian());
        }
        y[i * CLASSES + k] = 1f;
      }
      out.add(new DataSet(Nd4j.create(x, new long[] {rows, FEATURES}, 'c'),
          Nd4j.create(y, new long[] {rows, CLASSES}, 'c')));
    }
    return out;
  }

  /** The MLP with {@code hidden} units a layer, fused by the adapter (BF16) or DL4J's own. */
  static MultiLayerConfiguration mlp(int hidden, boolean fused) {
    return mlp(FEATURES, hidden, CLASSES, fused);
  }

  /** The example MLP's shape at other sizes (the tests' smaller task). */
  static MultiLayerConfiguration mlp(int features, int hidden, int classes, boolean fused) {
    return fused ? fusedMlp(features, hidden, classes, FusedDense.Precision.BF16)
        : dl4jMlp(features, hidden, classes);
  }

  /**
   * {@link #mlp(int, int, int, boolean)} through the adapter, its dense layers' matmuls in
   * {@code precision}.
   */
  static MultiLayerConfiguration fusedMlp(int features, int hidden, int classes,
      FusedDense.Precision precision) {
    return Dl4jAdapter.accelerate(dl4jMlp(features, hidden, classes), precision).configuration();
  }

  private static MultiLayerConfiguration dl4jMlp(int features, int hidden, int classes) {
    return new NeuralNetConfiguration.Builder().seed(7)
        .updater(new Adam(1e-3)).weightInit(WeightInit.RELU).list()
        .layer(new DenseLayer.Builder().nIn(features).nOut(hidden).activation(Activation.RELU)
            .build())
        .layer(new DenseLayer.Builder().nIn(hidden).nOut(hidden).activation(Activation.RELU)
            .build())
        .layer(new OutputLayer.Builder(LossFunctions.LossFunction.MCXENT).nIn(hidden)
            .nOut(classes).activation(Activation.SOFTMAX).build())
        .build();
  }

  /** Share of the rows of {@code test} that {@code net} classifies right. */
  static double accuracy(MultiLayerNetwork net, List<DataSet> test) {
    long right = 0;
    long all = 0;
    for (DataSet d : test) {
      right += net.output(d.getFeatures()).argMax(1).eq(d.getLabels().argMax(1))
          .castTo(DataType.INT32).sumNumber().longValue();
      all += d.numExamples();
    }
    return (double) right / all;
  }
}
