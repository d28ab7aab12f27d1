package io.hyperframes.nd4j.compress;

import static com.google.common.base.Preconditions.checkArgument;

import java.nio.ByteBuffer;
import java.nio.FloatBuffer;

/**
 * 1-bit sign compression with error feedback (Seide et al. 2014, "1-Bit Stochastic Gradient
 * Descent and its Application to Data-Parallel Distributed Training of Speech DNNs", §2;
 * Karimireddy et al. 2019, arXiv 1901.09847, Algorithm 2 "EF-SignSGD"): with r the residual plus
 * the gradient, every element is sent as sign(r_i) · s with one scale s = mean |r| for the tensor
 * (the scaled sign of EF-SignSGD), and r − sent is kept. Wire format: FP32 scale, then the signs
 * 8 to a byte (bit set = non-negative), element i in bit i mod 8 of byte i / 8.
 */
final class SignCodec extends AbstractCodec {

  SignCodec() {
    super("sign-ef", true);
  }

  @Override
  void encode(float[] g, int n) {
    float[] r = residual;
    double sum = 0;
    for (int i = 0; i < n; i++) {
      float v = r[i] + g[i];
      r[i] = v;
      sum += Math.abs(v);
    }
    float scale = n == 0 ? 0f : (float) (sum / n);
    ByteBuffer out = message.begin(n, 4 + (n + 7) / 8);
    out.putFloat(scale);
    byte[] bytes = out.array();
    int p = out.position();
    for (int from = 0; from < n; from += 8) {
      int bits = 0;
      int to = Math.min(n, from + 8);
      for (int i = from; i < to; i++) {
        // Branch-free: the sign bit of r selects -scale (negative) or +scale (non-negative).
        int negative = Float.floatToRawIntBits(r[i]) >>> 31;
        bits |= (negative ^ 1) << (i - from);
        r[i] -= negative == 0 ? scale : -scale;
      }
      bytes[p++] = (byte) bits;
    }
    out.position(p);
  }

  @Override
  void decodeAdd(Encoded m, ByteBuffer in, FloatBuffer t, int n) {
    float scale = in.getFloat();
    float[] y = load(t, n);
    byte[] bytes = in.array();
    int p = in.position();
    for (int from = 0; from < n; from += 8) {
      int bits = bytes[p++];
      int to = Math.min(n, from + 8);
      for (int i = from; i < to; i++) {
        y[i] += ((bits >>> (i - from)) & 1) != 0 ? scale : -scale;
      }
    }
    store(t, y, n);
  }

  @Override
  void check(ByteBuffer in, int n) {
    checkArgument(in.remaining() == 4 + (n + 7L) / 8, "message.payload: %s bytes, a scale and"
        + " %s sign bits need %s", in.remaining(), n, 4 + (n + 7L) / 8);
    scale(in.getFloat(), "scale");
    in.position(in.limit());
  }
}
