package io.hyperframes;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.module.ModuleDescriptor;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/** The module exports the API packages and keeps the JSON, trace and quantile helpers internal. */
class ModuleDescriptorTest {

  @Test
  void exportsTheApiOnly() {
    Module m = HyperFrames.class.getModule();
    assertTrue(m.isNamed(), "tests run on the module path (module-info.java in main)");
    Set<String> exported = new TreeSet<>();
    for (ModuleDescriptor.Exports e : m.getDescriptor().exports()) {
      assertTrue(e.targets().isEmpty(), "unqualified exports only: " + e);
      exported.add(e.source());
    }
    Set<String> packages = new TreeSet<>(m.getDescriptor().packages());
    packages.remove("io.hyperframes.json");
    packages.remove("io.hyperframes.trace");
    packages.remove("io.hyperframes.stat");
    // resource folders: the test resources patched into the module (the catalog's data files
    // sit in io.hyperframes.catalog, an exported package with classes)
    packages.removeIf(p -> !p.startsWith("io.hyperframes"));
    assertEquals(packages, exported);
    assertTrue(!exported.contains("io.hyperframes.json"));
    assertTrue(!exported.contains("io.hyperframes.trace"));
    assertTrue(!exported.contains("io.hyperframes.stat"));
  }
}
