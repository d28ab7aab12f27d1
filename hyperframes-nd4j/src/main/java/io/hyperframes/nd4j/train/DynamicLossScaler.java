package io.hyperframes.nd4j.train;

import static com.google.common.base.Preconditions.checkArgument;

import io.hyperframes.runtime.LossScale;
import java.util.Map;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.indexing.BooleanIndexing;
import org.nd4j.linalg.indexing.conditions.Conditions;

/**
 * Dynamic loss scaling for FP16 training with the semantics and defaults of PyTorch's
 * {@code torch.cuda.amp.GradScaler}: the loss (so every gradient) is multiplied by the scale
 * (initially 2^16); gradients are unscaled before the update; a step whose gradients hold Inf or
 * NaN is skipped and the scale halved; after 2000 consecutive clean steps the scale doubles.
 *
 * <p>The scale itself is a {@link LossScale} (shared with the DJL adapter); this class adds the
 * ND4J array work. Not thread-safe: one scaler per training loop. Its state goes into
 * checkpoints through {@link #state()} and {@link #restore(Map)}.
 */
public final class DynamicLossScaler {

  private final LossScale scale;

  private DynamicLossScaler(LossScale scale) {
    this.scale = scale;
  }

  /** PyTorch's defaults: 2^16, ×2 after 2000 clean steps, ×0.5 on overflow. */
  public static DynamicLossScaler pytorchDefaults() {
    return new DynamicLossScaler(LossScale.pytorchDefaults());
  }

  /**
   * A scaler with explicit settings ({@link LossScale#of}).
   *
   * @throws IllegalArgumentException naming the setting when out of range
   */
  public static DynamicLossScaler of(double initialScale, double growthFactor,
      double backoffFactor, int growthInterval) {
    return new DynamicLossScaler(LossScale.of(initialScale, growthFactor, backoffFactor,
        growthInterval));
  }

  /** The current scale: multiply the loss (or the output gradient) by it. */
  public double scale() {
    return scale.scale();
  }

  /** Steps skipped so far because of Inf/NaN gradients. */
  public long skippedSteps() {
    return scale.skippedSteps();
  }

  /**
   * Unscales the gradients in place, checks them, and runs {@code update} only when they are all
   * finite; then adjusts the scale. Returns whether the update ran.
   */
  public boolean step(Runnable update, INDArray... gradients) {
    checkArgument(update != null, "update: must be given");
    checkArgument(gradients != null && gradients.length > 0, "gradients: must be given");
    boolean finite = true;
    for (INDArray g : gradients) {
      checkArgument(g != null, "gradients: must not contain null");
      if (!g.isEmpty() && (BooleanIndexing.or(g, Conditions.isNan())
          || BooleanIndexing.or(g, Conditions.isInfinite()))) {
        finite = false;
        break;
      }
    }
    if (finite) {
      double inverse = 1.0 / scale.scale();
      for (INDArray g : gradients) {
        g.muli(inverse);
      }
      update.run();
    }
    update(!finite);
    return finite;
  }

  /** Adjusts the scale after a step: back off on overflow, grow after a run of clean steps. */
  public void update(boolean overflow) {
    scale.update(overflow);
  }

  /** State for a checkpoint: scale, clean steps since the last change, skipped steps. */
  public Map<String, Double> state() {
    return scale.state();
  }

  /**
   * Restores {@link #state()}.
   *
   * @throws IllegalArgumentException when a key is missing or a value invalid
   */
  public void restore(Map<String, Double> state) {
    scale.restore(state);
  }
}
