package io.hyperframes.nd4j.compress;

import static com.google.common.base.Preconditions.checkArgument;

import java.nio.ByteBuffer;
import java.nio.FloatBuffer;
import java.util.Arrays;

/**
 * Random-k sparsification (Stich, Cordonnier and Jaggi 2018, arXiv 1809.07599, §2: "rand-k"):
 * one element drawn at random from each of the k blocks of ⌈n/k⌉ consecutive elements, with
 * error feedback when asked. The receiver regenerates the indices from the seed in the message,
 * so the wire carries the seed and k FP32 values: varint k, varint block size, 8-byte seed, k
 * values. The draw is SplitMix64 (Steele, Lea and Flood 2014), inlined so that neither side
 * allocates.
 */
final class RandomKCodec extends AbstractCodec {
  private final double fraction;
  private int k;
  private int block;

  RandomKCodec(String id, double fraction, boolean errorFeedback) {
    super(id, errorFeedback);
    this.fraction = fraction;
  }

  @Override
  void allocate(int n) {
    k = kept(fraction, n);
    block = (n + k - 1) / k;
    k = (n + block - 1) / block;
  }

  @Override
  void encode(float[] g, int n) {
    float[] r = accumulate(g, n);
    long seed = draw(0x4a4dL);
    ByteBuffer out = message.begin(n, 10 + 8 + 4 * k);
    putVarint(out, k);
    putVarint(out, block);
    out.putLong(seed);
    long state = seed;
    for (int b = 0; b < k; b++) {
      int from = b * block;
      state += GOLDEN;
      int i = from + bounded(mix(state), Math.min(block, n - from));
      out.putFloat(r[i]);
      r[i] = 0f;
    }
    if (!errorFeedback) {
      Arrays.fill(r, 0f);
    }
  }

  @Override
  void decodeAdd(Encoded m, ByteBuffer in, FloatBuffer t, int n) {
    int count = getVarint(in);
    int size = getVarint(in);
    long state = in.getLong();
    for (int b = 0; b < count; b++) {
      int from = b * size;
      state += GOLDEN;
      int i = from + bounded(mix(state), Math.min(size, n - from));
      t.put(i, t.get(i) + in.getFloat());
    }
  }

  /** A value in [0, bound) from the upper 32 bits (Lemire's multiply-shift). */
  private static int bounded(long z, int bound) {
    return (int) (((z >>> 32) * bound) >>> 32);
  }

  @Override
  void check(ByteBuffer in, int n) {
    int count = checkedVarint(in, "message.payload count");
    int size = checkedVarint(in, "message.payload block");
    checkArgument(size >= 1 && count == (n + (long) size - 1) / size, "message.payload: %s"
        + " blocks of %s do not cover a gradient of %s elements", count, size, n);
    in.getLong();
    checkArgument(in.remaining() == 4L * count, "message.payload: %s bytes after the seed, %s"
        + " values need %s", in.remaining(), count, 4L * count);
    finiteFloats(in, count);
  }
}
