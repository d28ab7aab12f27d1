package io.hyperframes.nd4j;

import static org.bytedeco.dnnl.global.dnnl.*;

import java.nio.FloatBuffer;
import java.nio.ShortBuffer;
import java.util.Arrays;
import org.bytedeco.javacpp.FloatPointer;
import org.bytedeco.javacpp.ShortPointer;
import org.nd4j.linalg.api.buffer.DataBuffer;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.cpu.nativecpu.buffer.BaseCpuDataBuffer;

/** Checks and conversions between ND4J arrays and oneDNN operands. */
final class Arrays2 {
  private Arrays2() {}

  /** Requires a non-empty rank-2 array of one of the given types. */
  static void check2d(String name, INDArray a, DataType... types) {
    if (a == null) {
      throw new IllegalArgumentException(name + ": must be given");
    }
    if (a.rank() != 2) {
      throw new IllegalArgumentException(name + ": must be a matrix (rank 2), got shape "
          + Arrays.toString(a.shape()));
    }
    if (a.length() == 0) {
      throw new IllegalArgumentException(name + ": must not be empty, got shape "
          + Arrays.toString(a.shape()));
    }
    for (DataType t : types) {
      if (a.dataType() == t || (isHalf(t) && isHalf(a.dataType()))) {
        return;
      }
    }
    throw new IllegalArgumentException(name + ": data type " + a.dataType() + " not supported"
        + " (expected one of " + Arrays.toString(types) + ")");
  }

  /** ND4J reports FLOAT16 arrays as the deprecated HALF constant; both mean IEEE FP16. */
  static boolean isHalf(DataType t) {
    return t == DataType.FLOAT16 || "HALF".equals(t.name());
  }

  /** The oneDNN data type of an ND4J array. */
  static int dnnlType(INDArray a) {
    DataType t = a.dataType();
    if (t == DataType.FLOAT) {
      return dnnl_f32;
    } else if (t == DataType.BFLOAT16) {
      return dnnl_bf16;
    } else if (isHalf(t)) {
      return dnnl_f16;
    }
    throw new IllegalArgumentException("data type " + t + " not supported");
  }

  /** The array as an operand (its own strides; no copy), optionally transposed. */
  static DnnlKernels.Operand operand(INDArray a, boolean transpose) {
    long[] stride = a.stride();
    long rows = a.rows();
    long cols = a.columns();
    long rowStride = stride[0];
    long colStride = stride[1];
    // ND4J gives vectors strides [1, 1]; the stride of a size-1 dimension is free, and oneDNN
    // wants the plain dense value there.
    if (rows == 1 && cols > 1) {
      rowStride = cols * colStride;
    } else if (cols == 1 && rows > 1) {
      colStride = rows * rowStride;
    }
    DnnlKernels.Operand o = new DnnlKernels.Operand(rows, cols, rowStride, colStride,
        dnnlType(a));
    return transpose ? o.transposed() : o;
  }

  /**
   * Address of element (0, 0); ND4J view buffers already include the view's offset. On ND4J's
   * CPU buffers it is read from the native buffer directly: {@code addressPointer()} makes four
   * Java objects a call (two pointers, a paged and a typed one), which the decoder's many small
   * calls per token turned into garbage.
   */
  static long address(INDArray a) {
    DataBuffer data = a.data();
    if (data instanceof BaseCpuDataBuffer cpu) {
      return cpu.getOpaqueDataBuffer().primaryBuffer().address();
    }
    return data.addressPointer().address();
  }

  /** The array itself when it is dense row-major FP32, else a dense FP32 copy. */
  static INDArray denseFloat(INDArray a) {
    if (a.dataType() == DataType.FLOAT && isDenseRowMajor(a)) {
      return a;
    }
    return a.castTo(DataType.FLOAT).dup('c');
  }

  /** Whether every dimension longer than 1 has the row-major stride (size-1 strides are free). */
  static boolean isDenseRowMajor(INDArray a) {
    long expected = 1;
    for (int d = a.rank() - 1; d >= 0; d--) {
      if (a.size(d) > 1 && a.stride(d) != expected) {
        return false;
      }
      expected *= a.size(d);
    }
    return true;
  }

  /** {@code count} FP32 values at a native address, as a buffer (the caller keeps it alive). */
  static FloatBuffer floats(long address, long count) {
    return new FloatPointer(new NativePrimitive.Address().set(address)).capacity(count)
        .asBuffer();
  }

  /** {@code count} BF16 values at a native address, as a buffer of their bits. */
  static ShortBuffer shorts(long address, long count) {
    return new ShortPointer(new NativePrimitive.Address().set(address)).capacity(count)
        .asBuffer();
  }

  /** The elements of a dense FP32 array, as a buffer (the caller keeps the array reachable). */
  static FloatBuffer floats(INDArray a) {
    return floats(address(a), a.length());
  }

  /** The first {@code count} values rounded to BF16 into {@code into}, which is returned. */
  static short[] bf16(float[] values, short[] into, int count) {
    for (int i = 0; i < count; i++) {
      into[i] = bf16(values[i]);
    }
    return into;
  }

  /** FP32 to BF16, rounded to nearest, ties to even (finite values). */
  static short bf16(float x) {
    int bits = Float.floatToRawIntBits(x);
    bits += 0x7FFF + ((bits >>> 16) & 1);
    return (short) (bits >>> 16);
  }
}
