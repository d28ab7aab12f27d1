package io.hyperframes.nd4j.samediff;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.hyperframes.nd4j.SlowListIterator;
import io.hyperframes.runtime.StepMeter;
import java.util.ArrayList;
import java.util.List;
import org.deeplearning4j.datasets.iterator.utilty.ListDataSetIterator;
import org.junit.jupiter.api.Test;
import org.nd4j.autodiff.samediff.SDVariable;
import org.nd4j.autodiff.samediff.SameDiff;
import org.nd4j.autodiff.samediff.TrainingConfig;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.dataset.DataSet;
import org.nd4j.linalg.factory.Nd4j;
import org.nd4j.linalg.learning.config.Adam;
import org.nd4j.weightinit.impl.XavierInitScheme;

/** SameDiff.fit metered as it is: every iteration, its phases, and the same training. */
class SameDiffMeterListenerTest {

  static SameDiff mlp(int in, int hidden, int out) {
    Nd4j.getRandom().setSeed(12);
    SameDiff sd = SameDiff.create();
    SDVariable x = sd.placeHolder("input", DataType.FLOAT, -1, in);
    SDVariable y = sd.placeHolder("label", DataType.FLOAT, -1, out);
    SDVariable w0 = sd.var("w0", new XavierInitScheme('c', in, hidden), DataType.FLOAT, in,
        hidden);
    SDVariable b0 = sd.zero("b0", DataType.FLOAT, 1, hidden);
    SDVariable w1 = sd.var("w1", new XavierInitScheme('c', hidden, out), DataType.FLOAT, hidden,
        out);
    SDVariable b1 = sd.zero("b1", DataType.FLOAT, 1, out);
    SDVariable h = sd.nn.relu(x.mmul(w0).add(b0), 0);
    SDVariable logits = h.mmul(w1).add(b1);
    sd.nn.softmax("out", logits);
    sd.loss.softmaxCrossEntropy("loss", y, logits, null);
    sd.setLossVariables("loss");
    sd.setTrainingConfig(TrainingConfig.builder().updater(new Adam(1e-3))
        .dataSetFeatureMapping("input").dataSetLabelMapping("label").build());
    return sd;
  }

  static List<DataSet> batches(int n, int batch, int in, int classes) {
    Nd4j.getRandom().setSeed(5);
    List<DataSet> out = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      INDArray x = Nd4j.rand(DataType.FLOAT, batch, in);
      INDArray labels = Nd4j.zeros(DataType.FLOAT, batch, classes);
      for (int r = 0; r < batch; r++) {
        labels.putScalar(r, (int) (x.getDouble(r, 0) * classes) % classes, 1.0);
      }
      out.add(new DataSet(x, labels));
    }
    return out;
  }

  @Test
  void everyIterationIsMeteredAndTrainingIsUnchanged() {
    List<DataSet> data = batches(12, 64, 16, 3);
    SameDiff plain = mlp(16, 32, 3);
    plain.fit(new ListDataSetIterator<>(data, 1), 2);
    SameDiff metered = mlp(16, 32, 3);
    SameDiffMeterListener listener = new SameDiffMeterListener();
    metered.fit(new ListDataSetIterator<>(data, 1), 2, listener);
    StepMeter.Summary s = listener.summary();
    assertEquals(24, s.steps());
    assertEquals(1.0, s.dataWaitShare() + s.computeShare() + s.optimizerShare(), 1e-6);
    assertTrue(s.optimizerShare() > 0, "the updater is seen: " + s);
    assertTrue(s.samplesPerSecond() > 0);
    for (String w : List.of("w0", "b0", "w1", "b1")) {
      assertArrayEquals(plain.getVariable(w).getArr().ravel().toFloatVector(),
          metered.getVariable(w).getArr().ravel().toFloatVector(), 1e-6f, w);
    }
  }

  @Test
  void aSlowIteratorIsNamed() {
    List<DataSet> data = batches(8, 64, 16, 3);
    SameDiff sd = mlp(16, 32, 3);
    SameDiffMeterListener listener = new SameDiffMeterListener();
    // 100 ms: long enough that waiting dominates even when the first steps are slow (SameDiff's
    // setup and the JIT on a loaded machine: at 30 ms the share once measured 0.29).
    sd.fit(new SlowListIterator(data, 100), 1, listener);
    StepMeter.Summary s = listener.summary();
    assertEquals(8, s.steps());
    assertTrue(s.dataWaitShare() > 0.3, "data wait " + s.dataWaitShare());
    assertTrue(s.findings().stream().anyMatch(f -> f.id().equals("loader-bound")),
        s.findings().toString());
  }
}
