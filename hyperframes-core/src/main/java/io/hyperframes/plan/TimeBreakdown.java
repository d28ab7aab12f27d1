package io.hyperframes.plan;

/**
 * One optimizer step, in seconds. The parts add up to {@code stepSeconds}.
 *
 * @param computeSeconds forward and backward of all micro-batches, without recomputation
 * @param recomputeSeconds recomputed forward work
 * @param tensorParallelCommSeconds tensor/sequence-parallel collectives (not overlapped)
 * @param pipelineCommSeconds pipeline point-to-point transfers
 * @param dataParallelCommSeconds gradient reduction and ZeRO gathers not hidden behind backward
 * @param bubbleSeconds pipeline fill and drain
 * @param optimizerSeconds optimizer update (memory-bound)
 * @param allToAllSeconds expert-parallel token dispatch and combine (all-to-all, not
 *     overlapped); 0 without expert parallelism
 * @param contextParallelSeconds context-parallel key/value exchange not hidden behind the
 *     attention it feeds; 0 without context parallelism
 */
public record TimeBreakdown(double computeSeconds, double recomputeSeconds,
    double tensorParallelCommSeconds, double pipelineCommSeconds,
    double dataParallelCommSeconds, double bubbleSeconds, double optimizerSeconds,
    double allToAllSeconds, double contextParallelSeconds) {

  /** A step without context-parallel communication. */
  public TimeBreakdown(double computeSeconds, double recomputeSeconds,
      double tensorParallelCommSeconds, double pipelineCommSeconds,
      double dataParallelCommSeconds, double bubbleSeconds, double optimizerSeconds,
      double allToAllSeconds) {
    this(computeSeconds, recomputeSeconds, tensorParallelCommSeconds, pipelineCommSeconds,
        dataParallelCommSeconds, bubbleSeconds, optimizerSeconds, allToAllSeconds, 0.0);
  }

  /** A step without expert-parallel communication. */
  public TimeBreakdown(double computeSeconds, double recomputeSeconds,
      double tensorParallelCommSeconds, double pipelineCommSeconds,
      double dataParallelCommSeconds, double bubbleSeconds, double optimizerSeconds) {
    this(computeSeconds, recomputeSeconds, tensorParallelCommSeconds, pipelineCommSeconds,
        dataParallelCommSeconds, bubbleSeconds, optimizerSeconds, 0.0);
  }

  /** Exposed communication of all kinds. */
  public double exposedCommSeconds() {
    return tensorParallelCommSeconds + pipelineCommSeconds + dataParallelCommSeconds
        + allToAllSeconds + contextParallelSeconds;
  }

  /** The whole step. */
  public double stepSeconds() {
    return computeSeconds + recomputeSeconds + exposedCommSeconds() + bubbleSeconds
        + optimizerSeconds;
  }

  /** Exposed communication as a share of the step (0 for a step of no time). */
  public double exposedCommShare() {
    double step = stepSeconds();
    return step > 0 ? exposedCommSeconds() / step : 0.0;
  }
}
