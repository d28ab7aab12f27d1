package io.hyperframes.nd4j;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.factory.Nd4j;
import org.nd4j.linalg.indexing.NDArrayIndex;

/**
 * The tiled causal attention against an FP64 reference that holds the whole score matrix, over
 * sequence lengths that fill, split and overrun a tile, two head sizes and both input types, and
 * the linear memory of a 4 096-token sequence.
 *
 * <p>Bounds, relative to the largest reference value of the same result, or to 1 (the size of
 * the standard normal inputs) where that is smaller (inputs are exact in their type, so the
 * reference uses the same values): FP32 1e-5 (FP32 accumulation of at most
 * T + d products, u = 2⁻²⁴, Higham 2002 §3.1); BF16 2⁻⁵ for the output and 2⁻⁴ for the gradients
 * (each probability and score gradient rounded to BF16 once, u = 2⁻⁸, before a product whose
 * rounding errors add up over about √T terms, and the gradients go through two such products).
 */
class CausalAttentionTest {

  @BeforeEach
  void needsOneDnn() {
    Assumptions.assumeTrue(CausalAttention.available(), "oneDNN did not load: "
        + Kernels.cpu().fallbackReason());
  }

  static Stream<Arguments> cases() {
    List<Arguments> out = new ArrayList<>();
    for (int t : new int[] {1, 7, 16, 17, 100}) {
      for (int d : new int[] {8, 64}) {
        for (DataType type : new DataType[] {DataType.FLOAT, DataType.BFLOAT16}) {
          out.add(Arguments.of(t, d, type));
        }
      }
    }
    return out.stream();
  }

  @ParameterizedTest(name = "T {0}, d {1}, {2}")
  @MethodSource("cases")
  void forwardAndBackwardAreTheReferencesWithinTheBound(int t, int d, DataType type) {
    Nd4j.getRandom().setSeed(31L * t + d);
    INDArray q = Nd4j.randn(DataType.FLOAT, t, d).castTo(type);
    INDArray k = Nd4j.randn(DataType.FLOAT, t, d).castTo(type);
    INDArray v = Nd4j.randn(DataType.FLOAT, t, d).castTo(type);
    INDArray dOut = Nd4j.randn(DataType.FLOAT, t, d);
    double scale = 1 / Math.sqrt(d);
    CausalAttention attention = new CausalAttention(16);
    CausalAttention.Forward f = attention.forward(q, k, v, scale);
    CausalAttention.Gradients g = attention.backward(q, k, v, f, dOut, scale);
    Reference ref = new Reference(Fp64.values(q), Fp64.values(k), Fp64.values(v),
        Fp64.values(dOut), scale);
    boolean bf16 = type == DataType.BFLOAT16;
    close("out", ref.out, f.out(), bf16 ? 0x1p-5 : 1e-5);
    for (int i = 0; i < t; i++) {
      assertEquals(ref.logSumExp[i], f.logSumExp().getDouble(i), bf16 ? 2e-2 : 1e-5, "lse " + i);
    }
    close("dq", ref.dq, g.dq(), bf16 ? 0x1p-4 : 1e-5);
    close("dk", ref.dk, g.dk(), bf16 ? 0x1p-4 : 1e-5);
    close("dv", ref.dv, g.dv(), bf16 ? 0x1p-4 : 1e-5);
  }

  /**
   * A 4 096-token sequence runs forward and backward in working memory linear in the sequence:
   * tile buffers and per-query statistics, far below the 64 MiB of its FP32 score matrix, and
   * about twice as much at 8 192 tokens. Two laws of the exact gradients hold at that length:
   * the rows of dV sum to those of dOut (each probability row sums to one) and the rows of dK
   * sum to zero (each row of the score gradient does).
   */
  @Test
  void aLongSequenceRunsInLinearMemory() {
    int d = 64;
    long[] bytes = new long[2];
    int[] lengths = {4096, 8192};
    for (int n = 0; n < 2; n++) {
      int t = lengths[n];
      Nd4j.getRandom().setSeed(t);
      INDArray q = Nd4j.randn(DataType.FLOAT, t, d);
      INDArray k = Nd4j.randn(DataType.FLOAT, t, d);
      INDArray v = Nd4j.randn(DataType.FLOAT, t, d);
      INDArray dOut = Nd4j.randn(DataType.FLOAT, t, d);
      CausalAttention attention = new CausalAttention();
      CausalAttention.Forward f = attention.forward(q, k, v, 1 / Math.sqrt(d));
      long forward = attention.workingBytes();
      CausalAttention.Gradients g = attention.backward(q, k, v, f, dOut, 1 / Math.sqrt(d));
      bytes[n] = Math.max(forward, attention.workingBytes());
      long scores = 4L * t * t;
      assertTrue(bytes[n] < scores / 64, t + " tokens: " + bytes[n] + " working bytes against "
          + scores + " for the score matrix");
      if (t == 4096) {
        // dV's column sums are dOut's, dK's are zero, relative to dOut's magnitude.
        INDArray dvSum = g.dv().sum(0);
        INDArray dOutSum = dOut.sum(0);
        double size = dOut.norm2Number().doubleValue();
        assertTrue(dvSum.sub(dOutSum).norm2Number().doubleValue() < 1e-4 * size,
            "sum of dV rows " + dvSum + " against dOut's " + dOutSum);
        assertTrue(g.dk().sum(0).norm2Number().doubleValue() < 1e-4 * size,
            "sum of dK rows " + g.dk().sum(0));
        assertTrue(Double.isFinite(f.out().sumNumber().doubleValue())
            && Double.isFinite(g.dq().sumNumber().doubleValue()), "finite output and dQ");
      }
    }
    assertTrue(bytes[1] <= 2.01 * bytes[0] && bytes[1] > bytes[0],
        "working bytes " + bytes[0] + " at 4096 tokens, " + bytes[1] + " at 8192");
  }

  /**
   * Heads that are column ranges of one fused QKV matrix give the same results, to the bit, as
   * dense copies of them: they are gathered into dense row buffers (oneDNN's AMX matmul takes
   * dense operands only), T·d elements each, which the working bytes count.
   */
  @ParameterizedTest(name = "{0}")
  @org.junit.jupiter.params.provider.EnumSource(names = {"FLOAT", "BFLOAT16"})
  void columnRangesOfAWiderMatrixGiveTheResultsOfDenseCopies(DataType type) {
    int t = 40;
    int d = 16;
    Nd4j.getRandom().setSeed(5);
    INDArray qkv = Nd4j.randn(DataType.FLOAT, t, 6 * d).castTo(type);
    INDArray q = qkv.get(NDArrayIndex.all(), NDArrayIndex.interval(0, d));
    INDArray k = qkv.get(NDArrayIndex.all(), NDArrayIndex.interval(2 * d, 3 * d));
    INDArray v = qkv.get(NDArrayIndex.all(), NDArrayIndex.interval(4 * d, 5 * d));
    INDArray dOut = Nd4j.randn(DataType.FLOAT, t, d);
    CausalAttention attention = new CausalAttention(16);
    CausalAttention.Forward views = attention.forward(q, k, v, 0.25);
    long viewBytes = attention.workingBytes();
    CausalAttention.Gradients gViews = attention.backward(q, k, v, views, dOut, 0.25);
    CausalAttention.Forward copies = attention.forward(q.dup('c'), k.dup('c'), v.dup('c'), 0.25);
    long copyBytes = attention.workingBytes();
    CausalAttention.Gradients gCopies = attention.backward(q.dup('c'), k.dup('c'), v.dup('c'),
        copies, dOut, 0.25);
    assertEquals(copies.out(), views.out());
    assertEquals(copies.logSumExp(), views.logSumExp());
    assertEquals(gCopies.dq(), gViews.dq());
    assertEquals(gCopies.dk(), gViews.dk());
    assertEquals(gCopies.dv(), gViews.dv());
    long gathered = 3L * t * d * (type == DataType.FLOAT ? 4 : 2);
    assertEquals(copyBytes + gathered, viewBytes, "the three gathered views and nothing else");
  }

  /**
   * Outputs written into column ranges of wider matrices (one head's columns of a layer's
   * attention output and of a fused QKV gradient) are, to the bit, those of the allocating
   * calls, and every other column stays as it was.
   */
  @ParameterizedTest(name = "{0}")
  @org.junit.jupiter.params.provider.EnumSource(names = {"FLOAT", "BFLOAT16"})
  void outputsIntoColumnRangesAreThoseOfTheAllocatingCalls(DataType type) {
    int t = 40;
    int d = 16;
    Nd4j.getRandom().setSeed(9);
    INDArray qkv = Nd4j.randn(DataType.FLOAT, t, 3 * d).castTo(type);
    INDArray q = qkv.get(NDArrayIndex.all(), NDArrayIndex.interval(0, d));
    INDArray k = qkv.get(NDArrayIndex.all(), NDArrayIndex.interval(d, 2 * d));
    INDArray v = qkv.get(NDArrayIndex.all(), NDArrayIndex.interval(2 * d, 3 * d));
    INDArray wide = Nd4j.randn(DataType.FLOAT, t, 3 * d);
    INDArray dOut = wide.get(NDArrayIndex.all(), NDArrayIndex.interval(d, 2 * d));
    CausalAttention attention = new CausalAttention(16);
    CausalAttention.Forward expected = attention.forward(q, k, v, 0.25);
    CausalAttention.Gradients g = attention.backward(q, k, v, expected, dOut.dup('c'), 0.25);

    INDArray outWide = Nd4j.randn(DataType.FLOAT, t, 2 * d);
    INDArray before = outWide.dup();
    CausalAttention.Forward into = attention.forward(q, k, v, 0.25,
        outWide.get(NDArrayIndex.all(), NDArrayIndex.interval(d, 2 * d)));
    assertEquals(expected.out(), into.out().dup('c'));
    assertEquals(expected.logSumExp(), into.logSumExp());
    assertEquals(before.get(NDArrayIndex.all(), NDArrayIndex.interval(0, d)),
        outWide.get(NDArrayIndex.all(), NDArrayIndex.interval(0, d)), "other columns kept");

    INDArray dQkv = Nd4j.randn(DataType.FLOAT, t, 4 * d);
    INDArray spare = dQkv.get(NDArrayIndex.all(), NDArrayIndex.interval(3 * d, 4 * d)).dup();
    attention.backward(q, k, v, into, dOut, 0.25,
        dQkv.get(NDArrayIndex.all(), NDArrayIndex.interval(0, d)),
        dQkv.get(NDArrayIndex.all(), NDArrayIndex.interval(d, 2 * d)),
        dQkv.get(NDArrayIndex.all(), NDArrayIndex.interval(2 * d, 3 * d)));
    assertEquals(g.dq(), dQkv.get(NDArrayIndex.all(), NDArrayIndex.interval(0, d)).dup('c'));
    assertEquals(g.dk(), dQkv.get(NDArrayIndex.all(), NDArrayIndex.interval(d, 2 * d)).dup('c'));
    assertEquals(g.dv(),
        dQkv.get(NDArrayIndex.all(), NDArrayIndex.interval(2 * d, 3 * d)).dup('c'));
    assertEquals(spare, dQkv.get(NDArrayIndex.all(), NDArrayIndex.interval(3 * d, 4 * d)),
        "other columns kept");
  }

  @Test
  void aBadDestinationIsNamed() {
    int t = 24;
    int d = 8;
    INDArray q = Nd4j.randn(DataType.FLOAT, t, d);
    CausalAttention a = new CausalAttention(8);
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> a.forward(q, q, q, 0.5, Nd4j.create(DataType.FLOAT, t, d + 1)));
    assertTrue(e.getMessage().startsWith("out: shape"), e.getMessage());
    e = assertThrows(IllegalArgumentException.class,
        () -> a.forward(q, q, q, 0.5, Nd4j.create(DataType.BFLOAT16, t, d)));
    assertTrue(e.getMessage().startsWith("out: data type"), e.getMessage());
    INDArray strided = Nd4j.create(DataType.FLOAT, t, 2 * d)
        .get(NDArrayIndex.all(), NDArrayIndex.interval(0, 2, 2 * d));
    e = assertThrows(IllegalArgumentException.class, () -> a.forward(q, q, q, 0.5, strided));
    assertTrue(e.getMessage().startsWith("out: columns must be adjacent"), e.getMessage());
    CausalAttention.Forward f = a.forward(q, q, q, 0.5);
    e = assertThrows(IllegalArgumentException.class, () -> a.backward(q, q, q, f, q, 0.5,
        Nd4j.create(DataType.FLOAT, t, d), null, Nd4j.create(DataType.FLOAT, t, d)));
    assertTrue(e.getMessage().startsWith("dk: must be given"), e.getMessage());
  }

  @Test
  void badInputNamesTheArgument() {
    CausalAttention a = new CausalAttention(8);
    INDArray q = Nd4j.rand(DataType.FLOAT, 4, 8);
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> a.forward(q, Nd4j.rand(DataType.FLOAT, 5, 8), q, 1));
    assertTrue(e.getMessage().startsWith("k: shape [5, 8] must be q's [4, 8]"), e.getMessage());
    e = assertThrows(IllegalArgumentException.class,
        () -> a.forward(q, q, q.castTo(DataType.BFLOAT16), 1));
    assertTrue(e.getMessage().startsWith("v: data type BFLOAT16 differs from q's FLOAT"),
        e.getMessage());
    e = assertThrows(IllegalArgumentException.class, () -> a.forward(q, q, q, Double.NaN));
    assertTrue(e.getMessage().startsWith("scale: must be finite and positive"), e.getMessage());
    CausalAttention.Forward f = a.forward(q, q, q, 1);
    e = assertThrows(IllegalArgumentException.class,
        () -> a.backward(q, q, q, f, Nd4j.rand(DataType.FLOAT, 4, 7), 1));
    assertTrue(e.getMessage().startsWith("dOut: shape [4, 7] must be q's [4, 8]"),
        e.getMessage());
    e = assertThrows(IllegalArgumentException.class, () -> new CausalAttention(4));
    assertTrue(e.getMessage().startsWith("tile: must be in [8, 1024], got 4"), e.getMessage());
  }

  @Test
  void bf16RoundsToNearestEven() {
    assertEquals((short) 0x3F80, Arrays2.bf16(1f));
    // 1 + 2^-8 lies halfway between 1 and 1 + 2^-7: ties go to the even mantissa, 1.
    assertEquals((short) 0x3F80, Arrays2.bf16(1f + 0x1p-8f));
    assertEquals((short) 0x3F81, Arrays2.bf16(1f + 0x1p-8f + 0x1p-20f));
    assertEquals((short) 0x3F82, Arrays2.bf16(1f + 0x1.8p-7f));
  }

  private static void close(String what, double[][] ref, INDArray got, double relative) {
    double max = 0;
    for (double[] row : ref) {
      for (double x : row) {
        max = Math.max(max, Math.abs(x));
      }
    }
    double worst = 0;
    for (int i = 0; i < ref.length; i++) {
      for (int j = 0; j < ref[i].length; j++) {
        worst = Math.max(worst, Math.abs(ref[i][j] - got.getDouble(i, j)));
      }
    }
    // The inputs are standard normal, so 1 is the size of the terms a result sums: a result
    // that cancels to zero (dq and dk at T = 1) is held to the terms' scale.
    assertTrue(worst <= relative * Math.max(max, 1.0), what + ": worst error " + worst
        + " against " + relative + " of " + max);
  }

  /** FP64 attention holding the whole T×T probability matrix, and its exact gradients. */
  private static final class Reference {
    final double[][] out;
    final double[] logSumExp;
    final double[][] dq;
    final double[][] dk;
    final double[][] dv;

    Reference(double[][] q, double[][] k, double[][] v, double[][] dOut, double scale) {
      int t = q.length;
      int d = q[0].length;
      double[][] p = new double[t][t];
      logSumExp = new double[t];
      for (int i = 0; i < t; i++) {
        double max = Double.NEGATIVE_INFINITY;
        for (int j = 0; j <= i; j++) {
          p[i][j] = scale * dot(q[i], k[j]);
          max = Math.max(max, p[i][j]);
        }
        double sum = 0;
        for (int j = 0; j <= i; j++) {
          p[i][j] = Math.exp(p[i][j] - max);
          sum += p[i][j];
        }
        for (int j = 0; j <= i; j++) {
          p[i][j] /= sum;
        }
        logSumExp[i] = max + Math.log(sum);
      }
      out = new double[t][d];
      dv = new double[t][d];
      double[][] dp = new double[t][t];
      for (int i = 0; i < t; i++) {
        for (int j = 0; j <= i; j++) {
          for (int c = 0; c < d; c++) {
            out[i][c] += p[i][j] * v[j][c];
            dv[j][c] += p[i][j] * dOut[i][c];
          }
          dp[i][j] = dot(dOut[i], v[j]);
        }
      }
      dq = new double[t][d];
      dk = new double[t][d];
      for (int i = 0; i < t; i++) {
        double di = dot(dOut[i], out[i]);
        for (int j = 0; j <= i; j++) {
          double ds = p[i][j] * (dp[i][j] - di);
          for (int c = 0; c < d; c++) {
            dq[i][c] += scale * ds * k[j][c];
            dk[j][c] += scale * ds * q[i][c];
          }
        }
      }
    }

    private static double dot(double[] a, double[] b) {
      double s = 0;
      for (int c = 0; c < a.length; c++) {
        s += a[c] * b[c];
      }
      return s;
    }
  }
}
