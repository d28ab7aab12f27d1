package io.hyperframes.plan;

import io.hyperframes.hardware.Checks;

/**
 * Prices for the cost of a plan.
 *
 * @param usdPerDeviceHour accelerator-hour price (0 when unknown)
 * @param source where the price comes from
 * @param devicePowerWatts board power for the energy estimate
 * @param pue power usage effectiveness of the data centre (≥ 1)
 * @param usdPerKwh electricity price; 0 leaves energy out of the cost
 */
public record Pricing(double usdPerDeviceHour, String source, double devicePowerWatts,
    double pue, double usdPerKwh) {
  public Pricing {
    Checks.nonNegative("pricing.pricePerDeviceHour", usdPerDeviceHour);
    Checks.nonNegative("pricing.powerWatts", devicePowerWatts);
    Checks.finite("pricing.pue", pue);
    if (pue < 1.0 || pue > 5.0) {
      throw new IllegalArgumentException("pricing.pue: must be in [1, 5], got " + pue);
    }
    Checks.nonNegative("pricing.electricityPerKwh", usdPerKwh);
  }
}
