package io.hyperframes.nd4j;

import com.google.common.base.Supplier;
import com.google.common.base.Suppliers;
import com.google.common.collect.ImmutableMap;
import io.hyperframes.spi.Backend;
import java.util.Map;
import java.util.TreeMap;
import org.nd4j.linalg.factory.Nd4j;

/**
 * The CPU kernel backend: oneDNN when it loads, ND4J otherwise. One instance per JVM, created on
 * first use ({@link #cpu()}); native code loads then, never at class initialisation.
 */
public final class Kernels implements Backend {

  private static final Supplier<Kernels> CPU = Suppliers.memoize(Kernels::new);

  private final DnnlKernels dnnl;
  private final String fallbackReason;
  private final Dnnl engine;
  private final OutputMemory memory = new OutputMemory();

  private Kernels() {
    this(Dnnl.availability());
  }

  private Kernels(Dnnl.Availability a) {
    this.engine = a.dnnl();
    this.dnnl = engine == null ? null : new DnnlKernels(engine);
    this.fallbackReason = a.reason();
  }

  /** The CPU backend of this JVM. */
  public static Kernels cpu() {
    return CPU.get();
  }

  /** A backend that always takes the ND4J path (tests of the fallback). */
  static Kernels fallbackOnly(String reason) {
    return new Kernels(new Dnnl.Availability(null, reason));
  }

  /** Memory for the arrays the kernels return (reused once they are unreachable). */
  OutputMemory memory() {
    return memory;
  }

  /**
   * Runs {@code body} with the kernels this thread calls on this thread alone (oneDNN's OpenMP
   * thread count for the thread set to 1, restored after) and on compiled plans of its own: for
   * a caller that runs independent kernels on several threads at once, one thread per core, such
   * as {@code FusedTransformer} running attention heads side by side. Without it each such thread
   * would start a team of OpenMP threads per call (more threads than cores), and threads running
   * the same shapes would wait for each other's plan. Without oneDNN it just runs {@code body}.
   * The count is set through ND4J's native library, which in the {@code linux-x86_64} builds
   * this project uses shares oneDNN's OpenMP runtime (one {@code libgomp} in the process): a
   * thread running 700 BF16 products of 512×256·256×512 inside it kept the process at 1.03
   * cores (process CPU time over wall time).
   *
   * @return what {@code body} returns
   */
  public <T> T onThisThreadOnly(java.util.function.Supplier<T> body) {
    if (body == null) {
      throw new IllegalArgumentException("body: must be given");
    }
    return dnnl == null ? body.get() : dnnl.onThisThreadOnly(body);
  }

  /** The oneDNN kernels, or null on the fallback path. */
  DnnlKernels dnnl() {
    return dnnl;
  }

  @Override
  public String name() {
    return dnnl != null ? "cpu-onednn" : "cpu-nd4j";
  }

  @Override
  public boolean accelerated() {
    return dnnl != null;
  }

  @Override
  public String fallbackReason() {
    return fallbackReason;
  }

  /** Whether BF16 runs on native instructions (avx512_bf16 or AMX) rather than emulated. */
  public boolean nativeBf16() {
    return engine != null && engine.bf16Native;
  }

  @Override
  public Map<String, String> capabilities() {
    Map<String, String> m = new TreeMap<>();
    m.put("backend", name());
    m.put("nd4j.backend", Nd4j.getBackend().getClass().getSimpleName());
    if (engine != null) {
      m.put("onednn.version", engine.version);
      m.put("onednn.isa", engine.isa);
      m.put("bf16.native", String.valueOf(engine.bf16Native));
      dnnl.implementations.forEach((k, v) -> m.put("impl." + k, v));
    } else {
      m.put("fallback.reason", fallbackReason);
    }
    return ImmutableMap.copyOf(m);
  }

  /** Implementation chosen for a primitive kind ("matmul.bf16"), or "nd4j" on the fallback. */
  public String implementation(String kind) {
    if (dnnl == null) {
      return "nd4j";
    }
    return dnnl.implementations.getOrDefault(kind, "not yet used");
  }

  /** Cached kernel plans (bounded by -Dhyperframes.kernels.cacheSize, default 256). */
  public long cachedPlans() {
    return dnnl == null ? 0 : dnnl.cachedPlans();
  }
}
