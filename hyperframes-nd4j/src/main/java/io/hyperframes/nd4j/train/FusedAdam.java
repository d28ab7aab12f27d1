package io.hyperframes.nd4j.train;

import static com.google.common.base.Preconditions.checkArgument;

import java.nio.ByteOrder;
import java.nio.FloatBuffer;
import java.util.stream.IntStream;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;

/**
 * Adam for one FP32 parameter array in one vectorised pass: the FP32 master copy and both moment
 * estimates live in Java arrays, the gradient is read once from the native array and the updated
 * parameter written back once.
 *
 * <p>The update is Adam (Kingma and Ba 2015, Algorithm 1) in the form ND4J's {@code AdamUpdater}
 * uses: m ← β₁m + (1−β₁)g, v ← β₂v + (1−β₂)g², αₜ = α·√(1−β₂ᵗ)/(1−β₁ᵗ), θ ← θ − αₜ·m/(√v + ε),
 * t counted from 1. Why not ND4J's: its native Adam op took 12 ms for 4 M parameters on this
 * project's 2-core machine (plus 0.7 ms for the separate subtraction), this loop 1.7–2.3 ms plus
 * 2.6 ms for the two copies (docs/performance.md) — the plain loop over Java arrays is what the
 * JIT vectorises (square root and division included); loops over native buffers it does not.
 *
 * <p>The parameter array must not be written by anyone else while it is trained with this
 * optimizer: the master copy is this object's. Not thread-safe.
 */
public final class FusedAdam {

  private final INDArray parameter;
  private final float[] master;
  private final float[] gradient;
  private final float[] m;
  private final float[] v;
  private final double learningRate;
  private final double beta1;
  private final double beta2;
  private final double epsilon;
  private long step;

  /**
   * Adam for {@code parameter} (a dense FP32 array, at most 2³¹−1 elements), starting from its
   * current values.
   *
   * @throws IllegalArgumentException naming the argument when it is out of range
   */
  public FusedAdam(INDArray parameter, double learningRate, double beta1, double beta2,
      double epsilon) {
    checkArgument(parameter != null, "parameter: must be given");
    checkArgument(parameter.dataType() == DataType.FLOAT, "parameter: must be FP32, got %s",
        parameter.dataType());
    checkArgument(parameter.length() <= Integer.MAX_VALUE && !parameter.isView()
        && parameter.ordering() == 'c', "parameter: must be a dense row-major array of at most"
        + " 2^31-1 elements");
    checkArgument(learningRate > 0 && Double.isFinite(learningRate),
        "learningRate: must be > 0, got %s", learningRate);
    checkArgument(beta1 >= 0 && beta1 < 1, "beta1: must be in [0, 1), got %s", beta1);
    checkArgument(beta2 >= 0 && beta2 < 1, "beta2: must be in [0, 1), got %s", beta2);
    checkArgument(epsilon > 0 && Double.isFinite(epsilon), "epsilon: must be > 0, got %s",
        epsilon);
    int n = (int) parameter.length();
    this.parameter = parameter;
    this.master = new float[n];
    this.gradient = new float[n];
    this.m = new float[n];
    this.v = new float[n];
    this.learningRate = learningRate;
    this.beta1 = beta1;
    this.beta2 = beta2;
    this.epsilon = epsilon;
    buffer(parameter).get(master);
  }

  /** Adam with the paper's defaults β₁ 0.9, β₂ 0.999, ε 1e-8. */
  public static FusedAdam of(INDArray parameter, double learningRate) {
    return new FusedAdam(parameter, learningRate, 0.9, 0.999, 1e-8);
  }

  /** Steps taken so far. */
  public long steps() {
    return step;
  }

  /** A copy of the state: the FP32 master values, both moments and the step count. */
  State state() {
    return new State(master.clone(), m.clone(), v.clone(), step);
  }

  /**
   * Takes {@code state} as its own (arrays of this parameter's length, checked by the caller)
   * and writes the master values into the parameter array.
   */
  void restore(State state) {
    System.arraycopy(state.values(), 0, master, 0, master.length);
    System.arraycopy(state.first(), 0, m, 0, m.length);
    System.arraycopy(state.second(), 0, v, 0, v.length);
    step = state.steps();
    buffer(parameter).put(master);
  }

  /** The optimizer's state for one parameter. */
  record State(float[] values, float[] first, float[] second, long steps) {}

  /**
   * One update from {@code grad} (FP32, dense, the parameter's length); writes the new values
   * into the parameter array.
   */
  public void update(INDArray grad) {
    checkArgument(grad != null && grad.dataType() == DataType.FLOAT
        && grad.length() == master.length && !grad.isView() && grad.ordering() == 'c',
        "gradient: must be a dense FP32 array of %s elements", master.length);
    step++;
    buffer(grad).get(gradient);
    double alpha = learningRate * Math.sqrt(1 - Math.pow(beta2, step))
        / (1 - Math.pow(beta1, step));
    pass(gradient, m, v, master, false, alpha, beta1, beta2, epsilon);
    buffer(parameter).put(master);
  }

  /**
   * One Adam pass over Java arrays of equal length, in ND4J's form (class comment), with the
   * step size {@code alpha} = αₜ already computed: the moments {@code m} and {@code v} are
   * updated in place from the gradient {@code g}, and the update αₜ·m/(√v + ε) is subtracted from
   * {@code target} or, with {@code replace}, written into it (DL4J's updaters hand back the update
   * in the gradient's place). Split over the cores from 2¹⁶ elements.
   *
   * @throws IllegalArgumentException when an array is missing or the lengths differ
   */
  public static void pass(float[] g, float[] m, float[] v, float[] target, boolean replace,
      double alpha, double beta1, double beta2, double epsilon) {
    checkArgument(g != null && m != null && v != null && target != null,
        "g, m, v, target: must be given");
    int n = g.length;
    checkArgument(m.length == n && v.length == n && target.length == n,
        "g, m, v, target: must have the same length, got %s, %s, %s, %s", n, m.length, v.length,
        target.length);
    // Branch-free in the loop: target = keep·target + sign·update.
    float keep = replace ? 0f : 1f;
    float sign = replace ? 1f : -1f;
    float b1 = (float) beta1;
    float b2 = (float) beta2;
    float a = (float) alpha;
    float eps = (float) epsilon;
    int chunks = n < (1 << 16) ? 1 : Runtime.getRuntime().availableProcessors();
    if (chunks == 1) {
      pass(g, m, v, target, keep, sign, 0, n, b1, b2, a, eps);
    } else {
      IntStream.range(0, chunks).parallel().forEach(c -> pass(g, m, v, target, keep, sign,
          (int) ((long) n * c / chunks), (int) ((long) n * (c + 1) / chunks), b1, b2, a, eps));
    }
  }

  private static void pass(float[] g, float[] mm, float[] vv, float[] t, float keep, float sign,
      int from, int to, float b1, float b2, float alpha, float eps) {
    float c1 = 1 - b1;
    float c2 = 1 - b2;
    for (int i = from; i < to; i++) {
      float gi = g[i];
      float mi = b1 * mm[i] + c1 * gi;
      float vi = b2 * vv[i] + c2 * gi * gi;
      mm[i] = mi;
      vv[i] = vi;
      t[i] = keep * t[i] + sign * (alpha * mi / ((float) Math.sqrt(vi) + eps));
    }
  }

  /** The elements of a dense FP32 array, as a buffer over its native memory. */
  static FloatBuffer buffer(INDArray a) {
    return a.data().asNio().order(ByteOrder.nativeOrder()).asFloatBuffer();
  }
}
