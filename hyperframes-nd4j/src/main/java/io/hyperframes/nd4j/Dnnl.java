package io.hyperframes.nd4j;

import static org.bytedeco.dnnl.global.dnnl.*;

import com.google.common.base.Supplier;
import com.google.common.base.Suppliers;
import java.util.Locale;
import org.bytedeco.dnnl.dnnl_engine;
import org.bytedeco.dnnl.dnnl_primitive_desc;
import org.bytedeco.dnnl.dnnl_version_t;
import org.bytedeco.javacpp.BytePointer;
import org.bytedeco.javacpp.PointerPointer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The oneDNN CPU engine, loaded on first use. Holds the engine for the life of the JVM (oneDNN
 * engines are thread-safe and cheap to keep); reports version and ISA.
 */
final class Dnnl {

  private static final Logger LOG = LoggerFactory.getLogger(Dnnl.class);

  /** Loaded lazily: the native library loads on the first kernel call, never at class init. */
  private static final Supplier<Availability> AVAILABILITY = Suppliers.memoize(Dnnl::load);

  /** Whether oneDNN loaded, and the engine or the reason it did not. */
  record Availability(Dnnl dnnl, String reason) {}

  final dnnl_engine engine;
  final String version;
  final String isa;
  final boolean bf16Native;

  private Dnnl(dnnl_engine engine, String version, String isa, boolean bf16Native) {
    this.engine = engine;
    this.version = version;
    this.isa = isa;
    this.bf16Native = bf16Native;
  }

  static Availability availability() {
    return AVAILABILITY.get();
  }

  /** The engine; {@code IllegalStateException} with the reason when oneDNN is unavailable. */
  static Dnnl get() {
    Availability a = availability();
    if (a.dnnl() == null) {
      throw new IllegalStateException("oneDNN unavailable: " + a.reason());
    }
    return a.dnnl();
  }

  private static Availability load() {
    if (Boolean.getBoolean("hyperframes.onednn.disable")) {
      String why = "disabled by -Dhyperframes.onednn.disable=true";
      LOG.warn("oneDNN kernels off ({}); using the ND4J fallback", why);
      return new Availability(null, why);
    }
    try {
      dnnl_engine engine = new dnnl_engine();
      check(dnnl_engine_create(engine, dnnl_cpu, 0), "engine create");
      dnnl_version_t v = dnnl_version();
      String version = v.major() + "." + v.minor() + "." + v.patch();
      int isa = dnnl_get_effective_cpu_isa();
      boolean bf16 = isa == dnnl_cpu_isa_avx512_core_bf16 || isa == dnnl_cpu_isa_avx512_core_amx;
      String isaName = isaName(isa);
      if (!bf16) {
        LOG.warn("CPU ISA {} lacks avx512_bf16: BF16 inputs are widened to FP32 and computed in"
            + " FP32 (correct, without the BF16 speed-up)", isaName);
      }
      return new Availability(new Dnnl(engine, version, isaName, bf16), "");
    } catch (Throwable t) { // UnsatisfiedLinkError, NoClassDefFoundError, failed engine
      String why = t.getClass().getSimpleName() + ": " + t.getMessage();
      LOG.warn("oneDNN could not be loaded ({}); kernels fall back to ND4J", why);
      return new Availability(null, why);
    }
  }

  private static String isaName(int isa) {
    if (isa == dnnl_cpu_isa_avx512_core_amx) {
      return "avx512_core_amx";
    } else if (isa == dnnl_cpu_isa_avx512_core_bf16) {
      return "avx512_core_bf16";
    } else if (isa == dnnl_cpu_isa_avx512_core_vnni) {
      return "avx512_core_vnni";
    } else if (isa == dnnl_cpu_isa_avx512_core) {
      return "avx512_core";
    } else if (isa == dnnl_cpu_isa_avx2_vnni) {
      return "avx2_vnni";
    } else if (isa == dnnl_cpu_isa_avx2) {
      return "avx2";
    } else if (isa == dnnl_cpu_isa_avx) {
      return "avx";
    } else if (isa == dnnl_cpu_isa_sse41) {
      return "sse41";
    }
    return String.format(Locale.ROOT, "isa-0x%x", isa);
  }

  /** Throws {@link IllegalStateException} naming the call when oneDNN reports an error. */
  static void check(int status, String what) {
    if (status != dnnl_success) {
      throw new IllegalStateException("oneDNN " + what + " failed with status " + status);
    }
  }

  /** The implementation oneDNN chose for a primitive ("brg:avx512_core_bf16"). */
  static String implementation(dnnl_primitive_desc pd) {
    PointerPointer<BytePointer> out = new PointerPointer<>(1);
    try {
      check(dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, out), "impl query");
      BytePointer s = out.get(BytePointer.class, 0);
      return s == null ? "unknown" : s.getString();
    } finally {
      out.close();
    }
  }
}
