package io.hyperframes.nd4j.compress;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Arrays;
import java.util.SplittableRandom;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Test;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.factory.Nd4j;

/** Ratios, reconstruction bounds and the contract of every built-in codec. */
class GradientCodecTest {

  private static final int N = 100_000;

  static float[] gaussian(int n, long seed) {
    SplittableRandom r = new SplittableRandom(seed);
    float[] g = new float[n];
    for (int i = 0; i < n; i++) {
      g[i] = (float) (r.nextGaussian() * 1e-3);
    }
    return g;
  }

  static float[] decode(GradientCodec c, Encoded m, int n) {
    INDArray out = Nd4j.zeros(DataType.FLOAT, n);
    c.decodeAdd(m, out);
    return out.toFloatVector();
  }

  @Test
  void topKSendsExactlyTheLargestAndRatioBeatsFiftyAtOnePercent() {
    float[] g = gaussian(N, 1);
    GradientCodec c = GradientCodec.named("topk-0.01-ef");
    Encoded m = c.encode(Nd4j.createFromArray(g));
    // Values + delta-varint indices: 4 bytes + 1-2 bytes per kept element against 4 per element.
    assertTrue(m.ratio() >= 50, "ratio " + m.ratio());
    float[] d = decode(c, m, N);
    int k = (int) Math.ceil(0.01 * N);
    float[] magnitudes = new float[N];
    for (int i = 0; i < N; i++) {
      magnitudes[i] = Math.abs(g[i]);
    }
    float[] sorted = magnitudes.clone();
    Arrays.sort(sorted);
    float kth = sorted[N - k];
    int sent = 0;
    for (int i = 0; i < N; i++) {
      if (d[i] != 0f) {
        sent++;
        assertEquals(g[i], d[i], "sent value " + i);
        assertTrue(magnitudes[i] >= kth, "sent " + i + " below the k-th magnitude");
      } else {
        assertTrue(magnitudes[i] <= kth, "kept back " + i + " above the k-th magnitude");
      }
    }
    assertEquals(k, sent);
  }

  @Test
  void int8PerBlockIsWithinHalfAStepAndRatioAboveThreePointNine() {
    float[] g = gaussian(N, 2);
    for (String id : new String[] {"int8", "int8-tensor"}) {
      GradientCodec c = GradientCodec.named(id);
      Encoded m = c.encode(Nd4j.createFromArray(g));
      assertTrue(m.ratio() >= 3.9, id + " ratio " + m.ratio());
      float[] d = decode(c, m, N);
      int block = id.equals("int8") ? Int8Codec.BLOCK : N;
      for (int from = 0; from < N; from += block) {
        float max = 0f;
        for (int i = from; i < Math.min(N, from + block); i++) {
          max = Math.max(max, Math.abs(g[i]));
        }
        float step = max / 127f;
        for (int i = from; i < Math.min(N, from + block); i++) {
          assertEquals(g[i], d[i], step * 0.5001f, id + " element " + i);
        }
      }
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"bf16", "fp16"})
  void castsRoundToNearestWithinHalfAnUlp(String id) {
    float[] g = gaussian(N, 3);
    g[0] = 0f;
    g[1] = -0f;
    g[2] = 1e-3f;
    GradientCodec c = GradientCodec.named(id);
    Encoded m = c.encode(Nd4j.createFromArray(g));
    assertEquals(2.0, m.ratio(), 1e-12);
    float[] d = decode(c, m, N);
    // Half an ulp relative to the value: 2^-8 for BF16 (7 stored significand bits), 2^-11 for
    // FP16 (10) in its normal range; FP16 below 2^-14 is subnormal with an absolute step 2^-24.
    double rel = id.equals("bf16") ? 0x1p-8 : 0x1p-11;
    for (int i = 0; i < N; i++) {
      double bound = Math.max(rel * Math.abs(g[i]), id.equals("fp16") ? 0x1p-25 : 0.0);
      assertEquals(g[i], d[i], bound * 1.0001, id + " element " + i + " of " + g[i]);
    }
  }

  @Test
  void fp16SaturatesAndKeepsSpecials() {
    assertEquals(Float.POSITIVE_INFINITY, CastCodec.fromHalf(CastCodec.toHalf(70000f)));
    assertEquals(65504f, CastCodec.fromHalf(CastCodec.toHalf(65504f)));
    assertEquals(Float.NEGATIVE_INFINITY,
        CastCodec.fromHalf(CastCodec.toHalf(Float.NEGATIVE_INFINITY)));
    assertTrue(Float.isNaN(CastCodec.fromHalf(CastCodec.toHalf(Float.NaN))));
    assertTrue(Float.isNaN(Float.intBitsToFloat(CastCodec.toBf16(Float.NaN) << 16)));
    assertEquals(0x1p-24f, CastCodec.fromHalf(CastCodec.toHalf(0x1p-24f)));
    // Ties go to even: 1 + 2^-11 lies halfway between 1 and 1 + 2^-10.
    assertEquals(1f, CastCodec.fromHalf(CastCodec.toHalf(1f + 0x1p-11f)));
  }

  @Test
  void signSendsOneBitAndRandomKAHundredthOfTheValues() {
    float[] g = gaussian(N, 4);
    GradientCodec sign = GradientCodec.named("sign-ef");
    Encoded m = sign.encode(Nd4j.createFromArray(g));
    assertTrue(m.ratio() >= 31.9, "sign ratio " + m.ratio());
    float[] d = decode(sign, m, N);
    for (int i = 0; i < N; i++) {
      assertEquals(g[i] >= 0, d[i] > 0, "sign of " + i);
    }
    GradientCodec random = GradientCodec.named("randomk-0.01-ef");
    Encoded r = random.encode(Nd4j.createFromArray(g));
    assertTrue(r.ratio() >= 99, "random-k ratio " + r.ratio());
    float[] e = decode(random, r, N);
    int sent = 0;
    for (int i = 0; i < N; i++) {
      if (e[i] != 0f) {
        sent++;
        assertEquals(g[i], e[i]);
      }
    }
    assertEquals(1000, sent);
  }

  @ParameterizedTest
  @ValueSource(strings = {"none", "topk-0.05-ef", "randomk-0.05-ef", "int8", "sign-ef", "bf16",
      "dl4j-threshold"})
  void anotherInstanceDecodesAndNothingElseIsAccepted(String id) {
    float[] g = gaussian(5000, 5);
    GradientCodec sender = GradientCodec.named(id);
    GradientCodec receiver = GradientCodec.named(id);
    Encoded m = sender.encode(Nd4j.createFromArray(g));
    assertArrayEquals(decode(sender, m, 5000), decode(receiver, m, 5000), id);
    IllegalArgumentException other = assertThrows(IllegalArgumentException.class,
        () -> GradientCodec.named(id.equals("bf16") ? "fp16" : "bf16").decodeAdd(m,
            Nd4j.zeros(DataType.FLOAT, 5000)));
    assertTrue(other.getMessage().startsWith("message: written by " + id), other.getMessage());
    IllegalArgumentException length = assertThrows(IllegalArgumentException.class,
        () -> sender.encode(Nd4j.zeros(DataType.FLOAT, 4999)));
    assertTrue(length.getMessage().contains("4999"), length.getMessage());
    IllegalArgumentException type = assertThrows(IllegalArgumentException.class,
        () -> sender.encode(Nd4j.zeros(DataType.DOUBLE, 5000)));
    assertTrue(type.getMessage().startsWith("gradient: must be FP32"), type.getMessage());
  }

  @Test
  void namesAreValidated() {
    for (String bad : new String[] {"topk", "topk-x-ef", "topk-0.9-ef", "zip", "randomk-0-ef"}) {
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
          () -> GradientCodec.named(bad));
      assertTrue(e.getMessage().contains(bad), e.getMessage());
    }
    assertEquals("topk-0.01-ef", GradientCodec.named(" TopK-0.01-EF ").id());
  }

  @Test
  void sparseGradientsWithFewerNonZerosThanKDoNotStallTheSelection() {
    float[] g = new float[10_000];
    g[17] = 1f;
    g[4242] = -2f;
    GradientCodec c = GradientCodec.named("topk-0.01-ef");
    float[] d = decode(c, c.encode(Nd4j.createFromArray(g)), g.length);
    assertEquals(1f, d[17]);
    assertEquals(-2f, d[4242]);
  }
}
