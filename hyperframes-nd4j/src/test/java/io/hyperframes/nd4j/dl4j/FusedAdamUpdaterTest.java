package io.hyperframes.nd4j.dl4j;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.hyperframes.nd4j.FusedDense.Precision;
import java.util.Map;
import org.deeplearning4j.nn.conf.MultiLayerConfiguration;
import org.deeplearning4j.nn.conf.NeuralNetConfiguration;
import org.deeplearning4j.nn.conf.layers.BaseLayer;
import org.deeplearning4j.nn.conf.layers.DenseLayer;
import org.deeplearning4j.nn.conf.layers.OutputLayer;
import org.junit.jupiter.api.Test;
import org.nd4j.linalg.activations.Activation;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.factory.Nd4j;
import org.nd4j.linalg.indexing.NDArrayIndex;
import org.nd4j.linalg.learning.GradientUpdater;
import org.nd4j.linalg.learning.config.Adam;
import org.nd4j.linalg.lossfunctions.LossFunctions.LossFunction;
import org.nd4j.linalg.schedule.ExponentialSchedule;
import org.nd4j.linalg.schedule.ScheduleType;

/** {@link FusedAdamConfig} against DL4J's own Adam: same updates, same state, same layout. */
class FusedAdamUpdaterTest {

  /** Relative agreement of two FP32 computations of the same float formula. */
  private static final double TOLERANCE = 1e-5;

  private static double maxRelDiff(INDArray a, INDArray b) {
    double scale = Math.max(1e-12, b.amaxNumber().doubleValue());
    return a.sub(b).amaxNumber().doubleValue() / scale;
  }

  /**
   * Both updaters on state and gradient views with offsets into larger buffers, as DL4J's
   * updater blocks hand them out, over steps with a learning-rate schedule: the updates and both
   * moments agree, and nothing outside the views is written.
   */
  @Test
  void followsDl4jsAdamStepForStepOnViews() {
    int n = 70_001; // above the parallel threshold's half, odd: uneven chunks
    Adam plain = new Adam(new ExponentialSchedule(ScheduleType.ITERATION, 1e-2, 0.97));
    plain.setBeta1(0.8);
    plain.setEpsilon(1e-6);
    FusedAdamConfig fused = new FusedAdamConfig(plain);
    INDArray stateA = Nd4j.zeros(DataType.FLOAT, 1, 3 + 2 * n + 4);
    INDArray stateB = stateA.dup();
    INDArray viewA = stateA.get(NDArrayIndex.point(0), NDArrayIndex.interval(3, 3 + 2 * n))
        .reshape(1, 2 * n);
    INDArray viewB = stateB.get(NDArrayIndex.point(0), NDArrayIndex.interval(3, 3 + 2 * n))
        .reshape(1, 2 * n);
    GradientUpdater<?> a = plain.instantiate(viewA, true);
    GradientUpdater<?> b = fused.instantiate(viewB, true);
    assertInstanceOf(FusedAdamUpdater.class, b);
    java.util.Random r = new java.util.Random(5);
    for (int step = 0; step < 6; step++) {
      float[] g = new float[n];
      for (int i = 0; i < n; i++) {
        g[i] = (float) r.nextGaussian() * (i % 7 == 0 ? 1e-3f : 1f);
      }
      INDArray bufA = Nd4j.zeros(DataType.FLOAT, 1, n + 9);
      INDArray bufB = Nd4j.zeros(DataType.FLOAT, 1, n + 9);
      INDArray gradA = bufA.get(NDArrayIndex.point(0), NDArrayIndex.interval(5, 5 + n))
          .reshape(1, n);
      INDArray gradB = bufB.get(NDArrayIndex.point(0), NDArrayIndex.interval(5, 5 + n))
          .reshape(1, n);
      gradA.assign(Nd4j.create(g, new long[] {1, n}, 'c'));
      gradB.assign(gradA);
      a.applyUpdater(gradA, step, 0);
      b.applyUpdater(gradB, step, 0);
      assertTrue(maxRelDiff(gradB, gradA) < TOLERANCE, "update at step " + step + ": "
          + maxRelDiff(gradB, gradA));
      assertEquals(0, bufB.getDouble(4));
      assertEquals(0, bufB.getDouble(5 + n));
    }
    Map<String, INDArray> sa = a.getState();
    Map<String, INDArray> sb = b.getState();
    for (String k : new String[] {"M", "V"}) {
      assertTrue(maxRelDiff(sb.get(k), sa.get(k)) < TOLERANCE, k);
    }
    assertTrue(maxRelDiff(stateB, stateA) < TOLERANCE, "state view as a whole");
    assertEquals(0, stateB.getDouble(2));
    assertEquals(0, stateB.getDouble(3 + 2 * n));
  }

  /** A gradient that is not one run of memory goes through DL4J's updater on the same state. */
  @Test
  void aStridedGradientTakesDl4jsPathOnTheSameState() {
    int n = 40;
    Adam plain = new Adam(1e-2);
    INDArray viewA = Nd4j.zeros(DataType.FLOAT, 1, 2 * n);
    INDArray viewB = viewA.dup();
    GradientUpdater<?> a = plain.instantiate(viewA, true);
    GradientUpdater<?> b = new FusedAdamConfig(plain).instantiate(viewB, true);
    for (int step = 0; step < 3; step++) {
      INDArray wide = Nd4j.rand(DataType.FLOAT, 1, 2 * n).subi(0.5);
      INDArray strided = wide.get(NDArrayIndex.point(0), NDArrayIndex.interval(0, 2, 2 * n))
          .reshape(1, n);
      INDArray gradA = strided.dup();
      // Alternate the two paths: the Java arrays must follow the state DL4J's path wrote.
      INDArray gradB = step == 1 ? strided : strided.dup();
      a.applyUpdater(gradA, step, 0);
      b.applyUpdater(gradB, step, 0);
      assertTrue(maxRelDiff(gradB, gradA) < TOLERANCE, "step " + step);
    }
    assertTrue(maxRelDiff(viewB, viewA) < TOLERANCE);
  }

  @Test
  void configurationsCloneCompareAndReadBackFromJson() {
    FusedAdamConfig c = new FusedAdamConfig(new Adam(3e-4, 0.85, 0.99, 1e-7));
    FusedAdamConfig copy = c.clone();
    assertEquals(c, copy);
    assertEquals(c.hashCode(), copy.hashCode());
    assertNotEquals(new Adam(3e-4, 0.85, 0.99, 1e-7), c, "never one block with a plain Adam");
    assertNotEquals(c, new Adam(3e-4, 0.85, 0.99, 1e-7));
    MultiLayerConfiguration conf = new NeuralNetConfiguration.Builder().seed(1)
        .updater(new Adam(3e-4)).dataType(DataType.FLOAT).list()
        .layer(new DenseLayer.Builder().nIn(8).nOut(16).activation(Activation.RELU).build())
        .layer(new OutputLayer.Builder(LossFunction.MCXENT).nIn(16).nOut(3)
            .activation(Activation.SOFTMAX).build())
        .build();
    MultiLayerConfiguration accelerated = Dl4jAdapter.accelerate(conf, Precision.FP32)
        .configuration();
    for (int i = 0; i < 2; i++) {
      BaseLayer layer = (BaseLayer) accelerated.getConf(i).getLayer();
      assertInstanceOf(FusedAdamConfig.class, layer.getIUpdater(), "layer " + i);
      assertEquals(3e-4, ((Adam) layer.getIUpdater()).getLearningRate());
      // The argument keeps its own updater.
      assertEquals(Adam.class, ((BaseLayer) conf.getConf(i).getLayer()).getIUpdater().getClass());
    }
    MultiLayerConfiguration read = MultiLayerConfiguration.fromJson(accelerated.toJson());
    assertEquals(accelerated, read);
    assertInstanceOf(FusedAdamConfig.class,
        ((BaseLayer) read.getConf(1).getLayer()).getIUpdater());
  }

  @Test
  void anUpdaterWithoutStateOrOfTheWrongSizeSaysSo() {
    FusedAdamUpdater u = new FusedAdamUpdater(new FusedAdamConfig(new Adam(1e-3)));
    assertThrows(IllegalStateException.class,
        () -> u.applyUpdater(Nd4j.zeros(DataType.FLOAT, 1, 4), 0, 0));
    u.setStateViewArray(Nd4j.zeros(DataType.FLOAT, 1, 8), new long[] {1, 4}, 'c', true);
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> u.applyUpdater(Nd4j.zeros(DataType.FLOAT, 1, 5), 0, 0));
    assertTrue(e.getMessage().startsWith("gradient"), e.getMessage());
    assertThrows(IllegalStateException.class, () -> u.setState(Map.of(), false));
    e = assertThrows(IllegalArgumentException.class, () -> new FusedAdamConfig(null));
    assertTrue(e.getMessage().startsWith("adam"), e.getMessage());
    float[] a = new float[3];
    e = assertThrows(IllegalArgumentException.class,
        () -> io.hyperframes.nd4j.train.FusedAdam.pass(a, a, new float[2], a, true, 1e-3, 0.9,
            0.999, 1e-8));
    assertTrue(e.getMessage().startsWith("g, m, v, target"), e.getMessage());
    e = assertThrows(IllegalArgumentException.class,
        () -> io.hyperframes.nd4j.train.FusedAdam.pass(null, a, a, a, true, 1e-3, 0.9, 0.999,
            1e-8));
    assertTrue(e.getMessage().startsWith("g, m, v, target"), e.getMessage());
  }
}
