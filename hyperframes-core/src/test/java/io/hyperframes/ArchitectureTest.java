package io.hyperframes;

import static com.tngtech.archunit.library.Architectures.layeredArchitecture;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.library.Architectures.LayeredArchitecture;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * The layers of docs/ARCHITECTURE.md, read from the compiled classes of hyperframes-core: no
 * package cycle, no arrow from a lower layer to a higher one, and no package outside the layers.
 */
class ArchitectureTest {

  /** The layers, bottom first, each with its packages (exact names, no subpackages). */
  static final Map<String, List<String>> LAYERS = layers();

  private static final JavaClasses CORE = new ClassFileImporter()
      .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
      .importPackages("io.hyperframes");

  private static Map<String, List<String>> layers() {
    Map<String, List<String>> m = new LinkedHashMap<>();
    m.put("Foundation", List.of("json", "trace", "diagnose", "spi", "stat"));
    m.put("Runtime", List.of("runtime"));
    m.put("Vocabulary", List.of("precision", "hardware", "model", "parallel", "workload"));
    m.put("Models", List.of("precision.model", "interconnect", "memory"));
    m.put("Catalog", List.of("catalog", "request"));
    m.put("Estimators", List.of("plan", "inference"));
    m.put("Evidence", List.of("validate", "calibrate"));
    m.put("Outputs", List.of("launch", "report"));
    m.put("Scheduling", List.of("schedule"));
    m.put("FrontDoor", List.of(""));
    return m;
  }

  private static String[] packages(String layer) {
    return LAYERS.get(layer).stream()
        .map(p -> p.isEmpty() ? "io.hyperframes" : "io.hyperframes." + p)
        .toArray(String[]::new);
  }

  @Test
  void everyPackageIsInALayerAndEveryLayerHasClasses() {
    Set<String> inLayers = LAYERS.values().stream().flatMap(List::stream)
        .map(p -> p.isEmpty() ? "io.hyperframes" : "io.hyperframes." + p)
        .collect(Collectors.toSet());
    Set<String> found = CORE.stream().map(JavaClass::getPackageName)
        .collect(Collectors.toCollection(TreeSet::new));
    Set<String> outside = new TreeSet<>(found);
    outside.removeAll(inLayers);
    assertEquals(Set.of(), outside,
        "packages in no layer: add them to docs/ARCHITECTURE.md and to LAYERS");
    Set<String> empty = new TreeSet<>(inLayers);
    empty.removeAll(found);
    assertEquals(Set.of(), empty, "layer packages with no classes");
    assertTrue(CORE.size() > 300, "classes imported: " + CORE.size());
  }

  /** The size indicator of docs/ARCHITECTURE.md: no source file of core reaches 700 lines. */
  @Test
  void noSourceFileOfCoreReaches700Lines() throws IOException {
    List<String> large;
    try (var files = Files.walk(Path.of("src", "main", "java"))) {
      large = files.filter(f -> f.toString().endsWith(".java")).filter(f -> {
        try {
          return Files.readAllLines(f).size() >= 700;
        } catch (IOException e) {
          throw new java.io.UncheckedIOException(e);
        }
      }).map(Path::toString).sorted().toList();
    }
    assertEquals(List.of(), large, "split these by concern (docs/ARCHITECTURE.md)");
  }

  @Test
  void noPackageCycles() {
    slices().matching("io.hyperframes.(**)").should().beFreeOfCycles().check(CORE);
  }

  @Test
  void arrowsPointDown() {
    LayeredArchitecture rule = layeredArchitecture().consideringOnlyDependenciesInLayers();
    for (String layer : LAYERS.keySet()) {
      rule = rule.layer(layer).definedBy(packages(layer));
    }
    rule
        .whereLayer("Foundation").mayNotAccessAnyLayer()
        .whereLayer("Runtime").mayOnlyAccessLayers("Foundation")
        .whereLayer("Vocabulary").mayOnlyAccessLayers("Foundation")
        .whereLayer("Models").mayOnlyAccessLayers("Vocabulary", "Foundation")
        .whereLayer("Catalog").mayOnlyAccessLayers("Vocabulary", "Foundation")
        .whereLayer("Estimators").mayOnlyAccessLayers("Catalog", "Models", "Vocabulary",
            "Foundation")
        .whereLayer("Evidence").mayOnlyAccessLayers("Estimators", "Catalog", "Models",
            "Vocabulary", "Foundation")
        .whereLayer("Outputs").mayOnlyAccessLayers("Evidence", "Estimators", "Catalog",
            "Models", "Vocabulary", "Runtime", "Foundation")
        .whereLayer("Scheduling").mayOnlyAccessLayers("Outputs", "Evidence", "Estimators",
            "Catalog", "Models", "Vocabulary", "Runtime", "Foundation")
        .whereLayer("FrontDoor").mayNotBeAccessedByAnyLayer()
        .check(CORE);
  }
}
