package io.hyperframes.cli;

import io.hyperframes.catalog.Catalog;
import io.hyperframes.catalog.MachineProfile;
import java.nio.file.Path;
import picocli.CommandLine.Option;

/**
 * The catalog a command runs on: the built-in one, a user's overrides, a machine profile. As a
 * picocli mixin ({@code @Mixin Catalogs catalogs}) it is the {@code --catalog} and
 * {@code --profile} options of the commands that estimate and plan.
 */
final class Catalogs {

  @Option(names = "--catalog", paramLabel = "FILE",
      description = "User catalog file overriding or adding entries of the built-in catalog"
          + " (for example written by calibrate).")
  Path overrides;

  @Option(names = "--profile", paramLabel = "FILE",
      description = "Machine profile from hyperframes probe: adds this host as accelerator"
          + " 'host' (node template 'host-node') with its measured figures.")
  Path profile;

  /** The catalog the options name. */
  Catalog load() {
    return load(overrides, profile);
  }

  /** Whether neither option is given (the built-in catalog). */
  boolean builtIn() {
    return overrides == null && profile == null;
  }

  /**
   * The built-in catalog with the entries of {@code overrides} and then of {@code profile}
   * (either may be null): a profile adds its host as accelerator {@code host} (or the id it was
   * probed with) and node template {@code host-node}.
   */
  static Catalog load(Path overrides, Path profile) {
    Catalog c = Catalog.builtIn();
    if (overrides != null) {
      c = c.withOverrides(overrides);
    }
    if (profile != null) {
      c = MachineProfile.read(profile).applyTo(c);
    }
    return c;
  }
}
