package io.hyperframes.nd4j.dl4j;

import java.util.Arrays;
import java.util.Map;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.learning.GradientUpdater;
import org.nd4j.linalg.learning.config.Adam;

/**
 * DL4J's {@link Adam} configuration, applied in one vectorised pass over Java arrays instead of
 * ND4J's native {@code adam_updater} op: the same update (Kingma and Ba 2015, Algorithm 1, in
 * ND4J's form: m ← β₁m + (1−β₁)g, v ← β₂v + (1−β₂)g², αₜ = α·√(1−β₂ᵗ)/(1−β₁ᵗ), update =
 * αₜ·m/(√v + ε), t = iteration + 1), the same state layout (m then v in the state view, so a
 * network can switch between the two and keep its state), the same learning-rate schedule.
 *
 * <p>Why: ND4J's op plus the weight subtraction took 15.6 ms for 4 M parameters where the pass
 * over Java arrays with its copies takes 4.4 ms ({@code OptimizerBenchmark}), a fifth of the
 * DL4J adapter's training step ({@code bench train}, docs/performance.md).
 *
 * <p>{@link Dl4jAdapter#accelerate} puts it in place of every plain {@code Adam} of the
 * configuration; a configuration with it serialises to JSON like any DL4J updater (its class
 * name is recorded, so reading it back needs this module).
 */
public class FusedAdamConfig extends Adam {

  private static final long serialVersionUID = 1L;

  /** With DL4J's defaults (for JSON deserialisation). */
  public FusedAdamConfig() {
    super();
  }

  /**
   * The fused form of {@code adam}: the same rate or schedule, β₁, β₂ and ε.
   *
   * @throws IllegalArgumentException when {@code adam} is null
   */
  public FusedAdamConfig(Adam adam) {
    super(given(adam).getLearningRate(), adam.getBeta1(), adam.getBeta2(), adam.getEpsilon());
    setLearningRateSchedule(adam.getLearningRateSchedule());
  }

  private static Adam given(Adam adam) {
    if (adam == null) {
      throw new IllegalArgumentException("adam: must be given");
    }
    return adam;
  }

  @Override
  public GradientUpdater<Adam> instantiate(INDArray viewArray, boolean initializeViewArray) {
    FusedAdamUpdater u = new FusedAdamUpdater(this);
    // As Adam's own: the state is m then v, each half of the flat view.
    INDArray flat = viewArray.reshape(viewArray.length());
    long[] gradientShape = Arrays.copyOf(flat.shape(), flat.rank());
    gradientShape[0] /= 2;
    u.setStateViewArray(flat, gradientShape, flat.ordering(), initializeViewArray);
    return u;
  }

  @Override
  public GradientUpdater<Adam> instantiate(Map<String, INDArray> updaterState,
      boolean initializeStateArrays) {
    FusedAdamUpdater u = new FusedAdamUpdater(this);
    u.setState(updaterState, initializeStateArrays);
    return u;
  }

  @Override
  public FusedAdamConfig clone() {
    FusedAdamConfig c = new FusedAdamConfig(this);
    c.setLearningRateSchedule(getLearningRateSchedule() == null ? null
        : getLearningRateSchedule().clone());
    return c;
  }

  /** Equal to another fused configuration with the same values, never to a plain Adam. */
  @Override
  public boolean equals(Object o) {
    return o instanceof FusedAdamConfig && super.equals(o);
  }

  @Override
  protected boolean canEqual(Object other) {
    return other instanceof FusedAdamConfig;
  }

  @Override
  public int hashCode() {
    return 31 * super.hashCode() + 1;
  }

  @Override
  public String toString() {
    return "Fused" + super.toString();
  }
}
