package io.hyperframes.precision.model;

import io.hyperframes.precision.PrecisionRecipe;
import io.hyperframes.hardware.Accelerator;

/** Peaks from the accelerator catalog. */
enum AnalyticalPrecisionModel implements PrecisionModel {
  INSTANCE;

  @Override
  public double peakFlopsPerSecond(Accelerator accelerator, PrecisionRecipe recipe) {
    return accelerator.peakFlops(recipe.compute());
  }
}
