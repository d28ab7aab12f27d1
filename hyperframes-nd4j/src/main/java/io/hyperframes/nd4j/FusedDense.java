package io.hyperframes.nd4j;

import static org.bytedeco.dnnl.global.dnnl.dnnl_bf16;
import static org.bytedeco.dnnl.global.dnnl.dnnl_f32;

import java.lang.ref.Reference;
import java.util.Arrays;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.factory.Nd4j;

/**
 * A dense layer fused into one kernel: {@code y = act(x · W + b) + residual}, forward and
 * backward, in FP32 or in BF16 compute with FP32 master weights and FP32 gradients.
 *
 * <p>Shapes: x [M, K], W [K, N], b [N] or [1, N] (optional), residual [M, N] (optional). Inputs may
 * be FP32 or BF16 arrays, views included (strides are passed to oneDNN); with
 * {@link Precision#BF16} FP32 inputs are rounded to BF16 inside the kernel (a conversion, not a
 * copy visible to the caller). Bias, residual and output gradients must be FP32; a non-contiguous
 * residual or gradient is copied once. Outputs are new FP32 arrays owned by the caller: no later
 * call writes into an array an earlier call returned. Outside an ND4J workspace their memory
 * comes from the C allocator, not ND4J's (whose per-call cost exceeded the kernels'); the
 * {@code ...Into} variants write into caller-owned arrays instead.
 *
 * <p>Forward for inference is one oneDNN matmul with bias, the activation and the residual add as
 * post-ops. {@link #forwardTraining} also keeps the pre-activation z = x·W + b for backward. The
 * backward pass computes dZ = dY ⊙ act'(z) with one oneDNN element-wise backward primitive (oneDNN
 * cannot fuse it into the matmul), then dX = dZ·Wᵀ and dW = xᵀ·dZ as matmuls over transposed
 * strides (no transposed copies) and db = Σ_rows dZ as the product 1ᵀ·dZ. The gradient of the
 * residual is dY itself.
 *
 * <p>Error bounds against an FP64 reference: FP32 ≈ 2^-24·√K relative, BF16 ≈ 2^-8·√K relative
 * (inputs rounded to 8 significant bits, FP32 accumulation); see {@code FusedDenseCorrectnessTest}.
 *
 * <p>Instances are immutable and thread-safe.
 */
public final class FusedDense {

  /** Compute precision of the matmuls. */
  public enum Precision {
    /** FP32 inputs and accumulation. */
    FP32,
    /** BF16 inputs (converted from FP32 master weights), FP32 accumulation and gradients. */
    BF16;

    /**
     * The faster precision on {@code kernels}: BF16 where its matmul runs BF16 natively
     * ({@link Kernels#nativeBf16()}: avx512_bf16 or AMX), FP32 elsewhere. Without native BF16,
     * oneDNN computes a BF16 product in FP32 and the BF16 operands only add their widening and
     * rounding: on an AVX2-only CPU the benchmark transformer trained 3.4 times as fast in FP32
     * (docs/performance.md, 2026-12-07).
     */
    public static Precision fastestOn(Kernels kernels) {
      return kernels.nativeBf16() ? BF16 : FP32;
    }
  }

  /** Forward result for training: the output and the pre-activation kept for backward. */
  public record Forward(INDArray output, INDArray preActivation) {}

  /** Gradients of a backward pass (FP32): dX [M, K] (null when not asked for), dW [K, N], db [1, N]. */
  public record Gradients(INDArray input, INDArray weights, INDArray bias) {}

  private final Activation activation;
  private final Precision precision;
  private final Kernels kernels;

  private FusedDense(Activation activation, Precision precision, Kernels kernels) {
    this.activation = activation;
    this.precision = precision;
    this.kernels = kernels;
  }

  /**
   * A fused dense layer.
   *
   * @throws IllegalArgumentException when an argument is null
   */
  public static FusedDense of(Activation activation, Precision precision) {
    if (activation == null) {
      throw new IllegalArgumentException("activation: must be given");
    }
    if (precision == null) {
      throw new IllegalArgumentException("precision: must be given");
    }
    return new FusedDense(activation, precision, Kernels.cpu());
  }

  /** The same layer on another backend (tests of the fallback path). */
  FusedDense on(Kernels other) {
    return new FusedDense(activation, precision, other);
  }

  public Activation activation() {
    return activation;
  }

  public Precision precision() {
    return precision;
  }

  /** {@code act(x · W + b) + residual} as a new FP32 array (bias and residual may be null). */
  public INDArray forward(INDArray x, INDArray w, INDArray bias, INDArray residual) {
    return run(x, w, bias, residual, false).output();
  }

  /**
   * As {@link #forward}, writing into a caller-owned FP32 array {@code y} ([M, N], dense
   * row-major), for callers that manage their own memory (DL4J workspaces).
   */
  public INDArray forwardInto(INDArray x, INDArray w, INDArray bias, INDArray residual,
      INDArray y) {
    if (y == null) {
      throw new IllegalArgumentException("y: must be given");
    }
    return run(x, w, bias, residual, false, y, null).output();
  }

  /** As {@link #forward}, also returning the pre-activation {@code x · W + b} for backward. */
  public Forward forwardTraining(INDArray x, INDArray w, INDArray bias, INDArray residual) {
    return run(x, w, bias, residual, true);
  }

  /**
   * As {@link #forwardTraining}, writing into caller-owned FP32 arrays {@code y} and {@code z}
   * ([M, N], dense row-major), so that a training loop reuses its buffers step after step.
   */
  public Forward forwardTrainingInto(INDArray x, INDArray w, INDArray bias, INDArray residual,
      INDArray y, INDArray z) {
    return run(x, w, bias, residual, true, y, z);
  }

  private Forward run(INDArray x, INDArray w, INDArray bias, INDArray residual,
      boolean training) {
    return run(x, w, bias, residual, training, null, null);
  }

  private Forward run(INDArray x, INDArray w, INDArray bias, INDArray residual,
      boolean training, INDArray yOut, INDArray zOut) {
    Arrays2.check2d("x", x, DataType.FLOAT, DataType.BFLOAT16);
    Arrays2.check2d("w", w, DataType.FLOAT, DataType.BFLOAT16);
    long m = x.rows();
    long k = x.columns();
    long n = w.columns();
    if (w.rows() != k) {
      throw new IllegalArgumentException("w: has " + w.rows() + " rows but x has " + k
          + " columns (x " + Arrays.toString(x.shape()) + ", w " + Arrays.toString(w.shape())
          + ")");
    }
    INDArray b = bias == null ? null : checkBias(bias, n);
    INDArray r = null;
    if (residual != null) {
      if (residual.rank() != 2 || residual.rows() != m || residual.columns() != n) {
        throw new IllegalArgumentException("residual: shape " + Arrays.toString(residual.shape())
            + " must be [" + m + ", " + n + "]");
      }
      r = Arrays2.denseFloat(residual);
    }
    INDArray y = yOut != null ? checkOut("y", yOut, m, n)
        : kernels.memory().allocate(m, n);
    INDArray z = !training ? null : zOut != null ? checkOut("z", zOut, m, n)
        : kernels.memory().allocate(m, n);
    DnnlKernels dnnl = kernels.dnnl();
    if (dnnl == null) {
      fallbackForward(x, w, b, r, y, z);
    } else {
      ForwardKey key = new ForwardKey(Arrays2.operand(x, false), Arrays2.operand(w, false),
          computeType(), activation, b != null, r != null, training);
      final INDArray fb = b;
      final INDArray fr = r;
      dnnl.run(key, () -> ForwardPlan.build(dnnl, key), plan -> plan.execute(
          Arrays2.address(x), Arrays2.address(w), fb == null ? 0 : Arrays2.address(fb),
          fr == null ? 0 : Arrays2.address(fr), Arrays2.address(y),
          z == null ? 0 : Arrays2.address(z)));
      Reference.reachabilityFence(x);
      Reference.reachabilityFence(w);
      Reference.reachabilityFence(b);
      Reference.reachabilityFence(r);
    }
    return new Forward(y, z);
  }

  /**
   * {@code a} in the format this layer multiplies in: written into {@code into} and returned
   * when it is converted (FP32 to BF16, for {@link Precision#BF16} where the CPU multiplies
   * BF16), else {@code a} itself. {@link #forwardTrainingInto} and {@link #backwardInto} each
   * convert an FP32 operand on their own; a training step whose weights and inputs do not change
   * between its forward and its backward converts them once here and passes the result to both
   * (the same oneDNN reorder, so the same values).
   *
   * @param into a dense row-major BF16 array of {@code a}'s shape (untouched when no conversion
   *     is made)
   * @throws IllegalArgumentException naming the array when a shape or format is wrong
   */
  public INDArray toCompute(INDArray a, INDArray into) {
    Arrays2.check2d("a", a, DataType.FLOAT, DataType.BFLOAT16);
    DnnlKernels dnnl = kernels.dnnl();
    if (precision != Precision.BF16 || a.dataType() != DataType.FLOAT || dnnl == null
        || dnnl.computeType(dnnl_bf16) != dnnl_bf16) {
      return a;
    }
    Arrays2.check2d("into", into, DataType.BFLOAT16);
    if (into.rows() != a.rows() || into.columns() != a.columns() || into.stride(1) != 1
        || into.stride(0) != into.columns()) {
      throw new IllegalArgumentException("into: must be a dense row-major BF16 "
          + Arrays.toString(a.shape()) + ", got " + Arrays.toString(into.shape()));
    }
    ConvertKey key = new ConvertKey(Arrays2.operand(a, false), Arrays2.operand(into, false));
    dnnl.run(key, () -> ConvertPlan.build(dnnl, key), plan -> plan.execute(Arrays2.address(a),
        Arrays2.address(into)));
    Reference.reachabilityFence(a);
    Reference.reachabilityFence(into);
    return into;
  }

  /**
   * Gradients of the layer given the forward inputs, the pre-activation from
   * {@link #forwardTraining} and dL/dy.
   */
  public Gradients backward(INDArray x, INDArray w, INDArray preActivation, INDArray gradOutput) {
    return backward(x, w, preActivation, gradOutput, true);
  }

  /**
   * As {@link #backward(INDArray, INDArray, INDArray, INDArray)}; with {@code inputGradient}
   * false the dX product is skipped and {@link Gradients#input()} is null (the first layer of a
   * network needs no gradient for its input).
   */
  public Gradients backward(INDArray x, INDArray w, INDArray preActivation, INDArray gradOutput,
      boolean inputGradient) {
    Arrays2.check2d("x", x, DataType.FLOAT, DataType.BFLOAT16);
    return backwardInto(x, w, preActivation, gradOutput,
        inputGradient ? kernels.memory().allocate(x.rows(), x.columns()) : null, null, null);
  }

  /**
   * As {@link #backward}, writing into caller-owned FP32 arrays (dense row-major): {@code dX}
   * [M, K] or null to skip it, {@code dW} [K, N] and {@code db} [1, N] (null: allocated).
   * {@code dW} may also be dense column-major ('f' order, as DL4J keeps its weight gradient
   * views), so that a layer writes its gradient where the network reads it instead of copying
   * it there.
   */
  public Gradients backwardInto(INDArray x, INDArray w, INDArray preActivation,
      INDArray gradOutput, INDArray dXOut, INDArray dWOut, INDArray dbOut) {
    Arrays2.check2d("x", x, DataType.FLOAT, DataType.BFLOAT16);
    Arrays2.check2d("w", w, DataType.FLOAT, DataType.BFLOAT16);
    Arrays2.check2d("gradOutput", gradOutput, DataType.FLOAT);
    long m = x.rows();
    long k = x.columns();
    long n = w.columns();
    if (w.rows() != k) {
      throw new IllegalArgumentException("w: has " + w.rows() + " rows but x has " + k
          + " columns");
    }
    if (gradOutput.rows() != m || gradOutput.columns() != n) {
      throw new IllegalArgumentException("gradOutput: shape "
          + Arrays.toString(gradOutput.shape()) + " must be [" + m + ", " + n + "]");
    }
    INDArray z = null;
    if (activation != Activation.IDENTITY) {
      Arrays2.check2d("preActivation", preActivation, DataType.FLOAT);
      if (preActivation.rows() != m || preActivation.columns() != n) {
        throw new IllegalArgumentException("preActivation: shape "
            + Arrays.toString(preActivation.shape()) + " must be [" + m + ", " + n + "]");
      }
      z = Arrays2.denseFloat(preActivation);
    }
    INDArray dY = Arrays2.denseFloat(gradOutput);
    INDArray dX = dXOut == null ? null : checkOut("dX", dXOut, m, k);
    boolean dWColumnMajor = dWOut != null && !Arrays2.isDenseRowMajor(dWOut)
        && isDenseColumnMajor(dWOut);
    INDArray dW = dWOut == null ? kernels.memory().allocate(k, n)
        : dWColumnMajor ? checkShape("dW", dWOut, k, n) : checkOut("dW", dWOut, k, n);
    INDArray db = dbOut != null ? checkOut("db", dbOut, 1, n)
        : kernels.memory().allocate(1, n);
    DnnlKernels dnnl = kernels.dnnl();
    if (dnnl == null) {
      fallbackBackward(x, w, z, dY, dX, dW, db);
    } else {
      BackwardKey key = new BackwardKey(Arrays2.operand(x, false), Arrays2.operand(w, false),
          computeType(), activation, dWColumnMajor);
      final INDArray fz = z;
      dnnl.run(key, () -> BackwardPlan.build(dnnl, key), plan -> plan.execute(
          Arrays2.address(x), Arrays2.address(w), fz == null ? 0 : Arrays2.address(fz),
          Arrays2.address(dY), dX == null ? 0 : Arrays2.address(dX), Arrays2.address(dW),
          Arrays2.address(db)));
      Reference.reachabilityFence(x);
      Reference.reachabilityFence(w);
      Reference.reachabilityFence(z);
      Reference.reachabilityFence(dY);
    }
    return new Gradients(dX, dW, db);
  }

  private static INDArray checkOut(String name, INDArray a, long rows, long cols) {
    Arrays2.check2d(name, a, DataType.FLOAT);
    if (a.rows() != rows || a.columns() != cols || Arrays2.denseFloat(a) != a) {
      throw new IllegalArgumentException(name + ": must be a dense row-major FP32 [" + rows
          + ", " + cols + "] array, got " + Arrays.toString(a.shape()) + " order "
          + a.ordering());
    }
    return a;
  }

  /** {@code a} as an FP32 [rows, cols] output after its layout was checked by the caller. */
  private static INDArray checkShape(String name, INDArray a, long rows, long cols) {
    Arrays2.check2d(name, a, DataType.FLOAT);
    if (a.rows() != rows || a.columns() != cols) {
      throw new IllegalArgumentException(name + ": must be an FP32 [" + rows + ", " + cols
          + "] array, got " + Arrays.toString(a.shape()));
    }
    return a;
  }

  /** Whether a 2-d array is dense column-major: strides (1, rows), size-1 strides free. */
  private static boolean isDenseColumnMajor(INDArray a) {
    return a.dataType() == DataType.FLOAT && a.rank() == 2
        && (a.rows() == 1 || a.stride(0) == 1) && (a.columns() == 1 || a.stride(1) == a.rows());
  }

  private int computeType() {
    return precision == Precision.BF16 ? dnnl_bf16 : dnnl_f32;
  }

  private static INDArray checkBias(INDArray bias, long n) {
    boolean shapeOk = (bias.rank() == 1 && bias.length() == n)
        || (bias.rank() == 2 && bias.rows() == 1 && bias.columns() == n);
    if (!shapeOk) {
      throw new IllegalArgumentException("bias: shape " + Arrays.toString(bias.shape())
          + " must be [" + n + "] or [1, " + n + "]");
    }
    return Arrays2.denseFloat(bias.reshape(1, n));
  }

  // ---------------------------------------------------------------------------------------------
  // oneDNN plans

  record ForwardKey(DnnlKernels.Operand x, DnnlKernels.Operand w, int compute,
      Activation activation, boolean bias, boolean residual, boolean training) {}

  record BackwardKey(DnnlKernels.Operand x, DnnlKernels.Operand w, int compute,
      Activation activation, boolean dWColumnMajor) {}

  record ConvertKey(DnnlKernels.Operand from, DnnlKernels.Operand to) {}

  /** One reorder from an operand to another of the compute type ({@link #toCompute}). */
  static final class ConvertPlan extends DnnlKernels.Plan {
    NativePrimitive reorder;

    static ConvertPlan build(DnnlKernels k, ConvertKey key) {
      ConvertPlan p = new ConvertPlan();
      p.reorder = p.add(k.reorder(key.from(), key.to(), "convert.operand.bf16"));
      return p;
    }

    void execute(long from, long to) {
      reorder.bind(0, from);
      reorder.bind(1, to);
      reorder.execute();
    }
  }

  /**
   * Converts an operand to the compute type when needed; returns the operand to use. A dense
   * BF16 operand computed in FP32 (a CPU without a BF16 matmul) is widened in Java
   * ({@link Bf16}), as {@link Matmul} does: oneDNN 2.5's reorder for it is its generic loop there.
   */
  private static final class Converter {
    NativePrimitive reorder;
    long widen;
    long scratch;
    DnnlKernels.Operand result;

    Converter(DnnlKernels k, DnnlKernels.Plan plan, DnnlKernels.Operand in, int type,
        String kind) {
      if (in.type() == type) {
        result = in;
        return;
      }
      if (Bf16.widens(in, type)) {
        result = in.as(type);
        widen = in.rows() * in.cols();
      } else {
        result = DnnlKernels.Operand.dense(in.rows(), in.cols(), type);
        reorder = plan.add(k.reorder(in, result, kind));
      }
      scratch = plan.scratch(result.bytes());
    }

    long apply(long address) {
      if (widen > 0) {
        Bf16.widen(address, scratch, widen);
        return scratch;
      }
      if (reorder == null) {
        return address;
      }
      reorder.bind(0, address);
      reorder.bind(1, scratch);
      reorder.execute();
      return scratch;
    }
  }

  static final class ForwardPlan extends DnnlKernels.Plan {
    Converter x;
    Converter w;
    NativePrimitive matmul;
    NativePrimitive eltwise;
    NativePrimitive residualAdd;
    boolean bias;
    boolean residual;

    static ForwardPlan build(DnnlKernels k, ForwardKey key) {
      ForwardPlan p = new ForwardPlan();
      String type = Matmul.typeName(key.compute());
      int compute = k.computeType(key.compute());
      p.x = new Converter(k, p, key.x(), compute, "convert.x." + type);
      p.w = new Converter(k, p, key.w(), compute, "convert.w." + type);
      p.bias = key.bias();
      p.residual = key.residual();
      DnnlKernels.Operand out = DnnlKernels.Operand.dense(key.x().rows(), key.w().cols(),
          dnnl_f32);
      if (key.training()) {
        p.matmul = p.add(k.matmul(p.x.result, p.w.result, out, key.bias(), Activation.IDENTITY,
            false, 1f, 0f, "dense.forward." + type));
        p.eltwise = p.add(k.eltwiseForward(key.activation(), out.rows(), out.cols()));
        if (key.residual()) {
          p.residualAdd = p.add(k.add(out.rows(), out.cols()));
        }
      } else {
        p.matmul = p.add(k.matmul(p.x.result, p.w.result, out, key.bias(), key.activation(),
            key.residual(), 1f, 0f, "dense.forward." + type));
      }
      return p;
    }

    void execute(long x, long w, long b, long r, long y, long z) {
      int i = 0;
      matmul.bind(i++, this.x.apply(x));
      matmul.bind(i++, this.w.apply(w));
      if (bias) {
        matmul.bind(i++, b);
      }
      if (eltwise == null) {
        matmul.bind(i++, y);
        if (residual) {
          matmul.bind(i, r);
        }
        matmul.execute();
        return;
      }
      matmul.bind(i, z);
      matmul.execute();
      eltwise.bind(0, z);
      eltwise.bind(1, y);
      eltwise.execute();
      if (residualAdd != null) {
        residualAdd.bind(0, y);
        residualAdd.bind(1, r);
        residualAdd.bind(2, y);
        residualAdd.execute();
      }
    }
  }

  static final class BackwardPlan extends DnnlKernels.Plan {
    NativePrimitive activationBackward;
    long dZ;
    Converter dZc;
    Converter x;
    Converter w;
    NativePrimitive dX;
    NativePrimitive dW;
    /** Whether dW is computed as dWᵀ = dZᵀ·x (a column-major dW). */
    boolean dWTransposed;
    NativePrimitive db;
    long ones;

    static BackwardPlan build(DnnlKernels k, BackwardKey key) {
      BackwardPlan p = new BackwardPlan();
      long m = key.x().rows();
      long n = key.w().cols();
      String type = Matmul.typeName(key.compute());
      int compute = k.computeType(key.compute());
      DnnlKernels.Operand grad = DnnlKernels.Operand.dense(m, n, dnnl_f32);
      if (key.activation() != Activation.IDENTITY) {
        p.activationBackward = p.add(k.eltwiseBackward(key.activation(), m, n));
        p.dZ = p.scratch(grad.bytes());
      }
      p.dZc = new Converter(k, p, grad, compute, "convert.dz." + type);
      p.x = new Converter(k, p, key.x(), compute, "convert.x." + type);
      p.w = new Converter(k, p, key.w(), compute, "convert.w." + type);
      DnnlKernels.Operand dX = DnnlKernels.Operand.dense(m, key.x().cols(), dnnl_f32);
      p.dX = p.add(k.matmul(p.dZc.result, p.w.result.transposed(), dX, false,
          Activation.IDENTITY, false, 1f, 0f, "dense.backward.data." + type));
      p.dWTransposed = key.dWColumnMajor();
      if (p.dWTransposed) {
        // A column-major dW [K, N] is the row-major dWᵀ = dZᵀ·x [N, K]: computed as that, since
        // oneDNN writes a transposed destination with its reference kernel, a thousand times
        // slower.
        p.dW = p.add(k.matmul(p.dZc.result.transposed(), p.x.result,
            DnnlKernels.Operand.dense(n, key.w().rows(), dnnl_f32), false, Activation.IDENTITY,
            false, 1f, 0f, "dense.backward.weights." + type));
      } else {
        p.dW = p.add(k.matmul(p.x.result.transposed(), p.dZc.result,
            DnnlKernels.Operand.dense(key.w().rows(), n, dnnl_f32), false, Activation.IDENTITY,
            false, 1f, 0f, "dense.backward.weights." + type));
      }
      p.db = p.add(k.columnSums(m, n));
      p.ones = p.ones(m);
      return p;
    }

    void execute(long x, long w, long z, long dY, long dXOut, long dWOut, long dbOut) {
      long dz = dY;
      if (activationBackward != null) {
        activationBackward.bind(0, z);
        activationBackward.bind(1, dY);
        activationBackward.bind(2, dZ);
        activationBackward.execute();
        dz = dZ;
      }
      long dzc = dZc.apply(dz);
      if (dXOut != 0) {
        dX.bind(0, dzc);
        dX.bind(1, this.w.apply(w));
        dX.bind(2, dXOut);
        dX.execute();
      }
      long xc = this.x.apply(x);
      dW.bind(0, dWTransposed ? dzc : xc);
      dW.bind(1, dWTransposed ? xc : dzc);
      dW.bind(2, dWOut);
      dW.execute();
      db.bind(0, ones);
      db.bind(1, dz);
      db.bind(2, dbOut);
      db.execute();
    }
  }

  // ---------------------------------------------------------------------------------------------
  // ND4J fallback (FP32)

  private void fallbackForward(INDArray x, INDArray w, INDArray b, INDArray r, INDArray y,
      INDArray z) {
    INDArray pre = x.castTo(DataType.FLOAT).mmul(w.castTo(DataType.FLOAT));
    if (b != null) {
      pre.addiRowVector(b);
    }
    if (z != null) {
      z.assign(pre);
    }
    activation.applyInPlace(pre);
    if (r != null) {
      pre.addi(r);
    }
    y.assign(pre);
  }

  private void fallbackBackward(INDArray x, INDArray w, INDArray z, INDArray dY, INDArray dX,
      INDArray dW, INDArray db) {
    INDArray dZ = z == null ? dY : activation.backward(z, dY);
    if (dX != null) {
      dX.assign(dZ.mmul(w.castTo(DataType.FLOAT).transpose()));
    }
    dW.assign(x.castTo(DataType.FLOAT).transpose().mmul(dZ));
    db.assign(dZ.sum(true, 0));
  }
}
