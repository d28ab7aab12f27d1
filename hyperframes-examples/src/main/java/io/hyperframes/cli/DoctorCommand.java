package io.hyperframes.cli;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.hyperframes.json.Json;
import io.hyperframes.nd4j.Kernels;
import io.hyperframes.nd4j.Matmul;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import org.nd4j.linalg.factory.Nd4j;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code hyperframes doctor}: is this machine ready to run the library, and what to fix. Each
 * check passes, warns or fails with its evidence and remedy; the exit status is 1 when a check
 * fails. The facts come through {@link Probe}, so that each failure path can be tested with an
 * injected fault.
 */
@Command(name = "doctor", mixinStandardHelpOptions = true,
    description = "Check this machine: Java, ND4J backend, oneDNN and its ISA, threads against"
        + " cores, host memory, /dev/shm, open-file limit, and a computation with a known"
        + " answer; exits 1 when a check fails.")
final class DoctorCommand implements Callable<Integer> {

  /** A check's verdict. */
  enum Status { PASS, WARN, FAIL }

  /** One check: name, verdict, what was found, what to do. */
  record Check(String name, Status status, String evidence, String remedy) {}

  /** Minimum open files: prefetching loaders, checkpoints and NCCL-like runtimes open many. */
  static final long MIN_OPEN_FILES = 4096;
  /** Minimum /dev/shm: loader workers share batches through it (container default 64 MB). */
  static final long MIN_SHM_BYTES = 1L << 30;
  /** Minimum available host memory for the examples and benchmarks. */
  static final long MIN_MEMORY_BYTES = 4L << 30;

  /** The facts the checks judge; {@link #host()} reads this machine. */
  interface Probe {
    int javaFeature();

    /** ND4J's backend and oneDNN's capabilities ({@link Kernels#capabilities()}). */
    Map<String, String> capabilities();

    int cores();

    /** OMP_NUM_THREADS, or null when unset. */
    String ompThreads();

    /** Bytes of /dev/shm, or -1 where there is none. */
    long shmBytes();

    /** The soft open-file limit, or -1 when unknown. */
    long openFiles();

    /** MemAvailable from /proc/meminfo, or -1 when unknown. */
    long memoryAvailableBytes();

    /** [[1, 2], [3, 4]] · [[5, 6], [7, 8]] through the library's matmul, row-major. */
    float[] knownProduct();
  }

  @Spec CommandSpec spec;

  @Mixin FormatOption format;

  /** The probe the command uses; tests replace it. */
  Probe probe = host();

  @Override
  public Integer call() throws Exception {
    List<Check> checks = checks(probe);
    var out = spec.commandLine().getOut();
    if (format.json()) {
      ObjectNode root = Json.mapper().createObjectNode();
      ArrayNode a = root.putArray("checks");
      for (Check c : checks) {
        ObjectNode o = a.addObject();
        o.put("name", c.name());
        o.put("status", c.status().name().toLowerCase(Locale.ROOT));
        o.put("evidence", c.evidence());
        o.put("remedy", c.remedy());
      }
      out.println(Json.mapper().writerWithDefaultPrettyPrinter().writeValueAsString(root));
    } else {
      for (Check c : checks) {
        out.printf(Locale.ROOT, "[%s] %-14s %s%n", c.status().name().toLowerCase(Locale.ROOT),
            c.name(), c.evidence());
        if (c.status() != Status.PASS) {
          out.printf(Locale.ROOT, "       %-14s remedy: %s%n", "", c.remedy());
        }
      }
    }
    out.flush();
    return checks.stream().anyMatch(c -> c.status() == Status.FAIL) ? 1 : 0;
  }

  /** Every check, judged on {@code p}. */
  static List<Check> checks(Probe p) {
    List<Check> out = new ArrayList<>();
    int feature = p.javaFeature();
    out.add(new Check("java", feature >= 17 ? Status.PASS : Status.FAIL, "Java " + feature,
        "run on Java 17 or later"));
    Map<String, String> caps;
    try {
      caps = p.capabilities();
    } catch (RuntimeException | LinkageError e) {
      caps = null;
      out.add(new Check("nd4j", Status.FAIL, "ND4J does not load: " + e,
          "put nd4j-native with the linux-x86_64 classifier (and openblas) on the class path"));
    }
    if (caps != null) {
      out.add(new Check("nd4j", Status.PASS, "backend " + caps.get("nd4j.backend"),
          "none"));
      String isa = caps.get("onednn.isa");
      if (isa == null) {
        out.add(new Check("onednn", Status.WARN, "no oneDNN: " + caps.get("fallback.reason"),
            "add org.bytedeco:dnnl:2.5.2-1.5.7 with the linux-x86_64 classifier; the fused"
                + " kernels fall back to ND4J"));
      } else {
        boolean bf16 = Boolean.parseBoolean(caps.get("bf16.native"));
        out.add(new Check("onednn", bf16 ? Status.PASS : Status.WARN, "oneDNN "
            + caps.get("onednn.version") + ", ISA " + isa + ", BF16 " + (bf16 ? "native"
            : "widened to FP32"), "BF16 runs at FP32 speed here; use FP32 kernels or a CPU"
            + " with avx512_bf16 or AMX"));
      }
    }
    int cores = p.cores();
    String omp = p.ompThreads();
    Status threads = Status.PASS;
    String threadEvidence = cores + " cores, OMP_NUM_THREADS " + (omp == null ? "unset" : omp);
    if (omp != null) {
      try {
        int n = Integer.parseInt(omp.trim());
        if (n > cores) {
          threads = Status.WARN;
          threadEvidence += ": more threads than cores";
        }
      } catch (NumberFormatException e) {
        threads = Status.WARN;
        threadEvidence += ": not a number";
      }
    }
    out.add(new Check("threads", threads, threadEvidence,
        "set OMP_NUM_THREADS to at most the cores (or leave it unset); oversubscribed OpenMP"
            + " threads make step times jitter"));
    long mem = p.memoryAvailableBytes();
    out.add(new Check("memory", mem < 0 ? Status.WARN : mem >= MIN_MEMORY_BYTES ? Status.PASS
        : Status.WARN, mem < 0 ? "available memory unknown" : gib(mem) + " available",
        "free at least 4 GiB of host memory for the examples and benchmarks"));
    long shm = p.shmBytes();
    out.add(new Check("shm", shm >= MIN_SHM_BYTES ? Status.PASS : Status.WARN,
        shm < 0 ? "no /dev/shm" : "/dev/shm " + gib(shm),
        "give /dev/shm at least 1 GiB (docker --shm-size, or a memory-backed emptyDir in"
            + " Kubernetes): loader workers exchange batches through it"));
    long files = p.openFiles();
    out.add(new Check("open-files", files < 0 ? Status.WARN : files >= MIN_OPEN_FILES
        ? Status.PASS : Status.WARN, files < 0 ? "open-file limit unknown"
        : "open-file limit " + files, "raise it to at least 4096 (ulimit -n, or LimitNOFILE)"));
    float[] product;
    try {
      product = p.knownProduct();
    } catch (RuntimeException | LinkageError e) {
      product = null;
    }
    float[] expected = {19, 22, 43, 50};
    boolean right = product != null && java.util.Arrays.equals(product, expected);
    out.add(new Check("known-answer", right ? Status.PASS : Status.FAIL,
        "[[1,2],[3,4]]·[[5,6],[7,8]] = " + (product == null ? "(failed)"
            : java.util.Arrays.toString(product)) + (right ? "" : ", expected "
            + java.util.Arrays.toString(expected)),
        "the native libraries compute wrong results: check the ND4J and oneDNN versions"
            + " (docs/user-guide.md) and the CPU flags"));
    return out;
  }

  private static String gib(long bytes) {
    return String.format(Locale.ROOT, "%.1f GiB", bytes / (double) (1L << 30));
  }

  /** This machine. */
  static Probe host() {
    return new Probe() {
      @Override
      public int javaFeature() {
        return Runtime.version().feature();
      }

      @Override
      public Map<String, String> capabilities() {
        return Kernels.cpu().capabilities();
      }

      @Override
      public int cores() {
        return Runtime.getRuntime().availableProcessors();
      }

      @Override
      public String ompThreads() {
        return System.getenv("OMP_NUM_THREADS");
      }

      @Override
      public long shmBytes() {
        try {
          Path shm = Path.of("/dev/shm");
          return Files.isDirectory(shm) ? Files.getFileStore(shm).getTotalSpace() : -1;
        } catch (IOException e) {
          return -1;
        }
      }

      @Override
      public long openFiles() {
        return procValue(Path.of("/proc/self/limits"), "Max open files", 1, 1);
      }

      @Override
      public long memoryAvailableBytes() {
        return procValue(Path.of("/proc/meminfo"), "MemAvailable:", 1, 1024);
      }

      @Override
      public float[] knownProduct() {
        return Matmul.multiply(Nd4j.createFromArray(new float[][] {{1, 2}, {3, 4}}),
            Nd4j.createFromArray(new float[][] {{5, 6}, {7, 8}})).data().asFloat();
      }
    };
  }

  /** The number in column {@code column} of the first line starting with {@code key}, × scale. */
  static long procValue(Path file, String key, int column, long scale) {
    try {
      for (String line : Files.readAllLines(file, StandardCharsets.UTF_8)) {
        if (line.startsWith(key)) {
          String[] f = line.trim().split("\\s+");
          int index = key.split("\\s+").length - 1 + column;
          return index < f.length ? Long.parseLong(f[index]) * scale : -1;
        }
      }
    } catch (IOException | NumberFormatException e) {
      return -1;
    }
    return -1;
  }
}
