package io.hyperframes.spi;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.ServiceLoader;

/** Selects a backend among the providers on the class path. */
public final class Backends {
  private Backends() {}

  /** System property naming the provider to use, overriding priorities. */
  public static final String PROPERTY = "hyperframes.backend";

  /** Providers found on the class path, highest priority first. */
  public static List<BackendProvider> providers() {
    List<BackendProvider> out = new ArrayList<>();
    ServiceLoader.load(BackendProvider.class).forEach(out::add);
    out.sort(Comparator.comparingInt(BackendProvider::priority).reversed());
    return out;
  }

  /**
   * The selected backend: the provider named by {@value #PROPERTY}, else the highest priority.
   *
   * @throws IllegalStateException when no provider is on the class path (naming the artifact to
   *     add) or the named one is missing
   */
  public static Backend load() {
    List<BackendProvider> all = providers();
    String wanted = System.getProperty(PROPERTY);
    if (wanted != null && !wanted.isBlank()) {
      for (BackendProvider p : all) {
        if (p.name().equals(wanted)) {
          return p.create();
        }
      }
      throw new IllegalStateException(PROPERTY + "=" + wanted + ": no such backend provider"
          + " (found " + all.stream().map(BackendProvider::name).toList() + ")");
    }
    if (all.isEmpty()) {
      throw new IllegalStateException("no HyperFrames backend on the class path: add the"
          + " io.hyperframes:hyperframes-nd4j artifact");
    }
    return all.get(0).create();
  }
}
