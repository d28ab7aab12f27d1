package io.hyperframes.precision;

import io.hyperframes.hardware.Accelerator;

/**
 * How number formats turn into bytes and FLOP/s: the model-state bytes a recipe puts on a device,
 * and the peak an accelerator reaches in the recipe's compute format.
 */
public interface PrecisionModel {

  /**
   * Bytes of model state per parameter before any sharding: weights + gradients + master weights
   * + optimizer states.
   */
  double modelStateBytesPerParameter(PrecisionRecipe recipe, Optimizer optimizer);

  /**
   * Dense peak FLOP/s of the accelerator for the recipe's matrix multiplications.
   *
   * @throws IllegalArgumentException when the accelerator has no such format
   */
  double peakFlopsPerSecond(Accelerator accelerator, PrecisionRecipe recipe);

  /**
   * Dense peak FLOP/s of the accelerator in one number format (serving's compute format, the
   * attention of an FP8 recipe). The default reads the catalog.
   *
   * @throws IllegalArgumentException when the accelerator has no such format
   */
  default double peakFlopsPerSecond(Accelerator accelerator, NumberFormat format) {
    return accelerator.peakFlops(format);
  }

  /** The analytical model: byte sizes from the formats, peaks from the catalog. */
  static PrecisionModel analytical() {
    return AnalyticalPrecisionModel.INSTANCE;
  }
}
