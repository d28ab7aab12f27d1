package io.hyperframes.validate;

import com.fasterxml.jackson.annotation.JsonInclude;
import java.util.List;

/**
 * The validation report document of docs/user-guide.md, as records written by Jackson. Field
 * names are a contract read by other programs: add, never rename.
 */
public final class ValidationJson {
  private ValidationJson() {}

  /** A validation report: every compared figure, then the mean and maximum error. */
  public record Validation(List<ValidationCase> cases, double meanAbsRelativeError,
      double maxAbsRelativeError) {

    /** The document of {@code report}. */
    public static Validation of(ValidationReport report) {
      return new Validation(report.cases().stream().map(c -> new ValidationCase(c.id(),
          c.metric(), c.expected(), c.compared() ? c.predicted() : null,
          c.compared() ? c.relativeError() : null, c.bound(),
          c.bound().equals("point") ? null : c.boundMet(), c.note())).toList(),
          report.meanAbsRelativeError(), report.maxAbsRelativeError());
    }
  }

  /**
   * One figure: {@code predicted} and {@code relativeError} are {@code null} when the figure
   * was not compared; {@code boundMet} is present for bounds other than "point".
   */
  public record ValidationCase(String id, String metric, double expected,
      @JsonInclude(JsonInclude.Include.ALWAYS) Double predicted,
      @JsonInclude(JsonInclude.Include.ALWAYS) Double relativeError, String bound,
      Boolean boundMet, String note) {}
}
