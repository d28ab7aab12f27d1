package io.hyperframes.plan;

import io.hyperframes.workload.TrainingWorkload;

/**
 * One evaluated plan candidate: the estimate, its cost, and the workload it was evaluated with
 * (the chosen global batch and precision).
 */
public record Candidate(TrainingEstimate estimate, Cost cost, TrainingWorkload workload) {

  /** Time metric: training days with a token budget, else seconds per token. */
  double timeMetric() {
    if (workload.trainingTokens() > 0) {
      return estimate.trainingDays();
    }
    double tps = estimate.tokensPerSecond();
    return tps > 0 ? 1.0 / tps : Double.MAX_VALUE;
  }

  /** Cost metric: total USD with a token budget, else USD per token. */
  double costMetric() {
    if (workload.trainingTokens() > 0) {
      return cost.totalUsd();
    }
    double tps = estimate.tokensPerSecond();
    return tps > 0 ? estimate.devices() * cost.usdPerDeviceHour() / 3600.0 / tps
        : Double.MAX_VALUE;
  }
}
