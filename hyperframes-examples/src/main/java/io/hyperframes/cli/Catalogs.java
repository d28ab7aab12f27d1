package io.hyperframes.cli;

import io.hyperframes.catalog.Catalog;
import io.hyperframes.catalog.MachineProfile;
import java.nio.file.Path;

/** The catalog a command runs on: the built-in one, a user's overrides, a machine profile. */
final class Catalogs {
  private Catalogs() {}

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
