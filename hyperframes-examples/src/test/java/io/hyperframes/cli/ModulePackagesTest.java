package io.hyperframes.cli;

import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * No package cycle among the packages of hyperframes-examples (the command line and the runnable
 * examples), read from its compiled classes (docs/ARCHITECTURE.md; hyperframes-core's layers are
 * checked by its ArchitectureTest); and the size indicator over every module's sources, which
 * this module, built last, reads from the checkout beside it.
 */
class ModulePackagesTest {

  private static final JavaClasses MODULE = new ClassFileImporter()
      .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
      .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_JARS)
      .importPackages("io.hyperframes.cli", "io.hyperframes.examples");

  /** The size indicator of docs/ARCHITECTURE.md: no main source file of a module reaches 700. */
  @Test
  void noMainSourceFileOfAnyModuleReaches700Lines() throws IOException {
    List<Path> modules;
    try (Stream<Path> dirs = Files.list(Path.of(".."))) {
      modules = dirs.filter(d -> d.getFileName().toString().startsWith("hyperframes-"))
          .map(d -> d.resolve("src/main/java")).filter(Files::isDirectory).sorted().toList();
    }
    assertTrue(modules.size() >= 5, "modules found beside this one: " + modules);
    List<String> large;
    try (Stream<Path> files = modules.stream().flatMap(ModulePackagesTest::walk)) {
      large = files.filter(f -> f.toString().endsWith(".java"))
          .map(f -> Map.entry(f.normalize(), lines(f))).filter(e -> e.getValue() >= 700)
          .map(e -> e.getKey() + " (" + e.getValue() + " lines)").sorted().toList();
    }
    assertEquals(List.of(), large, "split these by concern (docs/ARCHITECTURE.md)");
  }

  private static Stream<Path> walk(Path dir) {
    try {
      return Files.walk(dir);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static long lines(Path file) {
    try {
      return Files.readAllLines(file).size();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  @Test
  void noPackageCycles() {
    long packages = MODULE.stream().map(JavaClass::getPackageName)
        .collect(Collectors.toSet()).size();
    assertTrue(packages >= 2, "packages imported: " + packages);
    slices().matching("io.hyperframes.(**)").should().beFreeOfCycles().check(MODULE);
  }
}
