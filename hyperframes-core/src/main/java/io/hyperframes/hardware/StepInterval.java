package io.hyperframes.hardware;

import static com.google.common.base.Preconditions.checkArgument;

/**
 * The uncertainty of a predicted step time in one regime (accelerator generation × kind of
 * parallelism): the range of measured / predicted step time over held-out published runs, from
 * the leave-one-source-out validation (docs/validation.md). A prediction {@code t} has the
 * interval {@code [low · t, high · t]}.
 *
 * @param low lower factor (5th percentile of measured / predicted), in (0, 1]
 * @param high upper factor (95th percentile), ≥ 1
 * @param cases held-out cases the factors come from
 * @param source how they were derived
 * @param regime the accelerator generation and regime it was looked up for ("hopper
 *     fully-sharded"; empty before the catalog resolves it for an accelerator)
 */
public record StepInterval(double low, double high, int cases, String source, String regime) {

  /** An interval not yet resolved for an accelerator's regime. */
  public StepInterval(double low, double high, int cases, String source) {
    this(low, high, cases, source, "");
  }

  /** This interval as looked up for {@code generationAndRegime}. */
  public StepInterval withRegime(String generationAndRegime) {
    return new StepInterval(low, high, cases, source, generationAndRegime);
  }

  /** The training regimes an interval is kept for. */
  public static final java.util.List<String> REGIMES = java.util.List.of("data-parallel",
      "model-parallel", "fully-sharded", "communication-bound");

  /**
   * The regime of serving throughput: measured / predicted time per generated token (predicted
   * over measured tokens per second) of published serving runs that nothing was fitted on, one
   * band per generation ({@code validate --serving-intervals}, docs/validation.md). A throughput
   * {@code x} has the interval {@code [x / high, x / low]}.
   */
  public static final String SERVING = "serving";

  /**
   * Exposed communication, as a share of the step, from which a step is communication-bound:
   * half, where the network rather than the devices sets the step time (a definition, not a
   * fitted constant).
   */
  public static final double COMMUNICATION_BOUND_SHARE = 0.5;

  public StepInterval {
    checkArgument(Double.isFinite(low) && low > 0 && low <= 1,
        "interval.low: must be in (0, 1], got %s", low);
    checkArgument(Double.isFinite(high) && high >= 1 && high < 100,
        "interval.high: must be in [1, 100), got %s", high);
    checkArgument(cases >= 0, "interval.cases: must be >= 0, got %s", cases);
    source = source == null ? "" : source;
    regime = regime == null ? "" : regime;
  }

  /** No uncertainty known: the point prediction as both ends. */
  public static final StepInterval NONE = new StepInterval(1.0, 1.0, 0, "no interval in catalog");

  /**
   * The regime of a layout: "fully-sharded" for ZeRO-3, "model-parallel" when tensor, pipeline or
   * expert parallelism splits the model (since 2026-12-08; expert parallelism, which splits a
   * mixture's experts over ranks, counted as data-parallel before), "data-parallel" otherwise.
   */
  public static String regime(int tp, int pp, int ep, int zeroStage) {
    return zeroStage == 3 ? "fully-sharded" : tp > 1 || pp > 1 || ep > 1 ? "model-parallel"
        : "data-parallel";
  }

  /**
   * The regime of an estimated step: "communication-bound" when its exposed communication is at
   * least {@link #COMMUNICATION_BOUND_SHARE} of the step, else the layout's
   * ({@link #regime(int, int, int, int)}).
   */
  public static String regime(int tp, int pp, int ep, int zeroStage, double exposedCommShare) {
    return exposedCommShare >= COMMUNICATION_BOUND_SHARE ? "communication-bound"
        : regime(tp, pp, ep, zeroStage);
  }
}
