package io.hyperframes.validate;

/**
 * One compared figure of one validation case.
 *
 * @param id case id
 * @param metric name of the compared figure (as in the case's {@code expected})
 * @param expected published value
 * @param predicted HyperFrames' value (NaN when the case is skipped)
 * @param relativeError (predicted - expected) / expected (NaN when skipped)
 * @param note why a case is skipped or how the metric is mapped; empty otherwise
 * @param bound "point" when the published figure is a measurement of the same layout;
 *     "atLeast" / "atMost" when the case is a search whose published figure a good plan must
 *     reach (throughput at least, device-hours at most)
 */
public record CaseResult(String id, String metric, double expected, double predicted,
    double relativeError, String note, String bound) {

  /** Whether the figure was compared (not skipped). */
  public boolean compared() {
    return !Double.isNaN(relativeError);
  }

  /** Whether this is a point comparison (counted in the error statistics). */
  public boolean point() {
    return compared() && bound.equals("point");
  }

  /** For a bound: whether the prediction satisfies it; for a point: always true. */
  public boolean boundMet() {
    return switch (bound) {
      case "atLeast" -> predicted >= expected;
      case "atMost" -> predicted <= expected;
      default -> true;
    };
  }
}
