package io.hyperframes.validate;

import com.fasterxml.jackson.databind.node.ObjectNode;
import com.google.common.collect.ImmutableList;
import io.hyperframes.json.Json;

import java.util.List;

/** Results of a validation run, one row per compared figure. */
public record ValidationReport(List<CaseResult> cases) {
  public ValidationReport {
    cases = ImmutableList.copyOf(cases);
  }

  /** Mean of |relative error| over point comparisons (0 when none); bounds are not counted. */
  public double meanAbsRelativeError() {
    return cases.stream().filter(CaseResult::point).mapToDouble(c -> Math.abs(c.relativeError()))
        .average().orElse(0.0);
  }

  /** Max of |relative error| over point comparisons (0 when none). */
  public double maxAbsRelativeError() {
    return cases.stream().filter(CaseResult::point).mapToDouble(c -> Math.abs(c.relativeError()))
        .max().orElse(0.0);
  }

  /**
   * The report as JSON: {@code cases} (id, metric, expected, predicted, relativeError, bound,
   * boundMet, note) and the mean and maximum error (field names are a contract).
   */
  public ObjectNode toJson() {
    return Json.tree(ValidationJson.Validation.of(this));
  }

  /** Rows whose id starts with {@code prefix} and whose metric is {@code metric}. */
  public List<CaseResult> select(String prefix, String metric) {
    return cases.stream().filter(c -> c.id().startsWith(prefix) && c.metric().equals(metric))
        .collect(ImmutableList.toImmutableList());
  }
}
