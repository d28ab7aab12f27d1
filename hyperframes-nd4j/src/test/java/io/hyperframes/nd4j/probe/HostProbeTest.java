package io.hyperframes.nd4j.probe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.hyperframes.hardware.MachineProfile;
import io.hyperframes.precision.NumberFormat;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class HostProbeTest {

  @Test
  void badArgumentsNameTheField() {
    assertTrue(assertThrows(IllegalArgumentException.class,
        () -> HostProbe.of("host", 1, s -> { })).getMessage().contains("budget"));
    assertTrue(assertThrows(IllegalArgumentException.class,
        () -> HostProbe.of("Host!", 10, s -> { })).getMessage().contains("'Host!'"));
    assertTrue(assertThrows(IllegalArgumentException.class,
        () -> HostProbe.of("host", 10, null)).getMessage().contains("progress"));
  }

  @Test
  void aShortProbeMeasuresEveryKindAndFitsBothFormats() throws Exception {
    List<String> steps = new ArrayList<>();
    MachineProfile p = HostProbe.of("probe-test", 2, steps::add).run();
    assertEquals("probe-test", p.acceleratorId());
    assertEquals("probe-test-node", p.nodeId());
    for (NumberFormat f : List.of(NumberFormat.BF16, NumberFormat.FP32)) {
      double peak = p.accelerator().peakFlops(f);
      assertTrue(peak > 1e8 && peak < 1e15, f + " peak " + peak);
    }
    assertTrue(p.accelerator().memoryBandwidthBytesPerSecond() > 1e8);
    assertEquals(HostProbe.MATMUL_SHAPES.length * 2 + HostProbe.LAYERS.length * 2 * 2 + 2 + 2,
        p.measurements().size(), p.measurements().toString());
    assertTrue(steps.stream().anyMatch(s -> s.startsWith("loader")), steps.toString());
    assertTrue(p.conditions().containsKey("kernels.onednn.isa")
        || p.conditions().containsKey("backend"), p.conditions().toString());
  }
}
