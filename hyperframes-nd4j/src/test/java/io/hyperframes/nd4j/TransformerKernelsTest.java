package io.hyperframes.nd4j;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.function.ToDoubleFunction;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.factory.Nd4j;
import org.nd4j.linalg.indexing.NDArrayIndex;

/**
 * The element-wise kernels of the transformer block (RMSNorm, LayerNorm, rotary embeddings,
 * SwiGLU) against FP64 references written from the papers' equations, and each backward pass
 * against central finite differences of its reference's loss {@code Σ dOut ⊙ y}, so that the
 * gradient formulas are checked independently of the code that states them.
 *
 * <p>Bounds, relative to the largest reference value of the same result or to 1 (the size of the
 * standard normal inputs, the scale of the terms that cancel in a gradient) where that is
 * smaller: FP32 results 1e-5
 * (inputs are exact FP32 values; FP64 row sums, one rounding to FP32 of each result, and the
 * FP32 storage of 1/rms, 1/σ and the rotation tables: a few units of 2⁻²⁴); BF16 results 2⁻⁸ (one
 * rounding to BF16, at most 2⁻⁹ of the value, over the FP32 error); finite differences 1e-4 (a
 * step of 1e-6 in FP64 has truncation and cancellation errors near 1e-9 of the values here).
 */
class TransformerKernelsTest {

  private static final double FP32 = 1e-5;
  private static final double BF16 = 0x1p-8;
  private static final double NUMERIC = 1e-4;

  @ParameterizedTest(name = "T {0}, h {1}")
  @CsvSource({"1, 1", "1, 16", "5, 16", "7, 64"})
  void rmsNormIsTheReferenceAndItsGradient(int t, int h) {
    double eps = 1e-5;
    INDArray x = random(t, h, 11L * t + h);
    INDArray gain = random(1, h, 3L * h).addi(1).reshape(h);
    INDArray dOut = random(t, h, 7L * t);
    RmsNorm norm = new RmsNorm(eps);
    RmsNorm.Forward f = norm.forward(x, gain);
    double[] xs = flat(x);
    double[] gs = flat(gain);
    double[] ds = flat(dOut);
    close("out", rms(xs, gs, t, h, eps), flat(f.out()), FP32);
    close("out bf16", rms(xs, gs, t, h, eps),
        flat(norm.forward(x, gain, DataType.BFLOAT16).out()), BF16);
    RmsNorm.Gradients g = norm.backward(dOut, x, gain, f);
    close("dx", numeric(xs, p -> dot(ds, rms(p, gs, t, h, eps))), flat(g.dx()), NUMERIC);
    close("dGain", numeric(gs, p -> dot(ds, rms(xs, p, t, h, eps))), flat(g.dGain()), NUMERIC);
  }

  @ParameterizedTest(name = "T {0}, h {1}")
  @CsvSource({"1, 2", "1, 16", "5, 16", "7, 64"})
  void layerNormIsTheReferenceAndItsGradient(int t, int h) {
    double eps = 1e-5;
    INDArray x = random(t, h, 13L * t + h).addi(0.5);
    INDArray gain = random(1, h, 5L * h).addi(1).reshape(h);
    INDArray bias = random(1, h, 9L * h).reshape(h);
    INDArray dOut = random(t, h, 17L * t);
    LayerNorm norm = new LayerNorm(eps);
    LayerNorm.Forward f = norm.forward(x, gain, bias, DataType.FLOAT);
    double[] xs = flat(x);
    double[] gs = flat(gain);
    double[] bs = flat(bias);
    double[] ds = flat(dOut);
    close("out", layer(xs, gs, bs, t, h, eps), flat(f.out()), FP32);
    close("out bf16", layer(xs, gs, bs, t, h, eps),
        flat(norm.forward(x, gain, bias, DataType.BFLOAT16).out()), BF16);
    LayerNorm.Gradients g = norm.backward(dOut, x, gain, f);
    close("dx", numeric(xs, p -> dot(ds, layer(p, gs, bs, t, h, eps))), flat(g.dx()), NUMERIC);
    close("dGain", numeric(gs, p -> dot(ds, layer(xs, p, bs, t, h, eps))), flat(g.dGain()),
        NUMERIC);
    close("dBias", numeric(bs, p -> dot(ds, layer(xs, gs, p, t, h, eps))), flat(g.dBias()),
        NUMERIC);
  }

  @ParameterizedTest(name = "T {0}, {1} heads of {2}, first position {3}")
  @CsvSource({"1, 1, 2, 0", "6, 2, 8, 0", "6, 3, 16, 40", "33, 1, 64, 1000"})
  void rotaryIsTheReferenceAndItsInverseIsItsGradient(int t, int heads, int d, int first) {
    double base = 10_000;
    Rotary rotary = new Rotary(d, 2048, base);
    INDArray x = random(t, heads * d, 19L * t + d);
    INDArray dOut = random(t, heads * d, 23L * t + d);
    double[] xs = flat(x);
    double[] ds = flat(dOut);
    INDArray rotated = x.dup();
    rotary.rotate(rotated, first);
    close("rotated", rope(xs, t, heads, d, first, base), flat(rotated), FP32);
    INDArray back = rotated.dup();
    rotary.rotateBack(back, first);
    close("rotated back", xs, flat(back), FP32);
    INDArray grad = dOut.dup();
    rotary.rotateBack(grad, first);
    close("dx", numeric(xs, p -> dot(ds, rope(p, t, heads, d, first, base))), flat(grad),
        NUMERIC);
  }

  /**
   * RoPE's defining law (RoFormer §3.2): the product of a query rotated to position m and a key
   * rotated to position n depends on m − n only.
   */
  @Test
  void rotatedProductsDependOnTheDistanceOnly() {
    int d = 32;
    Rotary rotary = new Rotary(d, 512, 10_000);
    INDArray q = random(1, d, 1);
    INDArray k = random(1, d, 2);
    double[] products = new double[3];
    int[][] positions = {{5, 2}, {103, 100}, {400, 397}};
    for (int i = 0; i < 3; i++) {
      INDArray qr = q.dup();
      INDArray kr = k.dup();
      rotary.rotate(qr, positions[i][0]);
      rotary.rotate(kr, positions[i][1]);
      products[i] = qr.mul(kr).sumNumber().doubleValue();
    }
    double size = q.norm2Number().doubleValue() * k.norm2Number().doubleValue();
    assertEquals(products[0], products[1], 1e-5 * size);
    assertEquals(products[0], products[2], 1e-5 * size);
  }

  /** The query and key columns of a fused [T, 3h] product rotate in place; the values do not. */
  @Test
  void rotaryWorksOnAColumnRangeOfAWiderMatrix() {
    int t = 5;
    int d = 8;
    Rotary rotary = new Rotary(d, 64, 10_000);
    INDArray qkv = random(t, 3 * 2 * d, 29);
    INDArray expected = qkv.get(NDArrayIndex.all(), NDArrayIndex.interval(0, 4 * d)).dup();
    rotary.rotate(expected, 3);
    INDArray values = qkv.get(NDArrayIndex.all(), NDArrayIndex.interval(4 * d, 6 * d)).dup();
    rotary.rotate(qkv.get(NDArrayIndex.all(), NDArrayIndex.interval(0, 4 * d)), 3);
    assertEquals(expected, qkv.get(NDArrayIndex.all(), NDArrayIndex.interval(0, 4 * d)));
    assertEquals(values, qkv.get(NDArrayIndex.all(), NDArrayIndex.interval(4 * d, 6 * d)));
  }

  @ParameterizedTest(name = "T {0}, f {1}")
  @CsvSource({"1, 1", "4, 16", "9, 48"})
  void swiGluIsTheReferenceAndItsGradient(int t, int f) {
    INDArray gateUp = random(t, 2 * f, 31L * t + f).muli(2);
    INDArray dOut = random(t, f, 37L * t + f);
    double[] gs = flat(gateUp);
    double[] ds = flat(dOut);
    close("out", swiglu(gs, t, f), flat(SwiGlu.forward(gateUp, DataType.FLOAT)), FP32);
    close("out bf16", swiglu(gs, t, f), flat(SwiGlu.forward(gateUp, DataType.BFLOAT16)), BF16);
    double[] numeric = numeric(gs, p -> dot(ds, swiglu(p, t, f)));
    close("dGateUp", numeric, flat(SwiGlu.backward(dOut, gateUp)), NUMERIC);
    // The Java path (no oneDNN; and the forward into a held array, as decoding uses it).
    close("out into", swiglu(gs, t, f),
        flat(SwiGlu.forward(gateUp, Nd4j.create(DataType.FLOAT, t, f))), FP32);
    close("dGateUp in Java", numeric, flat(SwiGlu.backward(dOut, gateUp, null)), NUMERIC);
    // The training pair: silu(a) kept from the forward pass, the gradient in either type.
    SwiGlu.Forward kept = SwiGlu.forwardTraining(gateUp, DataType.BFLOAT16);
    close("training out bf16", swiglu(gs, t, f), flat(kept.out()), BF16);
    assertEquals(DataType.BFLOAT16, kept.out().dataType());
    INDArray dKept = SwiGlu.backward(dOut, gateUp, kept, DataType.FLOAT);
    close("dGateUp from the kept silu", numeric, flat(dKept), NUMERIC);
    close("the same as recomputing", flat(SwiGlu.backward(dOut, gateUp)), flat(dKept), FP32);
    INDArray dBf16 = SwiGlu.backward(dOut, gateUp, kept, DataType.BFLOAT16);
    assertEquals(DataType.BFLOAT16, dBf16.dataType());
    close("dGateUp bf16", flat(dKept), flat(dBf16), BF16);
  }

  @Test
  void badInputNamesTheArgument() {
    INDArray x = random(3, 8, 1);
    RmsNorm rms = new RmsNorm(1e-6);
    assertMessage("gain: must be a vector of 8 values, got shape [7]",
        () -> rms.forward(x, Nd4j.ones(DataType.FLOAT, 7)));
    assertMessage("outType: must be FLOAT or BFLOAT16, got DOUBLE",
        () -> rms.forward(x, Nd4j.ones(DataType.FLOAT, 8), DataType.DOUBLE));
    RmsNorm.Forward f = rms.forward(x, Nd4j.ones(DataType.FLOAT, 8));
    assertMessage("dOut: shape [3, 7] must be x's [3, 8]",
        () -> rms.backward(random(3, 7, 2), x, Nd4j.ones(DataType.FLOAT, 8), f));
    assertMessage("epsilon: must be finite and >= 0, got NaN", () -> new RmsNorm(Double.NaN));
    assertMessage("epsilon: must be finite and >= 0, got -1.0", () -> new LayerNorm(-1));
    assertMessage("bias: must be FP32, got DOUBLE", () -> new LayerNorm(1e-5).forward(x,
        Nd4j.ones(DataType.FLOAT, 8), Nd4j.ones(DataType.DOUBLE, 8), DataType.FLOAT));
    assertMessage("headDim: must be even and >= 2, got 7", () -> new Rotary(7, 16, 10_000));
    assertMessage("base: must be finite and > 1, got 1.0", () -> new Rotary(8, 16, 1));
    Rotary rotary = new Rotary(4, 16, 10_000);
    assertMessage("x: 6 columns are not whole heads of 4",
        () -> rotary.rotate(random(2, 6, 3), 0));
    assertMessage("firstPosition: rows at positions 14 to 16 are outside [0, 16)",
        () -> rotary.rotate(random(3, 8, 4), 14));
    assertMessage("x: data type BFLOAT16 not supported",
        () -> rotary.rotate(random(3, 8, 4).castTo(DataType.BFLOAT16), 0));
    assertMessage("gateUp: 7 columns, must be even",
        () -> SwiGlu.forward(random(2, 7, 5), DataType.FLOAT));
    assertMessage("dOut: shape [2, 4] must be [2, 3]",
        () -> SwiGlu.backward(random(2, 4, 6), random(2, 6, 7)));
    INDArray gateUp = random(2, 6, 7);
    SwiGlu.Forward kept = SwiGlu.forwardTraining(gateUp, DataType.FLOAT);
    assertMessage("forward: must be the result of forwardTraining",
        () -> SwiGlu.backward(random(2, 3, 6), gateUp, null, DataType.FLOAT));
    assertMessage("outType: must be FLOAT or BFLOAT16, got DOUBLE",
        () -> SwiGlu.backward(random(2, 3, 6), gateUp, kept, DataType.DOUBLE));
  }

  // --- FP64 references, on flat row-major arrays ------------------------------------------

  static double[] rms(double[] x, double[] g, int t, int h, double eps) {
    double[] y = new double[t * h];
    for (int r = 0; r < t; r++) {
      double s = 0;
      for (int i = 0; i < h; i++) {
        s += x[r * h + i] * x[r * h + i];
      }
      double inv = 1 / Math.sqrt(s / h + eps);
      for (int i = 0; i < h; i++) {
        y[r * h + i] = g[i] * x[r * h + i] * inv;
      }
    }
    return y;
  }

  static double[] layer(double[] x, double[] g, double[] b, int t, int h, double eps) {
    double[] y = new double[t * h];
    for (int r = 0; r < t; r++) {
      double mean = 0;
      for (int i = 0; i < h; i++) {
        mean += x[r * h + i] / h;
      }
      double var = 0;
      for (int i = 0; i < h; i++) {
        var += (x[r * h + i] - mean) * (x[r * h + i] - mean) / h;
      }
      for (int i = 0; i < h; i++) {
        y[r * h + i] = g[i] * (x[r * h + i] - mean) / Math.sqrt(var + eps) + b[i];
      }
    }
    return y;
  }

  static double[] rope(double[] x, int t, int heads, int d, int first, double base) {
    double[] y = new double[x.length];
    int width = heads * d;
    for (int r = 0; r < t; r++) {
      for (int head = 0; head < heads; head++) {
        int o = r * width + head * d;
        for (int i = 0; i < d / 2; i++) {
          double angle = (first + r) * Math.pow(base, -2.0 * i / d);
          double a = x[o + i];
          double b = x[o + d / 2 + i];
          y[o + i] = a * Math.cos(angle) - b * Math.sin(angle);
          y[o + d / 2 + i] = b * Math.cos(angle) + a * Math.sin(angle);
        }
      }
    }
    return y;
  }

  static double[] swiglu(double[] gateUp, int t, int f) {
    double[] y = new double[t * f];
    for (int r = 0; r < t; r++) {
      for (int i = 0; i < f; i++) {
        double a = gateUp[r * 2 * f + i];
        y[r * f + i] = a / (1 + Math.exp(-a)) * gateUp[r * 2 * f + f + i];
      }
    }
    return y;
  }

  // --- helpers ---------------------------------------------------------------------------------

  /** Central differences of {@code loss} in each value of {@code p}, one at a time. */
  static double[] numeric(double[] p, ToDoubleFunction<double[]> loss) {
    double[] at = p.clone();
    double[] g = new double[p.length];
    for (int i = 0; i < p.length; i++) {
      double step = 1e-6 * Math.max(1, Math.abs(p[i]));
      at[i] = p[i] + step;
      double up = loss.applyAsDouble(at);
      at[i] = p[i] - step;
      double down = loss.applyAsDouble(at);
      at[i] = p[i];
      g[i] = (up - down) / (2 * step);
    }
    return g;
  }

  static double dot(double[] a, double[] b) {
    double s = 0;
    for (int i = 0; i < a.length; i++) {
      s += a[i] * b[i];
    }
    return s;
  }

  static INDArray random(int rows, int cols, long seed) {
    Nd4j.getRandom().setSeed(seed);
    return Nd4j.randn(DataType.FLOAT, rows, cols);
  }

  static double[] flat(INDArray a) {
    return a.castTo(DataType.DOUBLE).dup('c').data().asDouble();
  }

  /** Every value within {@code bound} × the largest reference magnitude, or 1 if smaller. */
  static void close(String what, double[] expected, double[] actual, double bound) {
    assertEquals(expected.length, actual.length, what + ": length");
    double size = 1;
    for (double e : expected) {
      size = Math.max(size, Math.abs(e));
    }
    for (int i = 0; i < expected.length; i++) {
      assertEquals(expected[i], actual[i], bound * size, what + "[" + i + "]");
    }
  }

  static void assertMessage(String start, org.junit.jupiter.api.function.Executable call) {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, call);
    assertTrue(e.getMessage().startsWith(start), e.getMessage());
  }
}
