package io.hyperframes.nd4j.train;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.factory.Nd4j;
import org.nd4j.linalg.learning.GradientUpdater;
import org.nd4j.linalg.learning.config.Adam;

/** FusedAdam takes the same steps as ND4J's Adam updater. */
class FusedAdamTest {

  @Test
  void matchesNd4jsAdamOverManySteps() {
    for (int n : new int[] {1000, 300_000}) {
      Nd4j.getRandom().setSeed(11);
      INDArray ours = Nd4j.randn(DataType.FLOAT, 1, n);
      INDArray theirs = ours.dup();
      FusedAdam fused = new FusedAdam(ours, 1e-2, 0.9, 0.999, 1e-8);
      Adam adam = new Adam(1e-2, 0.9, 0.999, 1e-8);
      GradientUpdater<?> updater = adam.instantiate(Nd4j.zeros(DataType.FLOAT, 1,
          adam.stateSize(n)), true);
      for (int t = 0; t < 25; t++) {
        INDArray g = Nd4j.randn(DataType.FLOAT, 1, n).muli(0.1 + t);
        fused.update(g);
        INDArray u = g.dup();
        updater.applyUpdater(u, t, 0);
        theirs.subi(u);
      }
      double scale = theirs.norm2Number().doubleValue();
      double diff = ours.sub(theirs).norm2Number().doubleValue();
      assertTrue(diff <= 1e-5 * scale, "n " + n + ": |ours - nd4j| = " + diff + " of " + scale);
      assertEquals(25, fused.steps());
    }
  }

  @Test
  void rejectsWrongArguments() {
    INDArray p = Nd4j.zeros(DataType.FLOAT, 4, 4);
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> FusedAdam.of(p, -1));
    assertTrue(e.getMessage().startsWith("learningRate"), e.getMessage());
    FusedAdam adam = FusedAdam.of(p, 1e-3);
    e = assertThrows(IllegalArgumentException.class,
        () -> adam.update(Nd4j.zeros(DataType.FLOAT, 3, 3)));
    assertTrue(e.getMessage().startsWith("gradient"), e.getMessage());
    assertThrows(IllegalArgumentException.class,
        () -> FusedAdam.of(Nd4j.zeros(DataType.DOUBLE, 2, 2), 1e-3));
  }
}
