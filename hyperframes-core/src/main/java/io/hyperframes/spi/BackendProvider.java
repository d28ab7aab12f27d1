package io.hyperframes.spi;

/**
 * Finds a runtime backend through {@link java.util.ServiceLoader}. Implementations are cheap to
 * construct and side-effect free; native code loads only in {@link #create()}.
 */
public interface BackendProvider {

  /** Name the {@code hyperframes.backend} system property selects this provider by. */
  String name();

  /** Higher wins when no provider is selected explicitly. */
  int priority();

  /** Creates the backend (may load native libraries). */
  Backend create();
}
