package io.hyperframes.plan;

import com.google.common.collect.ImmutableList;
import io.hyperframes.hardware.StepInterval;
import io.hyperframes.parallel.Layout;
import java.util.List;

/**
 * The estimate of one training layout. Per-device figures are for the largest pipeline stage.
 * All numbers are finite and non-negative; when {@code feasible} is false, {@code reasons} says why
 * (the figures still describe the layout, so a user can see by how much it misses).
 *
 * @param feasible fits in device memory and is a valid layout for the model
 * @param reasons why not, empty when feasible
 * @param layout the resolved layout
 * @param parameters total model parameters
 * @param activeParameters parameters one token uses (equal to {@code parameters} for a dense
 *     model; the top-k experts of a mixture of experts, with the embedding and output layer)
 * @param memory per-device memory
 * @param time one optimizer step (zero for parameters-only models, which have no architecture)
 * @param modelFlopsPerStep model FLOPs of one step (3 × forward, no recomputation)
 * @param hardwareFlopsPerStep FLOPs executed, recomputation included
 * @param devices devices used
 * @param peakFlopsPerSecond dense peak per device of the compute format
 * @param tokensPerStep tokens per optimizer step
 * @param trainingTokens token budget (0 when none was given)
 * @param interval the uncertainty of the step time in this layout's regime (factors from the
 *     leave-one-source-out validation; {@link StepInterval#NONE} where the catalog has none)
 */
public record TrainingEstimate(
    boolean feasible,
    List<String> reasons,
    Layout layout,
    double parameters,
    double activeParameters,
    MemoryBreakdown memory,
    TimeBreakdown time,
    double modelFlopsPerStep,
    double hardwareFlopsPerStep,
    long devices,
    double peakFlopsPerSecond,
    double tokensPerStep,
    double trainingTokens,
    StepInterval interval) {

  public TrainingEstimate {
    reasons = reasons instanceof Reasons ? reasons : ImmutableList.copyOf(reasons);
    interval = interval == null ? StepInterval.NONE : interval;
  }

  /** Lower end of the step-time interval (nominal 90 %), seconds. */
  public double stepSecondsLow() {
    return stepSeconds() * interval.low();
  }

  /** Upper end of the step-time interval (nominal 90 %), seconds. */
  public double stepSecondsHigh() {
    return stepSeconds() * interval.high();
  }

  /** Lower end of the time-to-train interval, days (0 without a budget). */
  public double trainingDaysLow() {
    return trainingDays() * interval.low();
  }

  /** Upper end of the time-to-train interval, days (0 without a budget). */
  public double trainingDaysHigh() {
    return trainingDays() * interval.high();
  }

  public double stepSeconds() {
    return time.stepSeconds();
  }

  private double perStep(double v) {
    double step = stepSeconds();
    return step > 0 ? v / step : 0.0;
  }

  /** Model FLOPs utilisation: model FLOPs / (step · devices · peak). */
  public double mfu() {
    return perStep(modelFlopsPerStep) / (devices * peakFlopsPerSecond);
  }

  /** Hardware FLOPs utilisation, recomputation counted. */
  public double hfu() {
    return perStep(hardwareFlopsPerStep) / (devices * peakFlopsPerSecond);
  }

  /** Achieved FLOP/s per device, recomputation counted (Narayanan et al. 2021 convention). */
  public double flopsPerSecondPerDevice() {
    return perStep(hardwareFlopsPerStep) / devices;
  }

  /** Achieved model FLOP/s per device, recomputation not counted (the MFU numerator). */
  public double modelFlopsPerSecondPerDevice() {
    return perStep(modelFlopsPerStep) / devices;
  }

  public double tokensPerSecond() {
    return perStep(tokensPerStep);
  }

  public double tokensPerSecondPerDevice() {
    return tokensPerSecond() / devices;
  }

  /** Exposed communication as a share of the step. */
  public double commShare() {
    return time.exposedCommShare();
  }

  /**
   * Scaling efficiency 1 / (1 + C/T) with C the exposed communication and T the compute (with
   * recomputation) of a step: the fraction of linear scaling kept (hyperframes method).
   */
  public double scalingEfficiency() {
    double t = time.computeSeconds() + time.recomputeSeconds();
    return t > 0 ? 1.0 / (1.0 + time.exposedCommSeconds() / t) : 0.0;
  }

  /** Wall-clock days to train on the token budget (0 without a budget). */
  public double trainingDays() {
    double tps = tokensPerSecond();
    return trainingTokens > 0 && tps > 0 ? trainingTokens / tps / 86400.0 : 0.0;
  }

  /** Device-hours to train on the token budget (0 without a budget). */
  public double gpuHours() {
    return trainingDays() * 24.0 * devices;
  }
}
