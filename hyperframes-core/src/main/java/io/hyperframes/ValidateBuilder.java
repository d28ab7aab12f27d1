package io.hyperframes;

import io.hyperframes.catalog.Catalog;
import io.hyperframes.validate.ValidationReport;
import io.hyperframes.validate.Validator;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The models against measured cases ({@link HyperFrames#validate()}; case format of
 * {@code published-runs.json}).
 *
 * <pre>{@code
 * ValidationReport r = HyperFrames.validate().cases(Path.of("my-runs.json")).run();
 * r.meanAbsRelativeError();
 * }</pre>
 */
public final class ValidateBuilder {

  private final String cases;
  private final Catalog catalog;
  private final Models models;

  ValidateBuilder(String cases, Catalog catalog, Models models) {
    this.cases = cases;
    this.catalog = catalog;
    this.models = models;
  }

  /** The cases from a file. */
  public ValidateBuilder cases(Path file) {
    if (file == null) {
      throw new IllegalArgumentException("cases: file must be given");
    }
    try {
      return cases(Files.readString(file, StandardCharsets.UTF_8));
    } catch (IOException e) {
      throw new IllegalArgumentException("cases: cannot read " + file + ": " + e.getMessage(), e);
    }
  }

  /** The cases as a JSON document ({@code {"cases": [...]}}). */
  public ValidateBuilder cases(String json) {
    if (json == null) {
      throw new IllegalArgumentException("cases: must be given");
    }
    if (cases != null) {
      throw new IllegalStateException("cases: already set");
    }
    return new ValidateBuilder(json, catalog, models);
  }

  /** The catalog (default {@link Catalog#builtIn()}), for example a calibrated one. */
  public ValidateBuilder catalog(Catalog c) {
    if (c == null) {
      throw new IllegalArgumentException("catalog: must be given");
    }
    if (catalog != null) {
      throw new IllegalStateException("catalog: already set to version " + catalog.version());
    }
    return new ValidateBuilder(cases, c, models);
  }

  /** The models to validate (default {@link Models#analytical()}). */
  public ValidateBuilder models(Models m) {
    if (m == null) {
      throw new IllegalArgumentException("models: must be given");
    }
    if (models != null) {
      throw new IllegalStateException("models: already set to " + models);
    }
    return new ValidateBuilder(cases, catalog, m);
  }

  /**
   * Runs every case.
   *
   * @throws IllegalArgumentException when no cases were given or a case is malformed
   */
  public ValidationReport run() {
    if (cases == null) {
      throw new IllegalArgumentException("cases: must be given (a file or a JSON document)");
    }
    Models m = models == null ? Models.analytical() : models;
    return Validator.of(catalog == null ? Catalog.builtIn() : catalog, m.trainingEstimator(),
        m.inferenceEstimator(), m.interconnect()).run(cases);
  }
}
