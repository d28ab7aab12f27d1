package io.hyperframes.nd4j;

import static org.bytedeco.dnnl.global.dnnl.dnnl_bf16;
import static org.bytedeco.dnnl.global.dnnl.dnnl_f32;

import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;

/**
 * A 2-D array with adjacent columns, as its address, row stride and shape. oneDNN 2.5's AMX
 * matmul takes dense operands only: with a row stride wider than the row it falls back to
 * {@code gemm:jit}, which took 0.21 ms for a 256×64·64×256 BF16 tile against 0.03 ms dense
 * (docs/performance.md). So strided inputs are gathered into dense buffers first.
 */
record Rows(long address, long stride, int rows, int cols, boolean bf16) {
  static boolean adjacent(INDArray a) {
    return (a.columns() == 1 || a.stride(1) == 1) && (a.rows() == 1
        || a.stride(0) >= a.columns());
  }

  static Rows of(INDArray a) {
    return new Rows(Arrays2.address(a), rowStride(a), a.rows(), a.columns(),
        a.dataType() == DataType.BFLOAT16);
  }

  boolean dense() {
    return rows == 1 || stride == cols;
  }

  DnnlKernels.Operand operand() {
    return new DnnlKernels.Operand(rows, cols, stride, 1, bf16 ? dnnl_bf16 : dnnl_f32);
  }

  /** Elements from the first to one past the last. */
  long span() {
    return (long) (rows - 1) * stride + cols;
  }

  /** Elements from one row of {@code a} to the next. */
  private static long rowStride(INDArray a) {
    return a.rows() > 1 ? a.stride(0) : a.columns();
  }
}
