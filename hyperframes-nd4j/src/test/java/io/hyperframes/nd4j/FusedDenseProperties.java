package io.hyperframes.nd4j;

import static org.junit.jupiter.api.Assertions.assertTrue;

import net.jqwik.api.Assume;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.factory.Nd4j;

/** Laws of the fused layer over random shapes and activations. */
class FusedDenseProperties {

  /** Forward = activation(matmul + bias) + residual, computed step by step with ND4J. */
  @Property(tries = 200)
  void fusedEqualsComposed(@ForAll @IntRange(min = 1, max = 48) int m,
      @ForAll @IntRange(min = 1, max = 48) int n, @ForAll @IntRange(min = 1, max = 48) int k,
      @ForAll Activation act, @ForAll boolean transposedWeights) {
    INDArray x = Nd4j.rand(DataType.FLOAT, m, k).subi(0.5);
    INDArray w = transposedWeights ? Nd4j.rand(DataType.FLOAT, n, k).subi(0.5).transpose()
        : Nd4j.rand(DataType.FLOAT, k, n).subi(0.5);
    INDArray b = Nd4j.rand(DataType.FLOAT, n);
    INDArray r = Nd4j.rand(DataType.FLOAT, m, n);
    INDArray y = FusedDense.of(act, FusedDense.Precision.FP32).forward(x, w, b, r);
    INDArray z = Matmul.multiply(x, w).addiRowVector(b);
    for (long i = 0; i < z.length(); i++) {
      z.putScalar(i, act.apply(z.getDouble(i)));
    }
    z.addi(r);
    assertTrue(y.equalsWithEps(z, 1e-4), () -> "max diff " + y.sub(z).amaxNumber());
  }

  /** The gradient of Σ y·dY with respect to W matches a finite difference (central, FP32). */
  @Property(tries = 100)
  void weightGradientMatchesFiniteDifferences(@ForAll @IntRange(min = 1, max = 12) int m,
      @ForAll @IntRange(min = 1, max = 12) int n, @ForAll @IntRange(min = 1, max = 12) int k,
      @ForAll Activation act) {
    INDArray x = Nd4j.rand(DataType.FLOAT, m, k).subi(0.5);
    INDArray w = Nd4j.rand(DataType.FLOAT, k, n).subi(0.5);
    INDArray dY = Nd4j.rand(DataType.FLOAT, m, n).subi(0.5);
    FusedDense layer = FusedDense.of(act, FusedDense.Precision.FP32);
    FusedDense.Forward f = layer.forwardTraining(x, w, null, null);
    INDArray dW = layer.backward(x, w, f.preActivation(), dY).weights();
    int i = (m * 7 + k) % k;
    int j = (n * 3 + m) % n;
    double h = 1e-2;
    if (act == Activation.RELU) {
      // A central difference across ReLU's kink measures neither side's slope: a try where
      // moving W[i,j] by ±h moves a pre-activation of column j across 0 says nothing of dW.
      for (int r = 0; r < m; r++) {
        Assume.that(Math.abs(f.preActivation().getDouble(r, j))
            > h * Math.abs(x.getDouble(r, i)));
      }
    }
    double orig = w.getDouble(i, j);
    w.putScalar(i, j, orig + h);
    double plus = layer.forward(x, w, null, null).mul(dY).sumNumber().doubleValue();
    w.putScalar(i, j, orig - h);
    double minus = layer.forward(x, w, null, null).mul(dY).sumNumber().doubleValue();
    w.putScalar(i, j, orig);
    double numeric = (plus - minus) / (2 * h);
    double analytic = dW.getDouble(i, j);
    double tolerance = act == Activation.RELU ? 0.05 * m + 1e-3 : 2e-3 * m + 1e-3;
    assertTrue(Math.abs(numeric - analytic) <= tolerance,
        () -> "dW[" + i + "," + j + "] analytic " + analytic + " numeric " + numeric);
  }
}
