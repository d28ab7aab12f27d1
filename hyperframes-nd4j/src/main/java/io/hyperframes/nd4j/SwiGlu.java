package io.hyperframes.nd4j;

import static org.bytedeco.dnnl.global.dnnl.dnnl_bf16;
import static org.bytedeco.dnnl.global.dnnl.dnnl_f32;

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
 * Java a row at a time, the rows split over the cores from 64 rows. Without oneDNN the same
 * formulas run in Java with σ in FP64 (a tenth of the speed). A training pass
 * ({@link #forwardTraining}) keeps silu(a) for its backward pass. Precision: FP32 input (BF16
 * widened), an FP32 or BF16 result (rounded once), FP32 gradients (BF16 ones rounded once);
 * {@code TransformerKernelsTest} checks both against an FP64 reference and its finite
 * differences.
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
    return pass(in, out, dnnl).out();
  }

  /** The forward pass into {@code out}, with silu(a) where oneDNN computed it (else null). */
  private static Forward pass(INDArray in, RowMajor.Output out, DnnlKernels dnnl) {
    int rows = in.rows();
    int f = in.columns() / 2;
    FloatBuffer b = Arrays2.floats(in);
    INDArray silu = null;
    if (dnnl != null) {
      silu = Nd4j.createUninitialized(DataType.FLOAT, rows, 2L * f);
      silu(dnnl, in, silu, null);
      gated(Arrays2.floats(silu), false, b, out, rows, f);
    } else {
      gated(b, true, b, out, rows, f);
    }
    RowMajor.keep(in, silu);
    return new Forward(out.done(), silu);
  }

  /**
   * {@code out = silu(a) ⊙ b}, row by row, b from the values' half of {@code b}'s [T, 2f] rows
   * and silu(a) from the gate's half of {@code gate}'s: as given there (oneDNN's SiLU of the
   * whole input) or, with {@code computeSilu}, computed here from a itself with σ in FP64.
   */
  private static void gated(FloatBuffer gate, boolean computeSilu, FloatBuffer b,
      RowMajor.Output out, int rows, int f) {
    RowMajor.forRows(rows, (from, to) -> {
      RowMajor.Scratch scratch = RowMajor.Scratch.get();
      float[] row = scratch.floats(0, f);
      float[] up = scratch.floats(1, f);
      short[] halves = scratch.shorts(f);
      for (int t = from; t < to; t++) {
        gate.get(2 * t * f, row, 0, f);
        b.get(2 * t * f + f, up, 0, f);
        if (computeSilu) {
          for (int i = 0; i < f; i++) {
            double a = row[i];
            row[i] = (float) (a / (1 + Math.exp(-a)) * up[i]);
          }
        } else {
          for (int i = 0; i < f; i++) {
            row[i] *= up[i];
          }
        }
        out.put(t * f, row, f, halves);
      }
    });
  }

  /**
   * A training forward pass: its result, and the SiLU of the gate that the backward pass would
   * otherwise recompute.
   *
   * @param out {@code silu(a) ⊙ b}, [T, f]
   * @param silu FP32 [T, 2f] whose first f columns are silu(a) (the others are not used); null
   *     where oneDNN did not load
   */
  public record Forward(INDArray out, INDArray silu) {}

  /**
   * {@code silu(a) ⊙ b} of {@code gateUp = [a | b]}, keeping silu(a) for
   * {@link #backward(INDArray, INDArray, Forward, DataType)}: the same result as
   * {@link #forward(INDArray, DataType)}, for 4·T·2f bytes kept until the backward pass.
   *
   * @throws IllegalArgumentException naming the argument when a shape or type is wrong
   */
  public static Forward forwardTraining(INDArray gateUp, DataType outType) {
    INDArray in = input(gateUp);
    RowMajor.checkResultType("outType", outType);
    return pass(in, new RowMajor.Output(outType, in.rows(), in.columns() / 2),
        Kernels.cpu().dnnl());
  }

  /**
   * The backward pass from a {@link #forwardTraining} pass, its gradient written in
   * {@code outType}: the values' half {@code dOut ⊙ silu(a)} from the kept SiLU, the gate's half
   * by oneDNN's swish backward in place, then converted into its columns by one reorder. Against
   * {@link #backward(INDArray, INDArray)} and a conversion by the caller: no recomputed SiLU, one
   * row pass instead of two, and the gate's half alone converted.
   *
   * @param outType FLOAT or BFLOAT16 (the BF16 gradient is the FP32 one rounded once)
   * @throws IllegalArgumentException naming the argument when a shape or type is wrong, or when
   *     {@code forward} is not of this input's shape
   */
  public static INDArray backward(INDArray dOut, INDArray gateUp, Forward forward,
      DataType outType) {
    RowMajor.checkResultType("outType", outType);
    if (forward == null) {
      throw new IllegalArgumentException("forward: must be the result of forwardTraining");
    }
    DnnlKernels dnnl = Kernels.cpu().dnnl();
    if (forward.silu() == null || dnnl == null) {
      INDArray grad = backward(dOut, gateUp, dnnl);
      return outType == DataType.FLOAT ? grad : grad.castTo(outType);
    }
    INDArray in = input(gateUp);
    int rows = in.rows();
    int f = in.columns() / 2;
    INDArray silu = forward.silu();
    if (silu.dataType() != DataType.FLOAT || silu.rows() != rows || silu.columns() != 2L * f
        || !Arrays2.isDenseRowMajor(silu)) {
      throw new IllegalArgumentException("forward: silu " + java.util.Arrays.toString(
          silu.shape()) + " " + silu.dataType() + " is not dense FP32 of gateUp's shape");
    }
    INDArray dy = dOut(dOut, rows, f);
    INDArray grad = Nd4j.createUninitialized(outType, rows, 2L * f);
    RowMajor.Output g = new RowMajor.Output(grad);
    INDArray dSilu = Nd4j.createUninitialized(DataType.FLOAT, rows, 2L * f);
    FloatBuffer b = Arrays2.floats(in);
    FloatBuffer d = Arrays2.floats(dy);
    FloatBuffer s = Arrays2.floats(silu);
    FloatBuffer ds = Arrays2.floats(dSilu);
    RowMajor.forRows(rows, (from, to) -> {
      RowMajor.Scratch scratch = RowMajor.Scratch.get();
      float[] up = scratch.floats(0, f);
      float[] dRow = scratch.floats(1, f);
      float[] gate = scratch.floats(2, f);
      short[] halves = scratch.shorts(f);
      for (int t = from; t < to; t++) {
        d.get(t * f, dRow, 0, f);
        b.get(2 * t * f + f, up, 0, f);
        s.get(2 * t * f, gate, 0, f);
        for (int i = 0; i < f; i++) {
          up[i] *= dRow[i];
          gate[i] *= dRow[i];
        }
        // diff_dst of the swish backward: [dOut ⊙ b | dOut] (the values' half is any finite
        // value; what the kernel makes of it is not read).
        ds.put(2 * t * f, up, 0, f);
        ds.put(2 * t * f + f, dRow, 0, f);
        g.put(2 * t * f + f, gate, f, halves);
      }
    });
    silu(dnnl, in, dSilu, dSilu);
    halfInto(dnnl, dSilu, grad, rows, f);
    RowMajor.keep(in, dy, silu, dSilu, grad);
    return g.done();
  }

  /** Key of the cached reorder of a gate half into a gradient of one type. */
  private record HalfKey(long rows, long cols, DataType type) {}

  /** The first f columns of FP32 [T, 2f] {@code from} into those of {@code to}, converted. */
  private static void halfInto(DnnlKernels dnnl, INDArray from, INDArray to, int rows, int f) {
    int type = to.dataType() == DataType.FLOAT ? dnnl_f32 : dnnl_bf16;
    dnnl.runUnary(new HalfKey(rows, f, to.dataType()),
        () -> dnnl.reorder(new DnnlKernels.Operand(rows, f, 2L * f, 1, dnnl_f32),
            new DnnlKernels.Operand(rows, f, 2L * f, 1, type), "swiglu.gate"),
        Arrays2.address(from), Arrays2.address(to));
    RowMajor.keep(from, to);
  }

  /** dOut checked against gateUp's rows and half its columns, as dense FP32. */
  private static INDArray dOut(INDArray dOut, int rows, int f) {
    INDArray dy = RowMajor.input("dOut", dOut);
    if (dOut.rows() != rows || dOut.columns() != f) {
      throw new IllegalArgumentException("dOut: shape [" + dOut.rows() + ", " + dOut.columns()
          + "] must be [" + rows + ", " + f + "] (gateUp's rows, half its columns)");
    }
    return dy;
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
    INDArray dy = dOut(dOut, rows, f);
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
        RowMajor.Scratch scratch = RowMajor.Scratch.get();
        float[] up = scratch.floats(0, f);
        float[] dRow = scratch.floats(1, f);
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
        RowMajor.Scratch scratch = RowMajor.Scratch.get();
        float[] gate = scratch.floats(0, f);
        float[] dRow = scratch.floats(1, f);
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
        RowMajor.Scratch scratch = RowMajor.Scratch.get();
        float[] gate = scratch.floats(0, f);
        float[] up = scratch.floats(1, f);
        float[] dRow = scratch.floats(2, f);
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
