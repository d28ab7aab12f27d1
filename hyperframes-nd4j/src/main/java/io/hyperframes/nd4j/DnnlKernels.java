package io.hyperframes.nd4j;

import static org.bytedeco.dnnl.global.dnnl.*;

import com.google.common.cache.Cache;
import com.google.common.cache.CacheBuilder;
import com.google.common.cache.RemovalListener;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.bytedeco.dnnl.const_dnnl_op_desc_t;
import org.bytedeco.dnnl.dnnl_binary_desc_t;
import org.bytedeco.dnnl.dnnl_eltwise_desc_t;
import org.bytedeco.dnnl.dnnl_matmul_desc_t;
import org.bytedeco.dnnl.dnnl_memory_desc_t;
import org.bytedeco.dnnl.dnnl_post_ops;
import org.bytedeco.dnnl.dnnl_primitive_attr;
import org.bytedeco.dnnl.dnnl_primitive_desc;
import org.bytedeco.javacpp.BytePointer;
import org.nd4j.nativeblas.NativeOps;
import org.nd4j.nativeblas.NativeOpsHolder;

/**
 * The oneDNN kernels: compiled plans (primitives, memories, scratch buffers) cached per shape and
 * configuration in a bounded LRU cache; evicted plans release their native memory.
 *
 * <p>Thread-safety: a plan is used by one thread at a time (callers synchronise on it); different
 * shapes run concurrently. A plan evicted while another thread waits for it is closed only after
 * that thread is done, and a closed plan is never executed (the caller rebuilds it).
 */
final class DnnlKernels {

  /**
   * Largest number of cached plans; override with -Dhyperframes.kernels.cacheSize. A small
   * transformer's training and decoding use about 60 shapes, and each thread that runs kernels on
   * its own ({@link Kernels#onThisThreadOnly}) its own plans of the attention's ~20.
   */
  static final int CACHE_SIZE = Integer.getInteger("hyperframes.kernels.cacheSize", 256);

  /** Set on a thread while its kernels run on it alone, with plans of its own. */
  private final ThreadLocal<Boolean> ownThread = new ThreadLocal<>();

  /** A plan's key for a thread that runs its kernels alone: its own plans, built for 1 thread. */
  private record OwnThreadKey(Object key, Thread thread) {}

  private final Dnnl dnnl;
  private final Cache<Object, Plan> plans;
  /** Implementation chosen per primitive kind, for reports. */
  final ConcurrentHashMap<String, String> implementations = new ConcurrentHashMap<>();

  DnnlKernels(Dnnl dnnl) {
    this.dnnl = dnnl;
    RemovalListener<Object, Plan> closeOnEvict = n -> n.getValue().close();
    this.plans = CacheBuilder.newBuilder().maximumSize(CACHE_SIZE).removalListener(closeOnEvict)
        .build();
  }

  /** A compiled sequence of primitives with the scratch buffers they share. */
  static class Plan implements AutoCloseable {
    final List<NativePrimitive> primitives = new ArrayList<>();
    final List<BytePointer> scratch = new ArrayList<>();
    private boolean closed;

    NativePrimitive add(NativePrimitive p) {
      primitives.add(p);
      return p;
    }

    /** A scratch buffer of {@code count} FP32 ones. */
    long ones(long count) {
      org.bytedeco.javacpp.FloatPointer f = new org.bytedeco.javacpp.FloatPointer(count);
      for (long i = 0; i < count; i++) {
        f.put(i, 1f);
      }
      onesOwners.add(f);
      return f.address();
    }

    private final List<org.bytedeco.javacpp.FloatPointer> onesOwners = new ArrayList<>();

    long scratch(long bytes) {
      BytePointer b = new BytePointer(Math.max(bytes, 64));
      scratch.add(b);
      return b.address();
    }

    @Override
    public synchronized void close() {
      if (closed) {
        return;
      }
      closed = true;
      primitives.forEach(NativePrimitive::close);
      onesOwners.forEach(org.bytedeco.javacpp.FloatPointer::close);
      scratch.forEach(BytePointer::close);
    }
  }

  private final ConcurrentHashMap<Integer, Boolean> matmulTypes = new ConcurrentHashMap<>();

  /**
   * Whether oneDNN has a matmul kernel for inputs of this type on this CPU (BF16 needs
   * avx512_core or newer in oneDNN 2.5, FP16 avx512_core_fp16). Probed once per type.
   */
  boolean supportsMatmul(int type) {
    return matmulTypes.computeIfAbsent(type, t -> {
      Operand a = Operand.dense(16, 16, t);
      try {
        matmul(a, a, Operand.dense(16, 16, dnnl_f32), false, Activation.IDENTITY, false, 1f, 0f,
            "probe").close();
        return true;
      } catch (IllegalStateException unimplemented) {
        org.slf4j.LoggerFactory.getLogger(DnnlKernels.class).warn(
            "oneDNN {} has no {} matmul on ISA {}: computing in FP32 (correct, slower)",
            dnnl.version, t == dnnl_bf16 ? "bf16" : "f16", dnnl.isa);
        return false;
      } finally {
        implementations.remove("probe");
      }
    });
  }

  /** The type to compute in: the requested one when supported, else FP32. */
  int computeType(int requested) {
    return requested == dnnl_f32 || supportsMatmul(requested) ? requested : dnnl_f32;
  }

  /** Number of cached plans (for tests). */
  long cachedPlans() {
    plans.cleanUp();
    return plans.size();
  }

  /**
   * Runs the one-primitive plan of {@code key}, made by {@code make} (a reorder or an element-wise
   * kernel: arguments src, dst), from the memory at {@code src} into that at {@code dst}.
   */
  void runUnary(Object key, Supplier<NativePrimitive> make, long src, long dst) {
    run(key, () -> {
      Plan p = new Plan();
      p.add(make.get());
      return p;
    }, p -> {
      NativePrimitive k = p.primitives.get(0);
      k.bind(0, src);
      k.bind(1, dst);
      k.execute();
    });
  }

  /** Runs {@code body} on the plan for {@code key}, building it with {@code factory} if needed. */
  <P extends Plan> void run(Object shapeKey, Supplier<P> factory, Consumer<P> body) {
    Object key = ownThread.get() == null ? shapeKey
        : new OwnThreadKey(shapeKey, Thread.currentThread());
    while (true) {
      Plan plan;
      try {
        plan = plans.get(key, factory::get);
      } catch (ExecutionException | com.google.common.util.concurrent.UncheckedExecutionException e) {
        Throwable cause = e.getCause();
        if (cause instanceof RuntimeException r) {
          throw r;
        }
        throw new IllegalStateException(cause);
      }
      synchronized (plan) {
        if (!plan.closed) {
          @SuppressWarnings("unchecked")
          P typed = (P) plan;
          body.accept(typed);
          return;
        }
      }
      plans.asMap().remove(key, plan);
    }
  }

  /**
   * Runs {@code body} with this thread's kernels on this thread alone: OpenMP's thread count of
   * the thread set to 1 (oneDNN reads it when it builds a plan and when it runs one) and plans
   * keyed by the thread, so that several threads running the same shapes neither share a plan's
   * lock nor start teams of OpenMP threads of their own. The count is restored after.
   */
  <T> T onThisThreadOnly(Supplier<T> body) {
    if (ownThread.get() != null) {
      return body.get();
    }
    NativeOps ops = NativeOpsHolder.getInstance().getDeviceNativeOps();
    int before = ops.ompGetMaxThreads();
    ops.setOmpNumThreads(1);
    ownThread.set(Boolean.TRUE);
    try {
      return body.get();
    } finally {
      ownThread.remove();
      ops.setOmpNumThreads(before);
    }
  }

  void invalidateAll() {
    plans.invalidateAll();
    plans.cleanUp();
  }

  // ---------------------------------------------------------------------------------------------
  // Primitive factories

  /** A 2-D operand: shape, element strides and oneDNN data type. */
  record Operand(long rows, long cols, long rowStride, long colStride, int type) {
    static Operand dense(long rows, long cols, int type) {
      return new Operand(rows, cols, cols, 1, type);
    }

    Operand transposed() {
      return new Operand(cols, rows, colStride, rowStride, type);
    }

    /** Whether the elements fill their memory in either order (row- or column-major). */
    boolean isDense() {
      return (colStride == 1 && rowStride == cols) || (rowStride == 1 && colStride == rows);
    }

    /** The same layout in another element type. */
    Operand as(int otherType) {
      return new Operand(rows, cols, rowStride, colStride, otherType);
    }

    dnnl_memory_desc_t desc() {
      return NativePrimitive.desc(rows, cols, rowStride, colStride, type);
    }

    long bytes() {
      return rows * cols * (type == dnnl_f32 ? 4L : 2L);
    }
  }

  /**
   * A matmul dst = act(alpha · src · weights + bias) + residual + beta · dst. Arguments in order:
   * src, weights, [bias], dst, [residual].
   */
  NativePrimitive matmul(Operand src, Operand weights, Operand dst, boolean bias,
      Activation activation, boolean residual, float alpha, float beta, String kind) {
    dnnl_memory_desc_t srcMd = src.desc();
    dnnl_memory_desc_t weiMd = weights.desc();
    dnnl_memory_desc_t dstMd = dst.desc();
    dnnl_memory_desc_t biasMd = bias ? NativePrimitive.dense(1, dst.cols(), dnnl_f32) : null;
    dnnl_memory_desc_t resMd = residual ? NativePrimitive.dense(dst.rows(), dst.cols(), dnnl_f32)
        : null;
    dnnl_matmul_desc_t desc = new dnnl_matmul_desc_t();
    Dnnl.check(dnnl_matmul_desc_init(desc, srcMd, weiMd, biasMd, dstMd), "matmul desc");
    dnnl_primitive_attr attr = new dnnl_primitive_attr();
    Dnnl.check(dnnl_primitive_attr_create(attr), "attr create");
    dnnl_post_ops ops = new dnnl_post_ops();
    Dnnl.check(dnnl_post_ops_create(ops), "post-ops create");
    try {
      if (alpha != 1f) {
        Dnnl.check(dnnl_primitive_attr_set_output_scales(attr, 1, 0, new float[] {alpha}),
            "output scales");
      }
      int index = 0;
      int residualIndex = -1;
      if (activation != Activation.IDENTITY) {
        Dnnl.check(dnnl_post_ops_append_eltwise(ops, 1f, algorithm(activation),
            activation == Activation.SILU ? 1f : 0f, 0f), "eltwise post-op");
        index++;
      }
      if (residual) {
        Dnnl.check(dnnl_post_ops_append_binary(ops, dnnl_binary_add, resMd), "binary post-op");
        residualIndex = index++;
      }
      if (beta != 0f) {
        Dnnl.check(dnnl_post_ops_append_sum(ops, beta), "sum post-op");
        index++;
      }
      if (index > 0) {
        Dnnl.check(dnnl_primitive_attr_set_post_ops(attr, ops), "set post-ops");
      }
      dnnl_primitive_desc pd = new dnnl_primitive_desc();
      Dnnl.check(dnnl_primitive_desc_create(pd, new const_dnnl_op_desc_t(desc), attr,
          dnnl.engine, null), "matmul primitive desc " + kind);
      List<Integer> ids = new ArrayList<>(List.of(DNNL_ARG_SRC, DNNL_ARG_WEIGHTS));
      List<dnnl_memory_desc_t> mds = new ArrayList<>(List.of(srcMd, weiMd));
      if (bias) {
        ids.add(DNNL_ARG_BIAS);
        mds.add(biasMd);
      }
      ids.add(DNNL_ARG_DST);
      mds.add(dstMd);
      if (residual) {
        ids.add(DNNL_ARG_ATTR_MULTIPLE_POST_OP_BASE * (residualIndex + 1) | DNNL_ARG_SRC_1);
        mds.add(resMd);
      }
      NativePrimitive p = new NativePrimitive(dnnl, pd,
          ids.stream().mapToInt(Integer::intValue).toArray(),
          mds.toArray(new dnnl_memory_desc_t[0]));
      implementations.put(kind, p.implementation);
      return p;
    } finally {
      dnnl_post_ops_destroy(ops);
      dnnl_primitive_attr_destroy(attr);
      desc.close();
    }
  }

  /** A reorder (type conversion and/or layout change): arguments src, dst. */
  NativePrimitive reorder(Operand from, Operand to, String kind) {
    dnnl_memory_desc_t src = from.desc();
    dnnl_memory_desc_t dst = to.desc();
    dnnl_primitive_desc pd = new dnnl_primitive_desc();
    Dnnl.check(dnnl_reorder_primitive_desc_create(pd, src, dnnl.engine, dst, dnnl.engine,
        (dnnl_primitive_attr) null), "reorder primitive desc");
    NativePrimitive p = new NativePrimitive(dnnl, pd, new int[] {DNNL_ARG_FROM, DNNL_ARG_TO},
        new dnnl_memory_desc_t[] {src, dst});
    implementations.put(kind, p.implementation);
    return p;
  }

  /**
   * y = exp(x) on FP32 [rows, cols] with row stride {@code rowStride} (in place when src and dst
   * are bound to the same address): arguments src, dst.
   */
  NativePrimitive exp(long rows, long cols, long rowStride) {
    dnnl_memory_desc_t md = NativePrimitive.desc(rows, cols, rowStride, 1, dnnl_f32);
    dnnl_eltwise_desc_t desc = new dnnl_eltwise_desc_t();
    try {
      Dnnl.check(dnnl_eltwise_forward_desc_init(desc, dnnl_forward_inference, dnnl_eltwise_exp,
          md, 0f, 0f), "eltwise exp desc");
      dnnl_primitive_desc pd = new dnnl_primitive_desc();
      Dnnl.check(dnnl_primitive_desc_create(pd, new const_dnnl_op_desc_t(desc), null,
          dnnl.engine, null), "eltwise exp primitive desc");
      NativePrimitive p = new NativePrimitive(dnnl, pd, new int[] {DNNL_ARG_SRC, DNNL_ARG_DST},
          new dnnl_memory_desc_t[] {md, md});
      implementations.put("eltwise.exp", p.implementation);
      return p;
    } finally {
      desc.close();
    }
  }

  /**
   * Element-wise activation y = act(z) on dense FP32 [rows, cols]: arguments src, dst. (A residual
   * add as a binary post-op would push oneDNN 2.5 onto its reference implementation on AVX2, so
   * the residual is a separate {@link #add} primitive.)
   */
  NativePrimitive eltwiseForward(Activation activation, long rows, long cols) {
    dnnl_memory_desc_t md = NativePrimitive.dense(rows, cols, dnnl_f32);
    dnnl_eltwise_desc_t desc = new dnnl_eltwise_desc_t();
    int alg = activation == Activation.IDENTITY ? dnnl_eltwise_linear : algorithm(activation);
    float alpha = activation == Activation.IDENTITY || activation == Activation.SILU ? 1f : 0f;
    try {
      Dnnl.check(dnnl_eltwise_forward_desc_init(desc, dnnl_forward_training, alg, md, alpha, 0f),
          "eltwise desc");
      dnnl_primitive_desc pd = new dnnl_primitive_desc();
      Dnnl.check(dnnl_primitive_desc_create(pd, new const_dnnl_op_desc_t(desc), null,
          dnnl.engine, null), "eltwise primitive desc");
      NativePrimitive p = new NativePrimitive(dnnl, pd, new int[] {DNNL_ARG_SRC, DNNL_ARG_DST},
          new dnnl_memory_desc_t[] {md, md});
      implementations.put("eltwise.forward", p.implementation);
      return p;
    } finally {
      desc.close();
    }
  }

  /** dst = a + b on dense FP32 [rows, cols]: arguments a, b, dst. */
  NativePrimitive add(long rows, long cols) {
    dnnl_memory_desc_t md = NativePrimitive.dense(rows, cols, dnnl_f32);
    dnnl_binary_desc_t desc = new dnnl_binary_desc_t();
    try {
      Dnnl.check(dnnl_binary_desc_init(desc, dnnl_binary_add, md, md, md), "binary desc");
      dnnl_primitive_desc pd = new dnnl_primitive_desc();
      Dnnl.check(dnnl_primitive_desc_create(pd, new const_dnnl_op_desc_t(desc), null,
          dnnl.engine, null), "binary primitive desc");
      NativePrimitive p = new NativePrimitive(dnnl, pd,
          new int[] {DNNL_ARG_SRC_0, DNNL_ARG_SRC_1, DNNL_ARG_DST},
          new dnnl_memory_desc_t[] {md, md, md});
      implementations.put("binary.add", p.implementation);
      return p;
    } finally {
      desc.close();
    }
  }

  /** dZ = dY ⊙ act'(z) on dense FP32 [rows, cols]: arguments src (z), diff_dst (dY), diff_src. */
  NativePrimitive eltwiseBackward(Activation activation, long rows, long cols) {
    dnnl_memory_desc_t md = NativePrimitive.dense(rows, cols, dnnl_f32);
    int alg = algorithm(activation);
    float alpha = activation == Activation.SILU ? 1f : 0f;
    dnnl_eltwise_desc_t fwd = new dnnl_eltwise_desc_t();
    Dnnl.check(dnnl_eltwise_forward_desc_init(fwd, dnnl_forward_training, alg, md, alpha, 0f),
        "eltwise forward desc");
    dnnl_primitive_desc hint = new dnnl_primitive_desc();
    Dnnl.check(dnnl_primitive_desc_create(hint, new const_dnnl_op_desc_t(fwd), null,
        dnnl.engine, null), "eltwise forward hint");
    dnnl_eltwise_desc_t bwd = new dnnl_eltwise_desc_t();
    try {
      Dnnl.check(dnnl_eltwise_backward_desc_init(bwd, alg, md, md, alpha, 0f),
          "eltwise backward desc");
      dnnl_primitive_desc pd = new dnnl_primitive_desc();
      Dnnl.check(dnnl_primitive_desc_create(pd, new const_dnnl_op_desc_t(bwd), null,
          dnnl.engine, hint), "eltwise backward primitive desc");
      NativePrimitive p = new NativePrimitive(dnnl, pd,
          new int[] {DNNL_ARG_SRC, DNNL_ARG_DIFF_DST, DNNL_ARG_DIFF_SRC},
          new dnnl_memory_desc_t[] {md, md, md});
      implementations.put("eltwise.backward", p.implementation);
      return p;
    } finally {
      dnnl_primitive_desc_destroy(hint);
      fwd.close();
      bwd.close();
    }
  }

  /**
   * Column sums of dense FP32 [rows, cols] into [1, cols] as the product ones[1, rows] · src:
   * arguments ones, src, dst. (oneDNN 2.5's reduction runs its reference implementation on AVX2,
   * about 15× slower than this product.)
   */
  NativePrimitive columnSums(long rows, long cols) {
    return matmul(Operand.dense(1, rows, dnnl_f32), Operand.dense(rows, cols, dnnl_f32),
        Operand.dense(1, cols, dnnl_f32), false, Activation.IDENTITY, false, 1f, 0f,
        "reduction.sum");
  }

  static int algorithm(Activation a) {
    switch (a) {
      case RELU:
        return dnnl_eltwise_relu;
      case GELU_TANH:
        return dnnl_eltwise_gelu_tanh;
      case GELU_ERF:
        return dnnl_eltwise_gelu_erf;
      case SILU:
        return dnnl_eltwise_swish;
      case IDENTITY:
        return dnnl_eltwise_linear;
      default:
        throw new AssertionError(a);
    }
  }
}
