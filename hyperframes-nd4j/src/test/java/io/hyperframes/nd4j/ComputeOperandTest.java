package io.hyperframes.nd4j;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.factory.Nd4j;

/**
 * {@link FusedDense#toCompute}: operands converted once give exactly the forward and backward of
 * operands each call converts itself (the same reorder), an FP32 layer converts nothing, and a
 * wrong destination is named.
 */
class ComputeOperandTest {

  @Test
  void convertedOnceGivesTheSameForwardAndBackward() {
    FusedDense layer = FusedDense.of(Activation.GELU_TANH, FusedDense.Precision.BF16);
    Nd4j.getRandom().setSeed(7);
    INDArray x = Nd4j.randn(DataType.FLOAT, 64, 96);
    INDArray w = Nd4j.randn(DataType.FLOAT, 96, 80).muli(0.1);
    INDArray b = Nd4j.randn(DataType.FLOAT, 1, 80);
    INDArray dY = Nd4j.randn(DataType.FLOAT, 64, 80);
    INDArray x16 = layer.toCompute(x, Nd4j.createUninitialized(DataType.BFLOAT16, 64, 96));
    INDArray w16 = layer.toCompute(w, Nd4j.createUninitialized(DataType.BFLOAT16, 96, 80));
    FusedDense.Forward own = layer.forwardTraining(x, w, b, null);
    FusedDense.Forward once = layer.forwardTraining(x16, w16, b, null);
    assertArrayEquals(flat(own.output()), flat(once.output()));
    assertArrayEquals(flat(own.preActivation()), flat(once.preActivation()));
    FusedDense.Gradients g = layer.backward(x, w, own.preActivation(), dY);
    FusedDense.Gradients h = layer.backward(x16, w16, own.preActivation(), dY);
    assertArrayEquals(flat(g.input()), flat(h.input()));
    assertArrayEquals(flat(g.weights()), flat(h.weights()));
    assertArrayEquals(flat(g.bias()), flat(h.bias()));
    if (x16 != x) {
      // Where the CPU multiplies BF16, the operand is BF16 and rounds each value once.
      assertTrue(x16.dataType() == DataType.BFLOAT16);
      float[] a = flat(x);
      float[] r = flat(x16.castTo(DataType.FLOAT));
      for (int i = 0; i < a.length; i++) {
        assertTrue(Math.abs(a[i] - r[i]) <= Math.abs(a[i]) * 0x1p-8, i + ": " + a[i] + " " + r[i]);
      }
    }
  }

  @Test
  void anFp32LayerConvertsNothingAndAWrongDestinationIsNamed() {
    INDArray w = Nd4j.randn(DataType.FLOAT, 8, 4);
    FusedDense fp32 = FusedDense.of(Activation.IDENTITY, FusedDense.Precision.FP32);
    assertSame(w, fp32.toCompute(w, null));
    FusedDense bf16 = FusedDense.of(Activation.IDENTITY, FusedDense.Precision.BF16);
    INDArray converted = bf16.toCompute(w, Nd4j.createUninitialized(DataType.BFLOAT16, 8, 4));
    if (converted != w) {
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
          () -> bf16.toCompute(w, Nd4j.createUninitialized(DataType.BFLOAT16, 4, 8)));
      assertTrue(e.getMessage().startsWith("into: must be a dense row-major BF16 [8, 4]"),
          e.getMessage());
    }
  }

  /**
   * BF16 operands, dense in either order or a strided view, give the forward and backward of the
   * FP32 values they hold in the same layout: widened in Java or reordered by oneDNN where the CPU
   * computes in FP32, taken as they are where it multiplies BF16. Equal up to FP32 summation
   * order (the kernels may pick another order for another layout); a wrong widening would be off
   * by the values themselves.
   */
  @Test
  void bf16OperandsGiveTheResultsOfTheirValues() {
    FusedDense layer = FusedDense.of(Activation.GELU_TANH, FusedDense.Precision.BF16);
    Nd4j.getRandom().setSeed(11);
    INDArray b = Nd4j.randn(DataType.FLOAT, 1, 40);
    INDArray dY = Nd4j.randn(DataType.FLOAT, 32, 40);
    INDArray w = Nd4j.randn(DataType.FLOAT, 48, 40).muli(0.1).castTo(DataType.BFLOAT16);
    INDArray rowMajor = Nd4j.randn(DataType.FLOAT, 32, 48).castTo(DataType.BFLOAT16);
    INDArray columnMajor = Nd4j.randn(DataType.FLOAT, 48, 32).castTo(DataType.BFLOAT16);
    INDArray wide = Nd4j.randn(DataType.FLOAT, 32, 96).castTo(DataType.BFLOAT16);
    org.nd4j.linalg.indexing.INDArrayIndex everyOther =
        org.nd4j.linalg.indexing.NDArrayIndex.interval(0, 2, 96);
    INDArray[][] pairs = {
        {rowMajor, rowMajor.castTo(DataType.FLOAT)},
        {columnMajor.transpose(), columnMajor.castTo(DataType.FLOAT).transpose()},
        {wide.get(org.nd4j.linalg.indexing.NDArrayIndex.all(), everyOther),
            wide.castTo(DataType.FLOAT).get(org.nd4j.linalg.indexing.NDArrayIndex.all(),
                everyOther)}};
    INDArray w32 = w.castTo(DataType.FLOAT);
    for (INDArray[] pair : pairs) {
      FusedDense.Forward got = layer.forwardTraining(pair[0], w, b, null);
      FusedDense.Forward want = layer.forwardTraining(pair[1], w32, b, null);
      assertClose(want.output(), got.output());
      assertClose(want.preActivation(), got.preActivation());
      FusedDense.Gradients g = layer.backward(pair[0], w, want.preActivation(), dY);
      FusedDense.Gradients h = layer.backward(pair[1], w32, want.preActivation(), dY);
      assertClose(h.input(), g.input());
      assertClose(h.weights(), g.weights());
      assertClose(h.bias(), g.bias());
    }
  }

  private static void assertClose(INDArray want, INDArray got) {
    float[] a = flat(want);
    float[] r = flat(got);
    assertEquals(a.length, r.length);
    for (int i = 0; i < a.length; i++) {
      assertEquals(a[i], r[i], 1e-4 * Math.max(1, Math.abs(a[i])), "element " + i);
    }
  }

  private static float[] flat(INDArray a) {
    return a.ravel().toFloatVector();
  }
}
