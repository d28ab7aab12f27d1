package io.hyperframes.nd4j;

import static org.bytedeco.dnnl.global.dnnl.dnnl_f32;

import java.lang.ref.Reference;
import java.util.Arrays;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.factory.Nd4j;

/**
 * Mixed-precision matrix multiplication on ND4J arrays: {@code C = alpha · op(A) · op(B) + beta ·
 * C} with A and B in BF16, FP16 or FP32, accumulation in FP32, C in FP32 or BF16.
 *
 * <p>Arrays are used in place: views, offsets and strides (including transposed views) are passed
 * to oneDNN as they are, without copying. FP16 inputs on CPUs without native FP16 matmul are
 * converted to FP32 inside the kernel (a copy, reported as the implementation). Without oneDNN the
 * product is computed by ND4J in FP32 (correct, slower; see {@link Kernels#fallbackReason()}).
 *
 * <p>Error bound (FP32 accumulation of K products of inputs rounded to a format with unit
 * roundoff u): |C − C_exact| ≲ (2u + K·2^-24) · Σ|a||b| elementwise; for BF16 inputs (u = 2^-8)
 * the relative error of a typical element is about 2^-8·√K (Higham 2002, §3.1, with
 * probabilistic accumulation; verified in {@code MatmulCorrectnessTest}).
 *
 * <p>Thread-safe: concurrent calls on different shapes run in parallel; calls on the same shape
 * and layout share one compiled plan and run one after the other.
 */
public final class Matmul {
  private Matmul() {}

  /** A new FP32 matrix {@code a · b}. */
  public static INDArray multiply(INDArray a, INDArray b) {
    Arrays2.check2d("a", a, DataType.FLOAT, DataType.BFLOAT16, DataType.FLOAT16);
    Arrays2.check2d("b", b, DataType.FLOAT, DataType.BFLOAT16, DataType.FLOAT16);
    INDArray c = Kernels.cpu().memory().allocate(a.rows(), b.columns());
    gemm(a, false, b, false, c, 1f, 0f);
    return c;
  }

  /**
   * {@code c = alpha · op(a) · op(b) + beta · c}, op = transpose when the flag is set.
   *
   * @throws IllegalArgumentException naming the argument when a type or shape does not fit
   */
  public static void gemm(INDArray a, boolean transA, INDArray b, boolean transB, INDArray c,
      float alpha, float beta) {
    gemm(Kernels.cpu(), a, transA, b, transB, c, alpha, beta);
  }

  static void gemm(Kernels kernels, INDArray a, boolean transA, INDArray b, boolean transB,
      INDArray c, float alpha, float beta) {
    Arrays2.check2d("a", a, DataType.FLOAT, DataType.BFLOAT16, DataType.FLOAT16);
    Arrays2.check2d("b", b, DataType.FLOAT, DataType.BFLOAT16, DataType.FLOAT16);
    Arrays2.check2d("c", c, DataType.FLOAT, DataType.BFLOAT16);
    if (a.dataType() != b.dataType()) {
      throw new IllegalArgumentException("b: data type " + b.dataType()
          + " differs from a's " + a.dataType() + " (convert one of them)");
    }
    if (!Float.isFinite(alpha) || !Float.isFinite(beta)) {
      throw new IllegalArgumentException("alpha, beta: must be finite, got " + alpha + ", "
          + beta);
    }
    long m = transA ? a.columns() : a.rows();
    long k = transA ? a.rows() : a.columns();
    long kb = transB ? b.columns() : b.rows();
    long n = transB ? b.rows() : b.columns();
    if (k != kb) {
      throw new IllegalArgumentException("b: op(b) has " + kb + " rows but op(a) has " + k
          + " columns (a " + Arrays.toString(a.shape()) + ", b " + Arrays.toString(b.shape())
          + ")");
    }
    if (c.rows() != m || c.columns() != n) {
      throw new IllegalArgumentException("c: shape " + Arrays.toString(c.shape()) + " must be ["
          + m + ", " + n + "]");
    }
    DnnlKernels dnnl = kernels.dnnl();
    if (dnnl == null) {
      fallback(a, transA, b, transB, c, alpha, beta);
      return;
    }
    DnnlKernels.Operand opA = Arrays2.operand(a, transA);
    DnnlKernels.Operand opB = Arrays2.operand(b, transB);
    DnnlKernels.Operand opC = Arrays2.operand(c, false);
    GemmKey key = new GemmKey(opA, opB, opC, alpha, beta);
    dnnl.run(key, () -> GemmPlan.build(dnnl, key), plan -> plan.execute(
        Arrays2.address(a), Arrays2.address(b), Arrays2.address(c)));
    Reference.reachabilityFence(a);
    Reference.reachabilityFence(b);
    Reference.reachabilityFence(c);
  }

  /**
   * {@code c = alpha · a · b + beta · c} on operands at native addresses, each described by its
   * shape and strides (a transposed operand is a transposed description), through the same
   * cached plans as {@link #gemm}. The caller keeps the memory reachable until it returns.
   */
  static void gemmAt(DnnlKernels dnnl, long a, DnnlKernels.Operand opA, long b,
      DnnlKernels.Operand opB, long c, DnnlKernels.Operand opC, float alpha, float beta) {
    GemmKey key = new GemmKey(opA, opB, opC, alpha, beta);
    dnnl.run(key, () -> GemmPlan.build(dnnl, key), plan -> plan.execute(a, b, c));
  }

  record GemmKey(DnnlKernels.Operand a, DnnlKernels.Operand b, DnnlKernels.Operand c,
      float alpha, float beta) {}

  /** One matmul, with FP32 conversions in front when the CPU has no kernel for the type. */
  static final class GemmPlan extends DnnlKernels.Plan {
    NativePrimitive convertA;
    NativePrimitive convertB;
    long widenA;
    long widenB;
    long scratchA;
    long scratchB;
    NativePrimitive matmul;

    static GemmPlan build(DnnlKernels k, GemmKey key) {
      GemmPlan p = new GemmPlan();
      String kind = "matmul." + typeName(key.a().type());
      int compute = k.computeType(key.a().type());
      DnnlKernels.Operand a = key.a();
      DnnlKernels.Operand b = key.b();
      if (compute != a.type()) {
        // No kernel for this input type on this CPU: convert to FP32 inside the plan.
        a = DnnlKernels.Operand.dense(a.rows(), a.cols(), compute);
        b = DnnlKernels.Operand.dense(b.rows(), b.cols(), compute);
        p.scratchA = p.scratch(a.bytes());
        p.scratchB = p.scratch(b.bytes());
        if (Bf16.widens(key.a(), compute) && Bf16.widens(key.b(), compute)) {
          // Widening keeps the memory layout, so the FP32 copies keep the strides.
          a = key.a().as(compute);
          b = key.b().as(compute);
          p.widenA = a.rows() * a.cols();
          p.widenB = b.rows() * b.cols();
        } else {
          p.convertA = p.add(k.reorder(key.a(), a, kind + ".convert"));
          p.convertB = p.add(k.reorder(key.b(), b, kind + ".convert"));
        }
      }
      p.matmul = p.add(k.matmul(a, b, key.c(), false, Activation.IDENTITY, false, key.alpha(),
          key.beta(), kind));
      if (p.widenA > 0) {
        k.implementations.put(kind, "bf16 widened to f32 + " + p.matmul.implementation);
      } else if (p.convertA != null) {
        k.implementations.put(kind, "reorder to f32 + " + p.matmul.implementation);
      }
      return p;
    }

    void execute(long a, long b, long c) {
      if (widenA > 0) {
        // Dense in either order: the widened copy keeps the layout (see build()).
        Bf16.widen(a, scratchA, widenA);
        Bf16.widen(b, scratchB, widenB);
        a = scratchA;
        b = scratchB;
      } else if (convertA != null) {
        convertA.bind(0, a);
        convertA.bind(1, scratchA);
        convertA.execute();
        convertB.bind(0, b);
        convertB.bind(1, scratchB);
        convertB.execute();
        a = scratchA;
        b = scratchB;
      }
      matmul.bind(0, a);
      matmul.bind(1, b);
      matmul.bind(2, c);
      matmul.execute();
    }
  }

  static String typeName(int dnnlType) {
    return dnnlType == dnnl_f32 ? "fp32"
        : dnnlType == org.bytedeco.dnnl.global.dnnl.dnnl_bf16 ? "bf16" : "fp16";
  }

  private static void fallback(INDArray a, boolean transA, INDArray b, boolean transB,
      INDArray c, float alpha, float beta) {
    INDArray a32 = (transA ? a.transpose() : a).castTo(DataType.FLOAT);
    INDArray b32 = (transB ? b.transpose() : b).castTo(DataType.FLOAT);
    INDArray product = a32.mmul(b32).muli(alpha);
    if (beta != 0f) {
      product.addi(c.castTo(DataType.FLOAT).mul(beta));
    }
    c.assign(product.castTo(c.dataType()));
  }
}
