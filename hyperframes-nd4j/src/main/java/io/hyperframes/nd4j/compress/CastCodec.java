package io.hyperframes.nd4j.compress;

import static com.google.common.base.Preconditions.checkArgument;

import java.nio.ByteBuffer;
import java.nio.FloatBuffer;

/**
 * Gradients cast to a 16-bit float: BF16 (the upper half of the FP32 pattern) or IEEE FP16,
 * rounded to nearest even, 2 bytes an element. FP16 saturates to infinity above 65 504 and
 * flushes below 2⁻²⁴ to zero, so it needs a loss scale; BF16 keeps FP32's range. No error
 * feedback.
 */
final class CastCodec extends AbstractCodec {
  private final boolean bf16;

  CastCodec(String id, boolean bf16) {
    super(id, false);
    this.bf16 = bf16;
  }

  @Override
  void encode(float[] g, int n) {
    ByteBuffer out = message.begin(n, 2 * n);
    if (bf16) {
      for (int i = 0; i < n; i++) {
        out.putShort(2 * i, toBf16(g[i]));
      }
    } else {
      for (int i = 0; i < n; i++) {
        out.putShort(2 * i, toHalf(g[i]));
      }
    }
    out.position(2 * n);
  }

  @Override
  void decodeAdd(Encoded m, ByteBuffer in, FloatBuffer t, int n) {
    float[] y = load(t, n);
    if (bf16) {
      for (int i = 0; i < n; i++) {
        y[i] += Float.intBitsToFloat(in.getShort(2 * i) << 16);
      }
    } else {
      for (int i = 0; i < n; i++) {
        y[i] += fromHalf(in.getShort(2 * i));
      }
    }
    store(t, y, n);
  }

  /** FP32 → BF16, round to nearest even; NaN stays a (quiet) NaN. */
  static short toBf16(float f) {
    int bits = Float.floatToRawIntBits(f);
    if ((bits & 0x7fffffff) > 0x7f800000) {
      return (short) ((bits >>> 16) | 0x40);
    }
    return (short) ((bits + 0x7fff + ((bits >>> 16) & 1)) >>> 16);
  }

  /**
   * FP32 → FP16, round to nearest even (the branch structure of F. Giesen's
   * "float_to_half_fast3_rtne", public domain: subnormal results rounded by an FP32 addition of
   * 0.5, normal ones by adding the bias change and 0xfff plus the odd bit).
   */
  static short toHalf(float f) {
    int bits = Float.floatToRawIntBits(f);
    int sign = (bits >>> 16) & 0x8000;
    bits &= 0x7fffffff;
    int out;
    if (bits >= 0x47800000) {
      out = bits > 0x7f800000 ? 0x7e00 : 0x7c00;
    } else if (bits < 0x38800000) {
      float shifted = Float.intBitsToFloat(bits) + 0.5f;
      out = Float.floatToRawIntBits(shifted) - 0x3f000000;
    } else {
      int odd = (bits >>> 13) & 1;
      bits += ((15 - 127) << 23) + 0xfff + odd;
      out = bits >>> 13;
    }
    return (short) (out | sign);
  }

  /** FP16 → FP32 (exact). */
  static float fromHalf(short h) {
    int bits = h & 0xffff;
    int exponent = (bits >>> 10) & 0x1f;
    int mantissa = bits & 0x3ff;
    float magnitude;
    if (exponent == 0) {
      magnitude = mantissa * 0x1p-24f;
    } else if (exponent == 31) {
      magnitude = mantissa == 0 ? Float.POSITIVE_INFINITY : Float.NaN;
    } else {
      magnitude = Float.intBitsToFloat((exponent + 112) << 23 | mantissa << 13);
    }
    return (bits & 0x8000) != 0 ? -magnitude : magnitude;
  }

  @Override
  void check(ByteBuffer in, int n) {
    checkArgument(in.remaining() == 2L * n, "message.payload: %s bytes, %s 16-bit values need"
        + " %s", in.remaining(), n, 2L * n);
    // An all-ones exponent is infinity or NaN in both formats.
    int exponent = bf16 ? 0x7F80 : 0x7C00;
    for (int i = 0; i < n; i++) {
      short v = in.getShort();
      checkArgument((v & exponent) != exponent, "message.payload: value %s is not finite", i);
    }
  }
}
