package io.hyperframes.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.hyperframes.cli.DoctorCommand.Check;
import io.hyperframes.cli.DoctorCommand.Probe;
import io.hyperframes.cli.DoctorCommand.Status;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/** {@code hyperframes doctor}: healthy here, and every failure path with an injected fault. */
class DoctorTest {

  /** A healthy machine, as a probe whose facts a test can change one at a time. */
  record Facts(int java, Map<String, String> caps, RuntimeException capsError, int cores,
      String omp, long shm, long files, long memory, float[] product) implements Probe {
    static Facts healthy() {
      return new Facts(17, Map.of("nd4j.backend", "CpuBackend", "onednn.version", "2.5.2",
          "onednn.isa", "avx512_core_bf16", "bf16.native", "true"), null, 8, null, 8L << 30,
          65536, 16L << 30, new float[] {19, 22, 43, 50});
    }

    @Override
    public int javaFeature() {
      return java;
    }

    @Override
    public Map<String, String> capabilities() {
      if (capsError != null) {
        throw capsError;
      }
      return caps;
    }

    @Override
    public int cores() {
      return cores;
    }

    @Override
    public String ompThreads() {
      return omp;
    }

    @Override
    public long shmBytes() {
      return shm;
    }

    @Override
    public long openFiles() {
      return files;
    }

    @Override
    public long memoryAvailableBytes() {
      return memory;
    }

    @Override
    public float[] knownProduct() {
      return product;
    }
  }

  private static Status status(Probe p, String name) {
    return DoctorCommand.checks(p).stream().filter(c -> c.name().equals(name)).findFirst()
        .orElseThrow().status();
  }

  private static int run(Probe p, StringWriter out) {
    DoctorCommand command = new DoctorCommand();
    command.probe = p;
    CommandLine cl = new CommandLine(command);
    cl.setOut(new PrintWriter(out, true));
    return cl.execute();
  }

  @Test
  void thisMachineIsHealthy() {
    StringWriter out = new StringWriter();
    assertEquals(0, run(DoctorCommand.host(), out), out.toString());
    assertTrue(out.toString().contains("[pass] known-answer"), out.toString());
  }

  @Test
  void everyFaultIsReportedWithItsRemedy() {
    Facts h = Facts.healthy();
    List<Object[]> faults = List.of(
        new Object[] {"java", new Facts(11, h.caps(), null, 8, null, h.shm(), h.files(),
            h.memory(), h.product()), Status.FAIL},
        new Object[] {"nd4j", new Facts(17, null, new UnsatisfiedLinkErrorLike(), 8, null,
            h.shm(), h.files(), h.memory(), h.product()), Status.FAIL},
        new Object[] {"onednn", new Facts(17, Map.of("nd4j.backend", "CpuBackend",
            "onednn.version", "2.5.2", "onednn.isa", "avx2", "bf16.native", "false"), null, 8,
            null, h.shm(), h.files(), h.memory(), h.product()), Status.WARN},
        new Object[] {"threads", new Facts(17, h.caps(), null, 2, "16", h.shm(), h.files(),
            h.memory(), h.product()), Status.WARN},
        new Object[] {"memory", new Facts(17, h.caps(), null, 8, null, h.shm(), h.files(),
            1L << 30, h.product()), Status.WARN},
        new Object[] {"shm", new Facts(17, h.caps(), null, 8, null, 64L << 20, h.files(),
            h.memory(), h.product()), Status.WARN},
        new Object[] {"open-files", new Facts(17, h.caps(), null, 8, null, h.shm(), 1024,
            h.memory(), h.product()), Status.WARN},
        new Object[] {"known-answer", new Facts(17, h.caps(), null, 8, null, h.shm(), h.files(),
            h.memory(), new float[] {19, 22, 43, 49}), Status.FAIL});
    for (Check c : DoctorCommand.checks(h)) {
      assertEquals(Status.PASS, c.status(), c.toString());
    }
    for (Object[] f : faults) {
      String name = (String) f[0];
      Probe p = (Probe) f[1];
      assertEquals(f[2], status(p, name), name);
      // Only the faulty check changes.
      for (Check c : DoctorCommand.checks(p)) {
        if (!c.name().equals(name)) {
          assertEquals(Status.PASS, c.status(), name + " fault also moved " + c);
        }
      }
      StringWriter out = new StringWriter();
      int exit = run(p, out);
      assertEquals(f[2] == Status.FAIL ? 1 : 0, exit, name + ": " + out);
      Check check = DoctorCommand.checks(p).stream().filter(c -> c.name().equals(name))
          .findFirst().orElseThrow();
      assertTrue(out.toString().contains("remedy: " + check.remedy()), out.toString());
    }
  }

  /** What a missing native library looks like from ND4J's loader. */
  static final class UnsatisfiedLinkErrorLike extends RuntimeException {
    private static final long serialVersionUID = 1L;

    UnsatisfiedLinkErrorLike() {
      super("no jnind4jcpu in java.library.path");
    }
  }

}
