package io.hyperframes.cli;

import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * No package cycle among the packages of hyperframes-examples (the command line and the runnable examples), read from its compiled classes
 * (docs/ARCHITECTURE.md; hyperframes-core's layers are checked by its ArchitectureTest).
 */
class ModulePackagesTest {

  private static final JavaClasses MODULE = new ClassFileImporter()
      .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
      .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_JARS)
      .importPackages("io.hyperframes.cli", "io.hyperframes.examples");

  @Test
  void noPackageCycles() {
    long packages = MODULE.stream().map(JavaClass::getPackageName)
        .collect(Collectors.toSet()).size();
    assertTrue(packages >= 2, "packages imported: " + packages);
    slices().matching("io.hyperframes.(**)").should().beFreeOfCycles().check(MODULE);
  }
}
