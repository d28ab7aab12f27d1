package io.hyperframes.nd4j.train;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.hyperframes.nd4j.SlowListIterator;
import io.hyperframes.runtime.MeteredLoop;
import io.hyperframes.runtime.StepMeter;
import org.deeplearning4j.nn.conf.MultiLayerConfiguration;
import org.deeplearning4j.nn.conf.NeuralNetConfiguration;
import org.deeplearning4j.nn.conf.layers.DenseLayer;
import org.deeplearning4j.nn.conf.layers.OutputLayer;
import org.deeplearning4j.nn.multilayer.MultiLayerNetwork;
import org.junit.jupiter.api.Test;
import org.nd4j.linalg.activations.Activation;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.dataset.DataSet;
import org.nd4j.linalg.factory.Nd4j;
import org.nd4j.linalg.learning.config.Adam;
import org.nd4j.linalg.lossfunctions.LossFunctions;

/** The step meter's DL4J listener. */
class StepMeterListenerTest {

  @Test
  void theDl4jListenerRecordsEveryIteration() {
    MultiLayerConfiguration conf = new NeuralNetConfiguration.Builder().seed(1)
        .updater(new Adam(1e-3)).list()
        .layer(new DenseLayer.Builder().nIn(8).nOut(16).activation(Activation.RELU).build())
        .layer(new OutputLayer.Builder(LossFunctions.LossFunction.MCXENT).nIn(16).nOut(3)
            .activation(Activation.SOFTMAX).build())
        .build();
    MultiLayerNetwork net = new MultiLayerNetwork(conf);
    net.init();
    StepMeter meter = new StepMeter();
    StepMeterListener listener = new StepMeterListener(meter);
    net.setListeners(listener);
    DataSet ds = new DataSet(Nd4j.rand(DataType.FLOAT, 32, 8),
        Nd4j.eye(3).getRows(new int[32]).castTo(DataType.FLOAT));
    for (int i = 0; i < 20; i++) {
      net.fit(ds);
    }
    StepMeter.Summary s = meter.summary();
    assertEquals(20, s.steps());
    assertEquals(1.0, s.dataWaitShare() + s.computeShare() + s.optimizerShare(), 1e-6);
    assertTrue(s.samplesPerSecond() > 0);
    MeteredLoop loop = listener;
    assertSame(meter, loop.meter());
    assertEquals(s, loop.summary(), "the listener's summary is its meter's");
  }

  @Test
  void dataWaitIsTheTimeInTheIteratorNotTheForwardPass() {
    MultiLayerConfiguration conf = new NeuralNetConfiguration.Builder().seed(1)
        .updater(new Adam(1e-3)).list()
        .layer(new DenseLayer.Builder().nIn(256).nOut(512).activation(Activation.RELU).build())
        .layer(new OutputLayer.Builder(LossFunctions.LossFunction.MCXENT).nIn(512).nOut(3)
            .activation(Activation.SOFTMAX).build())
        .build();
    DataSet ds = new DataSet(Nd4j.rand(DataType.FLOAT, 256, 256),
        Nd4j.eye(3).getRows(new int[256]).castTo(DataType.FLOAT));
    java.util.List<DataSet> batches = java.util.Collections.nCopies(12, ds);

    // In-memory batches: waiting for data is next to nothing, the forward pass is compute.
    MultiLayerNetwork net = new MultiLayerNetwork(conf);
    net.init();
    StepMeter fast = new StepMeter();
    StepMeterListener listener = new StepMeterListener(fast);
    net.setListeners(listener);
    net.fit(listener.metered(
        new org.deeplearning4j.datasets.iterator.utilty.ListDataSetIterator<>(batches, 1)));
    assertEquals(12, fast.summary().steps());
    assertTrue(fast.summary().dataWaitShare() < 0.05,
        "data wait " + fast.summary().dataWaitShare() + " with in-memory batches");

    // A loader that sleeps 100 ms a batch: the wait is seen and named (long enough that waiting
    // dominates even when the first steps are slow on a loaded machine).
    MultiLayerNetwork net2 = new MultiLayerNetwork(conf.clone());
    net2.init();
    StepMeter slow = new StepMeter();
    StepMeterListener listener2 = new StepMeterListener(slow);
    net2.setListeners(listener2);
    net2.fit(listener2.metered(new SlowListIterator(batches, 100)));
    assertTrue(slow.summary().dataWaitShare() > 0.3,
        "data wait " + slow.summary().dataWaitShare() + " with a 100 ms loader");
    assertTrue(slow.summary().findings().stream().anyMatch(f -> f.id().equals("loader-bound")),
        slow.summary().findings().toString());
  }
}
