package io.hyperframes.precision;

import io.hyperframes.hardware.Accelerator;

/** Byte counts from the recipe's formats; peaks from the accelerator catalog. */
enum AnalyticalPrecisionModel implements PrecisionModel {
  INSTANCE;

  @Override
  public double modelStateBytesPerParameter(PrecisionRecipe recipe, Optimizer optimizer) {
    return recipe.weightBytes() + recipe.gradientBytes() + recipe.masterBytes()
        + optimizer.stateBytesPerParameter();
  }

  @Override
  public double peakFlopsPerSecond(Accelerator accelerator, PrecisionRecipe recipe) {
    return accelerator.peakFlops(recipe.compute());
  }
}
