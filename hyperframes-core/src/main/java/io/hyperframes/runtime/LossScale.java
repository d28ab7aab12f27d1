package io.hyperframes.runtime;

import static com.google.common.base.Preconditions.checkArgument;

import com.google.common.collect.ImmutableMap;
import java.util.Map;

/**
 * The state machine of dynamic loss scaling for FP16 training, with the semantics and defaults of
 * PyTorch's {@code torch.cuda.amp.GradScaler}: the loss (so every gradient) is multiplied by the
 * scale (initially 2^16); a step whose gradients hold Inf or NaN is skipped and the scale halved;
 * after 2000 consecutive clean steps the scale doubles. The array work (checking and unscaling
 * the gradients) belongs to the adapters: {@code io.hyperframes.nd4j.train.DynamicLossScaler}
 * for ND4J arrays, {@code io.hyperframes.djl.DjlTrainer} for DJL's.
 *
 * <p>Not thread-safe: one per training loop. Its state goes into checkpoints through
 * {@link #state()} and {@link #restore(Map)}.
 */
public final class LossScale {

  private final double growthFactor;
  private final double backoffFactor;
  private final int growthInterval;
  private double scale;
  private int cleanSteps;
  private long skipped;

  private LossScale(double initial, double growthFactor, double backoffFactor,
      int growthInterval) {
    this.scale = initial;
    this.growthFactor = growthFactor;
    this.backoffFactor = backoffFactor;
    this.growthInterval = growthInterval;
  }

  /** PyTorch's defaults: 2^16, ×2 after 2000 clean steps, ×0.5 on overflow. */
  public static LossScale pytorchDefaults() {
    return of(65536.0, 2.0, 0.5, 2000);
  }

  /**
   * A loss scale with explicit settings.
   *
   * @throws IllegalArgumentException naming the setting when out of range
   */
  public static LossScale of(double initialScale, double growthFactor, double backoffFactor,
      int growthInterval) {
    checkArgument(Double.isFinite(initialScale) && initialScale > 0,
        "initialScale: must be finite and > 0, got %s", initialScale);
    checkArgument(Double.isFinite(growthFactor) && growthFactor > 1,
        "growthFactor: must be > 1, got %s", growthFactor);
    checkArgument(backoffFactor > 0 && backoffFactor < 1,
        "backoffFactor: must be in (0, 1), got %s", backoffFactor);
    checkArgument(growthInterval >= 1, "growthInterval: must be >= 1, got %s", growthInterval);
    return new LossScale(initialScale, growthFactor, backoffFactor, growthInterval);
  }

  /** The current scale: multiply the loss (or the output gradient) by it. */
  public double scale() {
    return scale;
  }

  /** Steps skipped so far because of Inf/NaN gradients. */
  public long skippedSteps() {
    return skipped;
  }

  /** Adjusts the scale after a step: back off on overflow, grow after a run of clean steps. */
  public void update(boolean overflow) {
    if (overflow) {
      scale *= backoffFactor;
      cleanSteps = 0;
      skipped++;
    } else if (++cleanSteps >= growthInterval) {
      scale *= growthFactor;
      cleanSteps = 0;
    }
  }

  /** State for a checkpoint: scale, clean steps since the last change, skipped steps. */
  public Map<String, Double> state() {
    return ImmutableMap.of("scale", scale, "cleanSteps", (double) cleanSteps, "skippedSteps",
        (double) skipped);
  }

  /**
   * Restores {@link #state()}.
   *
   * @throws IllegalArgumentException when a key is missing or a value invalid
   */
  public void restore(Map<String, Double> state) {
    checkArgument(state != null, "state: must be given");
    Double s = state.get("scale");
    Double c = state.get("cleanSteps");
    Double k = state.get("skippedSteps");
    checkArgument(s != null && Double.isFinite(s) && s > 0, "state.scale: must be > 0, got %s",
        s);
    checkArgument(c != null && c >= 0 && c < growthInterval,
        "state.cleanSteps: must be in [0, %s), got %s", growthInterval, c);
    checkArgument(k != null && k >= 0, "state.skippedSteps: must be >= 0, got %s", k);
    scale = s;
    cleanSteps = c.intValue();
    skipped = k.longValue();
  }
}
