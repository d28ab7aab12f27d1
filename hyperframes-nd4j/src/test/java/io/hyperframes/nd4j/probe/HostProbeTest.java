package io.hyperframes.nd4j.probe;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

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

  // The probe itself runs in hyperframes-examples' CliTest (probe --seconds 2): its large
  // arrays would disturb this module's resident-memory checks in the same JVM.
}
