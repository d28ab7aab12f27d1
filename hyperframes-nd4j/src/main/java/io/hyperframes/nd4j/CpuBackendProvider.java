package io.hyperframes.nd4j;

import io.hyperframes.spi.Backend;
import io.hyperframes.spi.BackendProvider;

/** Registers the CPU backend (ND4J + oneDNN) with the core SPI. */
public final class CpuBackendProvider implements BackendProvider {

  @Override
  public String name() {
    return "cpu";
  }

  @Override
  public int priority() {
    return 10;
  }

  @Override
  public Backend create() {
    return Kernels.cpu();
  }
}
