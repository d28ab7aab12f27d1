package io.hyperframes;

import io.hyperframes.plan.TrainingEstimate;
import io.hyperframes.plan.TrainingEstimator;

/**
 * Entry point of the planner.
 *
 * <pre>{@code
 * EstimateRequest request = Requests.parse(Files.readString(Path.of("request.json")));
 * TrainingEstimate e = HyperFrames.estimate(request);
 * System.out.printf("%.2f s/step, MFU %.1f %%%n", e.stepSeconds(), 100 * e.mfu());
 * }</pre>
 */
public final class HyperFrames {
  private HyperFrames() {}

  private static final TrainingEstimator ESTIMATOR = TrainingEstimator.analytical();

  /**
   * Estimates one training layout with the analytical models; open layout fields are chosen by a
   * small search (see {@link TrainingEstimator#estimate}).
   *
   * @throws IllegalArgumentException naming the field and value when the request is inconsistent
   */
  public static TrainingEstimate estimate(EstimateRequest request) {
    return ESTIMATOR.estimate(request);
  }

  /** Parses a JSON request (see {@link Requests}) and estimates it. */
  public static TrainingEstimate estimate(String requestJson) {
    return estimate(Requests.parse(requestJson));
  }

  /** Library version from the jar manifest, or "dev" when run from classes. */
  public static String version() {
    String v = HyperFrames.class.getPackage().getImplementationVersion();
    return v == null ? "dev" : v;
  }
}
