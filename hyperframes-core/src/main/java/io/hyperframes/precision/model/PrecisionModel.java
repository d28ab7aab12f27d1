package io.hyperframes.precision.model;

import io.hyperframes.precision.NumberFormat;
import io.hyperframes.precision.PrecisionRecipe;
import io.hyperframes.hardware.Accelerator;

/**
 * How number formats turn into FLOP/s: the peak an accelerator reaches in a recipe's compute
 * format or in one number format. (The bytes of each model state follow from the recipe's
 * formats, {@link PrecisionRecipe#weightBytes()} and its siblings, and are sharded by the
 * parallelism model.)
 */
public interface PrecisionModel {

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
