package io.hyperframes.plan;

/**
 * What a plan costs for its token budget.
 *
 * @param devices devices used
 * @param trainingDays calendar days
 * @param gpuHours device-hours
 * @param usdPerDeviceHour price used
 * @param computeUsd gpuHours × price
 * @param energyKwh devices × power × PUE × hours
 * @param energyUsd energy × electricity price
 * @param totalUsd compute + energy
 * @param priceSource where the price comes from
 */
public record Cost(long devices, double trainingDays, double gpuHours, double usdPerDeviceHour,
    double computeUsd, double energyKwh, double energyUsd, double totalUsd, String priceSource) {

  /** The cost of an estimate under {@code pricing}. */
  public static Cost of(TrainingEstimate e, Pricing pricing) {
    double hours = e.gpuHours();
    double compute = hours * pricing.usdPerDeviceHour();
    double kwh = hours * pricing.devicePowerWatts() / 1000.0 * pricing.pue();
    double energy = kwh * pricing.usdPerKwh();
    return new Cost(e.devices(), e.trainingDays(), hours, pricing.usdPerDeviceHour(), compute,
        kwh, energy, compute + energy, pricing.source());
  }
}
