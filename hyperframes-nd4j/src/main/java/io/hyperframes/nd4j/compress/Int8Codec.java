package io.hyperframes.nd4j.compress;

import static com.google.common.base.Preconditions.checkArgument;

import java.nio.ByteBuffer;
import java.nio.FloatBuffer;

/**
 * Symmetric INT8 quantisation with a scale per block of {@value #BLOCK} elements (or one for the
 * tensor): q = round(v / s) with s = max|v| / 127, sent as the FP32 scale and the 8-bit values
 * (per-block absmax scaling as in Dettmers et al. 2022, "8-bit Optimizers via Block-wise
 * Quantization", arXiv 2110.02861, §2). Wire format: varint block size (0 = one scale), then per
 * block its FP32 scale and its bytes. No error feedback: what rounding loses is dropped.
 */
final class Int8Codec extends AbstractCodec {
  static final int BLOCK = 256;
  private final int block;

  Int8Codec(String id, int block) {
    super(id, false);
    this.block = block;
  }

  @Override
  void encode(float[] g, int n) {
    int size = block == 0 ? Math.max(1, n) : block;
    int blocks = (n + size - 1) / size;
    ByteBuffer out = message.begin(n, 5 + 4 * blocks + n);
    putVarint(out, block);
    byte[] bytes = out.array();
    int p = out.position();
    for (int from = 0; from < n; from += size) {
      int to = Math.min(n, from + size);
      float max = 0f;
      for (int i = from; i < to; i++) {
        max = Math.max(max, Math.abs(g[i]));
      }
      float inverse = max == 0f ? 0f : 127f / max;
      out.putFloat(p, max / 127f);
      p += 4;
      for (int i = from; i < to; i++) {
        bytes[p + i - from] = (byte) roundToInt(g[i] * inverse);
      }
      p += to - from;
    }
    out.position(p);
  }

  @Override
  void decodeAdd(Encoded m, ByteBuffer in, FloatBuffer t, int n) {
    int b = getVarint(in);
    int size = b == 0 ? Math.max(1, n) : b;
    float[] y = load(t, n);
    byte[] bytes = in.array();
    int p = in.position();
    for (int from = 0; from < n; from += size) {
      int to = Math.min(n, from + size);
      float scale = in.getFloat(p);
      p += 4;
      for (int i = from; i < to; i++) {
        y[i] += bytes[p + i - from] * scale;
      }
      p += to - from;
    }
    store(t, y, n);
  }

  @Override
  void check(ByteBuffer in, int n) {
    int b = checkedVarint(in, "message.payload block");
    long size = b == 0 ? n : b;
    long blocks = (n + size - 1) / size;
    checkArgument(in.remaining() == 4 * blocks + n, "message.payload: %s bytes after the block"
        + " size, %s blocks of scale and %s values need %s", in.remaining(), blocks, n,
        4 * blocks + n);
    for (long from = 0; from < n; from += size) {
      float s = in.getFloat();
      scale(s, "scale");
      // A scale is the block's largest magnitude over 127: 127 of it is a finite value.
      checkArgument(Float.isFinite(127f * s), "message.payload: scale %s times 127 is not"
          + " finite", s);
      in.position((int) (in.position() + Math.min(size, n - from)));
    }
  }
}
