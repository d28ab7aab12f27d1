package io.hyperframes.nd4j;

import java.nio.FloatBuffer;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.factory.Nd4j;

/**
 * The SwiGLU gate of a transformer's feed-forward layer (Shazeer 2020, "GLU Variants Improve
 * Transformer", arXiv 2002.05202, eq. 6): {@code out = silu(a) ⊙ b}, {@code silu(a) = a·σ(a)},
 * on the output of one fused product {@code [a | b] = x·[W | V]}: a matrix [T, 2f] whose first f
 * columns are the gate a and last f the values b.
 *
 * <p>The SiLU and its derivative run on oneDNN's vectorised element-wise kernels (swish with
 * α = 1) where oneDNN loaded, over the whole [T, 2f] matrix (the values' half is computed and
 * not used: one dense call is faster than a strided one); the products with b and dOut run in
 * Java a row at a time, the rows split over the cores from 64 rows. Without oneDNN the same formulas run in Java with σ in FP64 (a tenth
 * of the speed). Precision: FP32 input (BF16 widened), an FP32 or BF16 result (rounded once),
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
    return forward(in, new RowMajor.Output(outType, in.rows(), in.columns() / 2));
  }

  /**
   * {@code silu(a) ⊙ b} into {@code out}, a dense row-major [T, f] array of FP32 or BF16 that the
   * caller holds. No array is allocated when gateUp is dense FP32: the SiLU runs in Java (a
   * token's row at a time while decoding, where a oneDNN call and its scratch cost more).
   *
   * @return {@code out}
   */
  public static INDArray forward(INDArray gateUp, INDArray out) {
    INDArray in = input(gateUp);
    return forward(in, RowMajor.Output.into("out", out, in.rows(), in.columns() / 2), null);
  }

  private static INDArray forward(INDArray in, RowMajor.Output out) {
    return forward(in, out, Kernels.cpu().dnnl());
  }

  private static INDArray forward(INDArray in, RowMajor.Output out, DnnlKernels dnnl) {
    int rows = in.rows();
    int f = in.columns() / 2;
    FloatBuffer b = Arrays2.floats(in);
    if (dnnl != null) {
      INDArray silu = Nd4j.createUninitialized(DataType.FLOAT, rows, 2L * f);
      silu(dnnl, in, silu, null);
      FloatBuffer s = Arrays2.floats(silu);
      RowMajor.forRows(rows, (from, to) -> {
        float[] row = new float[f];
        float[] up = new float[f];
        short[] halves = new short[f];
        for (int t = from; t < to; t++) {
          s.get(2 * t * f, row, 0, f);
          b.get(2 * t * f + f, up, 0, f);
          for (int i = 0; i < f; i++) {
            row[i] *= up[i];
          }
          out.put(t * f, row, f, halves);
        }
      });
      RowMajor.keep(silu);
    } else {
      RowMajor.forRows(rows, (from, to) -> {
        float[] row = new float[f];
        float[] up = new float[f];
        short[] halves = new short[f];
        for (int t = from; t < to; t++) {
          b.get(2 * t * f, row, 0, f);
          b.get(2 * t * f + f, up, 0, f);
          for (int i = 0; i < f; i++) {
            double a = row[i];
            row[i] = (float) (a / (1 + Math.exp(-a)) * up[i]);
          }
          out.put(t * f, row, f, halves);
        }
      });
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
    return backward(dOut, gateUp, Kernels.cpu().dnnl());
  }

  /** The backward pass, on oneDNN's kernels when {@code dnnl} is given, else in Java. */
  static INDArray backward(INDArray dOut, INDArray gateUp, DnnlKernels dnnl) {
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
    if (dnnl != null) {
      // diff_dst = [dOut ⊙ b | anything]; oneDNN's swish backward gives the gate's half of
      // dGateUp (its values' half is overwritten below), its forward silu(a) for the values'.
      INDArray dSilu = Nd4j.createUninitialized(DataType.FLOAT, rows, 2L * f);
      FloatBuffer ds = Arrays2.floats(dSilu);
      RowMajor.forRows(rows, (from, to) -> {
        float[] up = new float[f];
        float[] dRow = new float[f];
        for (int t = from; t < to; t++) {
          d.get(t * f, dRow, 0, f);
          b.get(2 * t * f + f, up, 0, f);
          for (int i = 0; i < f; i++) {
            up[i] *= dRow[i];
          }
          ds.put(2 * t * f, up, 0, f);
          // The values' half of diff_dst is read by the kernel: any finite value does, and
          // the gradient's values' half it yields is replaced below.
          ds.put(2 * t * f + f, dRow, 0, f);
        }
      });
      silu(dnnl, in, grad, dSilu);
      silu(dnnl, in, dSilu, null);
      RowMajor.forRows(rows, (from, to) -> {
        float[] gate = new float[f];
        float[] dRow = new float[f];
        for (int t = from; t < to; t++) {
          d.get(t * f, dRow, 0, f);
          ds.get(2 * t * f, gate, 0, f);
          for (int i = 0; i < f; i++) {
            gate[i] *= dRow[i];
          }
          g.put(2 * t * f + f, gate, 0, f);
        }
      });
      RowMajor.keep(dSilu);
    } else {
      RowMajor.forRows(rows, (from, to) -> {
        float[] gate = new float[f];
        float[] up = new float[f];
        float[] dRow = new float[f];
        for (int t = from; t < to; t++) {
          b.get(2 * t * f, gate, 0, f);
          b.get(2 * t * f + f, up, 0, f);
          d.get(t * f, dRow, 0, f);
          for (int i = 0; i < f; i++) {
            double a = gate[i];
            double sigma = 1 / (1 + Math.exp(-a));
            gate[i] = (float) (dRow[i] * up[i] * sigma * (1 + a * (1 - sigma)));
            up[i] = (float) (dRow[i] * a * sigma);
          }
          g.put(2 * t * f, gate, 0, f);
          g.put(2 * t * f + f, up, 0, f);
        }
      });
    }
    RowMajor.keep(in, dy, grad);
    return grad;
  }

  /** Key of the cached oneDNN swish kernels of one shape. */
  private record SiluKey(long rows, long cols, boolean backward) {}

  /**
   * {@code dst = silu(src)}, or with {@code diffDst} the swish backward {@code dst = diffDst ⊙
   * silu'(src)}: dense FP32 arrays of one shape on oneDNN.
   */
  private static void silu(DnnlKernels dnnl, INDArray src, INDArray dst, INDArray diffDst) {
    long rows = src.rows();
    long cols = src.columns();
    boolean backward = diffDst != null;
    dnnl.run(new SiluKey(rows, cols, backward), () -> {
      DnnlKernels.Plan p = new DnnlKernels.Plan();
      p.add(backward ? dnnl.eltwiseBackward(Activation.SILU, rows, cols)
          : dnnl.eltwiseForward(Activation.SILU, rows, cols));
      return p;
    }, p -> {
      NativePrimitive k = p.primitives.get(0);
      k.bind(0, Arrays2.address(src));
      if (backward) {
        k.bind(1, Arrays2.address(diffDst));
        k.bind(2, Arrays2.address(dst));
      } else {
        k.bind(1, Arrays2.address(dst));
      }
      k.execute();
    });
    RowMajor.keep(src, dst, diffDst);
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
