package io.hyperframes.nd4j;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.factory.Nd4j;

/**
 * The fused dense layer, forward and backward, against FP64 over shapes × activations ×
 * precisions, with and without bias and residual.
 *
 * <p>Bounds: an FP32 accumulation of K products costs γ_K·Σ|x||w| (Higham 2002, Thm 3.5); BF16
 * compute first rounds each input to 8 significant bits, 2·2^-8·Σ|x||w| more; the activations are
 * 1.13-Lipschitz (GELU) or less, and oneDNN evaluates them in FP32 (2^-12 relative allowance for its
 * polynomial approximations). Backward uses the kernel's own pre-activation, so the derivative
 * is evaluated at the same point in both.
 */
class FusedDenseCorrectnessTest {

  static final double U32 = Math.scalb(1.0, -24);
  static final double U_BF16 = Math.scalb(1.0, -8);
  static final double ACTIVATION_ALLOWANCE = Math.scalb(1.0, -12);
  static final double LIPSCHITZ = 1.2;

  static Stream<Arguments> cases() {
    int[][] shapes = {{1, 1, 1}, {7, 7, 7}, {1, 64, 255}, {64, 7, 1}, {255, 64, 64},
        {64, 255, 7}, {7, 1024, 64}, {256, 1024, 1024}};
    List<Arguments> out = new ArrayList<>();
    int i = 0;
    for (int[] s : shapes) {
      for (Activation a : Activation.values()) {
        for (FusedDense.Precision p : FusedDense.Precision.values()) {
          out.add(Arguments.of(s[0], s[1], s[2], a, p, i % 2 == 0, i % 3 != 0));
          i++;
        }
      }
    }
    return out.stream();
  }

  @ParameterizedTest(name = "{0}x{1}x{2} {3} {4} bias={5} residual={6}")
  @MethodSource("cases")
  void forwardAndBackwardMatchFp64(int m, int n, int k, Activation act,
      FusedDense.Precision precision, boolean withBias, boolean withResidual) {
    Random rnd = new Random(1000L * m + 100L * n + k + act.ordinal());
    Nd4j.getRandom().setSeed(rnd.nextLong());
    INDArray x = Nd4j.rand(DataType.FLOAT, m, k).muli(2).subi(1);
    INDArray w = Nd4j.rand(DataType.FLOAT, k, n).muli(2).subi(1).muli(1.0 / Math.sqrt(k));
    INDArray b = withBias ? Nd4j.rand(DataType.FLOAT, n).subi(0.5) : null;
    INDArray r = withResidual ? Nd4j.rand(DataType.FLOAT, m, n) : null;
    FusedDense layer = FusedDense.of(act, precision);
    FusedDense.Forward f = layer.forwardTraining(x, w, b, r);
    INDArray inference = layer.forward(x, w, b, r);
    assertArrayEquals(new long[] {m, n}, f.output().shape());

    double uIn = precision == FusedDense.Precision.BF16 ? U_BF16 : 0.0;
    double[][] xv = round(Fp64.values(x), precision);
    double[][] wv = round(Fp64.values(w), precision);
    double[][] xExact = Fp64.values(x);
    double[][] wExact = Fp64.values(w);
    double gamma = k * U32 / (1 - k * U32);
    for (int s = 0; s < Math.min(64, m * n); s++) {
      int i = rnd.nextInt(m);
      int j = rnd.nextInt(n);
      double z = Fp64.dot(xExact, wExact, i, j) + (b == null ? 0 : b.getDouble(j));
      double scale = Fp64.absDot(xExact, wExact, i, j) + (b == null ? 0 : Math.abs(b.getDouble(j)));
      double y = act.apply(z) + (r == null ? 0 : r.getDouble(i, j));
      double zBound = (2 * uIn + gamma) * scale + 2 * U32 * Math.abs(z) + 1e-30;
      double yBound = LIPSCHITZ * zBound + ACTIVATION_ALLOWANCE * Math.abs(act.apply(z))
          + 4 * U32 * Math.abs(y) + 1e-30;
      check("z", i, j, f.preActivation().getDouble(i, j), z, zBound);
      check("y", i, j, f.output().getDouble(i, j), y, yBound);
      check("inference y", i, j, inference.getDouble(i, j), y, yBound);
    }

    // Backward, at the kernel's own pre-activation.
    INDArray dY = Nd4j.rand(DataType.FLOAT, m, n).subi(0.5);
    FusedDense.Gradients g = layer.backward(x, w, f.preActivation(), dY);
    double[][] zv = Fp64.values(f.preActivation());
    double[][] dz = new double[m][n];
    double[][] dzRounded = new double[m][n];
    for (int i = 0; i < m; i++) {
      for (int j = 0; j < n; j++) {
        dz[i][j] = dY.getDouble(i, j) * act.derivative(zv[i][j]);
        dzRounded[i][j] = precision == FusedDense.Precision.BF16 ? Fp64.bf16(dz[i][j]) : dz[i][j];
      }
    }
    double[][] wt = Fp64.transpose(wExact);
    double[][] xt = Fp64.transpose(xExact);
    double gammaN = n * U32 / (1 - n * U32);
    double gammaM = m * U32 / (1 - m * U32);
    for (int s = 0; s < Math.min(32, m * k); s++) {
      int i = rnd.nextInt(m);
      int j = rnd.nextInt(k);
      double exact = Fp64.dot(dz, wt, i, j);
      double bound = (2 * uIn + gammaN + ACTIVATION_ALLOWANCE) * Fp64.absDot(dz, wt, i, j) + 1e-30;
      check("dX", i, j, g.input().getDouble(i, j), exact, bound);
    }
    for (int s = 0; s < Math.min(32, k * n); s++) {
      int i = rnd.nextInt(k);
      int j = rnd.nextInt(n);
      double exact = Fp64.dot(xt, dz, i, j);
      double bound = (2 * uIn + gammaM + ACTIVATION_ALLOWANCE) * Fp64.absDot(xt, dz, i, j) + 1e-30;
      check("dW", i, j, g.weights().getDouble(i, j), exact, bound);
    }
    for (int j = 0; j < Math.min(n, 32); j++) {
      double exact = 0;
      double scale = 0;
      for (int i = 0; i < m; i++) {
        exact += dz[i][j];
        scale += Math.abs(dz[i][j]);
      }
      double bound = (gammaM + ACTIVATION_ALLOWANCE) * scale + 1e-30;
      check("db", 0, j, g.bias().getDouble(0, j), exact, bound);
    }
    assertTrue(xv.length == m && wv.length == k);
  }

  private static double[][] round(double[][] v, FusedDense.Precision p) {
    if (p == FusedDense.Precision.FP32) {
      return v;
    }
    double[][] out = new double[v.length][];
    for (int i = 0; i < v.length; i++) {
      out[i] = new double[v[i].length];
      for (int j = 0; j < v[i].length; j++) {
        out[i][j] = Fp64.bf16(v[i][j]);
      }
    }
    return out;
  }

  static void check(String what, int i, int j, double got, double exact, double bound) {
    assertTrue(Math.abs(got - exact) <= bound, String.format(
        "%s[%d,%d] = %s, FP64 %s, |error| %.3g > bound %.3g", what, i, j, got, exact,
        Math.abs(got - exact), bound));
  }
}
