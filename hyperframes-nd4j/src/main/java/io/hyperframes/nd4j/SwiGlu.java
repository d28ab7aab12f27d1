package io.hyperframes.nd4j;

import java.nio.FloatBuffer;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.factory.Nd4j;

/**
 * The SwiGLU gate of a transformer's feed-forward layer (Shazeer 2020, "GLU Variants Improve
 * Transformer", arXiv 2002.05202, eq. 6): {@code out = silu(a) ⊙ b}, {@code silu(a) = a·σ(a)},
 * on the output of one fused product {@code [a | b] = x·[W | V]}: a matrix [T, 2f] whose first f
 * columns are the gate a and last f the values b. Forward and backward in one pass each.
 *
 * <p>Precision: FP32 input (BF16 widened), σ in FP64, an FP32 or BF16 result (rounded once),
 * FP32 gradients; {@code TransformerKernelsTest} checks both against an FP64 reference and its
 * finite differences.
 */
public final class SwiGlu {
  private SwiGlu() {}

  /**
   * {@code silu(a) ⊙ b} of {@code gateUp = [a | b]}.
   *
   * @param gateUp [T, 2f], FP32 or BF16
   * @param outType FLOAT or BFLOAT16
   * @return [T, f] of {@code outType}
   * @throws IllegalArgumentException naming the argument when a shape or type is wrong
   */
  public static INDArray forward(INDArray gateUp, DataType outType) {
    INDArray in = input(gateUp);
    RowMajor.checkResultType("outType", outType);
    int rows = in.rows();
    int f = in.columns() / 2;
    RowMajor.Output out = new RowMajor.Output(outType, rows, f);
    FloatBuffer b = Arrays2.floats(in);
    for (int t = 0; t < rows; t++) {
      int row = 2 * t * f;
      for (int i = 0; i < f; i++) {
        double a = b.get(row + i);
        out.put(t * f + i, (float) (a / (1 + Math.exp(-a)) * b.get(row + f + i)));
      }
    }
    RowMajor.keep(in);
    return out.done();
  }

  /**
   * The backward pass: {@code da = dOut ⊙ b ⊙ σ(a)·(1 + a·(1 − σ(a)))}, {@code db = dOut ⊙
   * silu(a)}.
   *
   * @param dOut gradient of the loss with respect to the output [T, f], FP32 or BF16
   * @param gateUp the forward pass's input [T, 2f]
   * @return the gradient with respect to {@code gateUp}, FP32 [T, 2f]
   */
  public static INDArray backward(INDArray dOut, INDArray gateUp) {
    INDArray in = input(gateUp);
    int rows = in.rows();
    int f = in.columns() / 2;
    INDArray dy = RowMajor.input("dOut", dOut);
    if (dOut.rows() != rows || dOut.columns() != f) {
      throw new IllegalArgumentException("dOut: shape [" + dOut.rows() + ", " + dOut.columns()
          + "] must be [" + rows + ", " + f + "] (gateUp's rows, half its columns)");
    }
    INDArray grad = Nd4j.createUninitialized(DataType.FLOAT, rows, 2L * f);
    FloatBuffer b = Arrays2.floats(in);
    FloatBuffer d = Arrays2.floats(dy);
    FloatBuffer g = Arrays2.floats(grad);
    for (int t = 0; t < rows; t++) {
      int row = 2 * t * f;
      for (int i = 0; i < f; i++) {
        double a = b.get(row + i);
        double up = b.get(row + f + i);
        double dOutI = d.get(t * f + i);
        double sigma = 1 / (1 + Math.exp(-a));
        g.put(row + i, (float) (dOutI * up * sigma * (1 + a * (1 - sigma))));
        g.put(row + f + i, (float) (dOutI * a * sigma));
      }
    }
    RowMajor.keep(in, dy, grad);
    return grad;
  }

  private static INDArray input(INDArray gateUp) {
    INDArray in = RowMajor.input("gateUp", gateUp);
    if (in.columns() % 2 != 0) {
      throw new IllegalArgumentException("gateUp: " + in.columns() + " columns, must be even"
          + " (the gate a, then the values b)");
    }
    return in;
  }
}
