package io.hyperframes.nd4j.train;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.factory.Nd4j;

/** PyTorch GradScaler semantics on ND4J gradients. */
class DynamicLossScalerTest {

  @Test
  void infOrNanGradientsSkipTheStepBackOffAndLeaveWeightsUnchanged() {
    DynamicLossScaler s = DynamicLossScaler.pytorchDefaults();
    INDArray weights = Nd4j.rand(DataType.FLOAT, 4, 4);
    INDArray before = weights.dup();
    for (double poison : new double[] {Double.POSITIVE_INFINITY, Double.NaN,
        Double.NEGATIVE_INFINITY}) {
      INDArray grad = Nd4j.ones(DataType.FLOAT, 4, 4).muli(s.scale());
      grad.putScalar(1, 2, poison);
      double scaleBefore = s.scale();
      boolean applied = s.step(() -> weights.subi(grad), grad);
      assertFalse(applied);
      assertEquals(scaleBefore * 0.5, s.scale(), 0.0);
      assertEquals(before, weights, "weights changed by a skipped step");
    }
    assertEquals(3, s.skippedSteps());
  }

  @Test
  void cleanStepsUnscaleAndGrowTheScaleAfterTheInterval() {
    DynamicLossScaler s = DynamicLossScaler.of(8.0, 2.0, 0.5, 3);
    INDArray weights = Nd4j.zeros(DataType.FLOAT, 2);
    for (int i = 0; i < 3; i++) {
      INDArray grad = Nd4j.ones(DataType.FLOAT, 2).muli(s.scale());
      assertTrue(s.step(() -> weights.subi(grad), grad));
      assertEquals(1.0, grad.getDouble(0), 0.0, "gradient unscaled before the update");
    }
    assertEquals(16.0, s.scale(), 0.0, "doubled after 3 clean steps");
    assertEquals(-3.0, weights.getDouble(0), 0.0);
  }

  @Test
  void stateRoundTripsThroughCheckpoints() {
    DynamicLossScaler a = DynamicLossScaler.pytorchDefaults();
    a.update(true);
    a.update(false);
    DynamicLossScaler b = DynamicLossScaler.pytorchDefaults();
    b.restore(a.state());
    assertEquals(a.state(), b.state());
    assertEquals(32768.0, b.scale(), 0.0);
  }

  @Test
  void badSettingsNameTheSetting() {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> DynamicLossScaler.of(0, 2, 0.5, 10));
    assertTrue(e.getMessage().startsWith("initialScale"), e.getMessage());
    e = assertThrows(IllegalArgumentException.class, () -> DynamicLossScaler.of(1, 2, 1.5, 10));
    assertTrue(e.getMessage().startsWith("backoffFactor"), e.getMessage());
  }
}
