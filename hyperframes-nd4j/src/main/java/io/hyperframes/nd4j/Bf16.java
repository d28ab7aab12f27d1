package io.hyperframes.nd4j;

import java.nio.FloatBuffer;
import java.nio.ShortBuffer;
import org.bytedeco.javacpp.FloatPointer;
import org.bytedeco.javacpp.ShortPointer;

/**
 * BF16 → FP32 widening of dense native buffers in Java. A BF16 value is the upper half of the
 * FP32 bit pattern, so widening is a 16-bit shift and exact. oneDNN 2.5 has no vectorised reorder
 * for BF16 on CPUs without AVX-512 (it uses its generic "simple:any" loop, about 25 ns per
 * element); this loop is an order of magnitude faster there.
 */
final class Bf16 {
  private Bf16() {}

  /**
   * Whether an operand converted to {@code type} is widened here rather than reordered by
   * oneDNN: a dense BF16 operand (either order; the FP32 copy keeps its layout) going to FP32.
   */
  static boolean widens(DnnlKernels.Operand o, int type) {
    return o.type() == org.bytedeco.dnnl.global.dnnl.dnnl_bf16
        && type == org.bytedeco.dnnl.global.dnnl.dnnl_f32 && o.isDense();
  }

  /** Widens {@code count} BF16 values at {@code from} into FP32 at {@code to}. */
  static void widen(long from, long to, long count) {
    if (count > Integer.MAX_VALUE) {
      throw new IllegalArgumentException("count: more than 2^31 elements (" + count + ")");
    }
    int n = (int) count;
    ShortBuffer src = new ShortPointer(new NativePrimitive.Address().set(from)).capacity(n)
        .asBuffer();
    FloatBuffer dst = new FloatPointer(new NativePrimitive.Address().set(to)).capacity(n)
        .asBuffer();
    for (int i = 0; i < n; i++) {
      dst.put(i, Float.intBitsToFloat(src.get(i) << 16));
    }
  }
}
