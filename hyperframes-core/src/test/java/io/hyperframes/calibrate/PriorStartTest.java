package io.hyperframes.calibrate;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.hyperframes.catalog.Catalog;
import io.hyperframes.hardware.KernelEfficiency;
import io.hyperframes.precision.NumberFormat;
import java.util.EnumSet;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The start of a leave-one-source-out refit that keeps the kernel priors: the refitted constants
 * are the accelerators' own, every other field of a generation's entry is the shipped one, and
 * the engine-scoped entries are left for the refit to make.
 */
class PriorStartTest {

  private static final EnumSet<Calibration.Constant> REFIT = EnumSet.of(
      Calibration.Constant.MATMUL_HALF_DIM, Calibration.Constant.ELEMENTWISE_BANDWIDTH);

  @Test
  void theRefittedConstantsAreResetAndThePriorsKept() {
    Catalog shipped = Catalog.builtIn();
    Catalog start = PriorStart.of(shipped, REFIT);
    Catalog bare = shipped.withoutKernels();
    int entries = 0;
    for (Map.Entry<String, Map<NumberFormat, KernelEfficiency>> e : shipped.kernels().entrySet()) {
      if (e.getKey().contains("@")) {
        assertFalse(start.kernels().containsKey(e.getKey()), "scoped entry " + e.getKey());
        continue;
      }
      for (Map.Entry<NumberFormat, KernelEfficiency> k : e.getValue().entrySet()) {
        KernelEfficiency kept = start.kernels().get(e.getKey()).get(k.getKey());
        KernelEfficiency own = bare.accelerators().values().stream()
            .filter(a -> a.generation().equals(e.getKey()) && a.supports(k.getKey()))
            .findFirst().orElseThrow().kernel(k.getKey());
        String where = e.getKey() + "/" + k.getKey().id();
        assertEquals(own.halfDim(), kept.halfDim(), where);
        assertEquals(own.elementwiseBandwidthFraction(), kept.elementwiseBandwidthFraction(),
            where);
        assertEquals(k.getValue().attention(), kept.attention(), where);
        assertEquals(k.getValue().matmul(), kept.matmul(), where);
        entries++;
      }
    }
    assertTrue(entries > 0);
    // Hopper's fused-attention prior is kept where the bare start has none.
    assertTrue(start.kernels().get("hopper").get(NumberFormat.BF16).attention() > 0);
  }

  @Test
  void resettingNothingKeepsTheEntry() {
    KernelEfficiency k = Catalog.builtIn().kernels().get("hopper").get(NumberFormat.BF16);
    KernelEfficiency prior = k.withHalfDim(1.0).withAttention(0.1);
    assertEquals(k, PriorStart.reset(k, prior, EnumSet.noneOf(Calibration.Constant.class)));
    assertEquals(1.0, PriorStart.reset(k, prior, REFIT).halfDim());
    assertEquals(k.attention(), PriorStart.reset(k, prior, REFIT).attention());
  }
}
