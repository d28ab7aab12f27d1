package io.hyperframes.nd4j;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.factory.Nd4j;
import org.nd4j.linalg.indexing.NDArrayIndex;

/**
 * Decoding attention over the cache, token by token, is each row of the causal attention of the
 * whole sequence: against an FP64 reference (1e-5 of the values' size, FP32 arithmetic with an
 * FP64 softmax sum) and against {@link CausalAttention}'s rows.
 */
class KvCacheTest {

  @ParameterizedTest(name = "T {0}, {1} heads of {2}")
  @CsvSource({"1, 1, 4", "9, 2, 8", "70, 3, 64"})
  void eachStepIsTheCausalAttentionRow(int t, int heads, int d) {
    int width = heads * d;
    Nd4j.getRandom().setSeed(41L * t + d);
    INDArray qkv = Nd4j.randn(DataType.FLOAT, t, 3L * width);
    double scale = 1 / Math.sqrt(d);
    KvCache cache = new KvCache(heads, d, t + 3);
    INDArray out = Nd4j.create(DataType.FLOAT, 1, width);
    double[][] all = Fp64.values(qkv);
    for (int i = 0; i < t; i++) {
      cache.append(qkv.get(NDArrayIndex.interval(i, i + 1), NDArrayIndex.all()), out, scale);
      assertEquals(i + 1, cache.length());
      for (int head = 0; head < heads; head++) {
        double[] expected = reference(all, i, head, heads, d, scale);
        for (int c = 0; c < d; c++) {
          assertEquals(expected[c], out.getDouble(0, head * d + c), 1e-5,
              "position " + i + ", head " + head + ", column " + c);
        }
      }
    }
    Assumptions.assumeTrue(CausalAttention.available(), "oneDNN did not load");
    for (int head = 0; head < heads; head++) {
      INDArray q = qkv.get(NDArrayIndex.all(), NDArrayIndex.interval(head * d, head * d + d));
      INDArray k = qkv.get(NDArrayIndex.all(),
          NDArrayIndex.interval(width + head * d, width + head * d + d));
      INDArray v = qkv.get(NDArrayIndex.all(),
          NDArrayIndex.interval(2 * width + head * d, 2 * width + head * d + d));
      INDArray full = new CausalAttention(8).forward(q, k, v, scale).out();
      INDArray last = out.get(NDArrayIndex.all(), NDArrayIndex.interval(head * d, head * d + d));
      assertTrue(full.getRow(t - 1).reshape(1, d).equalsWithEps(last, 1e-5),
          "head " + head + ": " + full.getRow(t - 1) + " against " + last);
    }
  }

  /** softmax(scale · q·kⱼ, j ≤ i) · v of query i, in FP64. */
  private static double[] reference(double[][] qkv, int i, int head, int heads, int d,
      double scale) {
    int width = heads * d;
    double[] s = new double[i + 1];
    double max = Double.NEGATIVE_INFINITY;
    for (int j = 0; j <= i; j++) {
      for (int c = 0; c < d; c++) {
        s[j] += qkv[i][head * d + c] * qkv[j][width + head * d + c] * scale;
      }
      max = Math.max(max, s[j]);
    }
    double sum = 0;
    for (int j = 0; j <= i; j++) {
      s[j] = Math.exp(s[j] - max);
      sum += s[j];
    }
    double[] out = new double[d];
    for (int j = 0; j <= i; j++) {
      for (int c = 0; c < d; c++) {
        out[c] += s[j] / sum * qkv[j][2 * width + head * d + c];
      }
    }
    return out;
  }

  @Test
  void aFullCacheAndBadInputSayWhy() {
    KvCache cache = new KvCache(1, 4, 2);
    INDArray qkv = Nd4j.rand(DataType.FLOAT, 1, 12);
    INDArray out = Nd4j.create(DataType.BFLOAT16, 1, 4);
    cache.append(qkv, out, 0.5);
    cache.append(qkv, out, 0.5);
    IllegalStateException full = assertThrows(IllegalStateException.class,
        () -> cache.append(qkv, out, 0.5));
    assertEquals("KV cache full: 2 positions", full.getMessage());
    cache.clear();
    assertEquals(0, cache.length());
    assertEquals(2L * 4 * 2 * 4, cache.bytes());
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> cache.append(Nd4j.rand(DataType.FLOAT, 1, 11), out, 0.5));
    assertTrue(e.getMessage().startsWith("qkv: must be one FP32 row of 12 adjacent columns"),
        e.getMessage());
    e = assertThrows(IllegalArgumentException.class,
        () -> cache.append(qkv, Nd4j.create(DataType.FLOAT, 1, 5), 0.5));
    assertTrue(e.getMessage().startsWith("out: must be a dense row-major [1, 4] array"),
        e.getMessage());
    e = assertThrows(IllegalArgumentException.class, () -> new KvCache(2, 0, 4));
    assertTrue(e.getMessage().startsWith("headDim: must be >= 1, got 0"), e.getMessage());
  }
}
