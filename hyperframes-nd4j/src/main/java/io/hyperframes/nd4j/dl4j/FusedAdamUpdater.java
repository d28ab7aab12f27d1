package io.hyperframes.nd4j.dl4j;

import io.hyperframes.nd4j.train.FusedAdam;
import java.util.HashMap;
import java.util.Map;
import org.bytedeco.javacpp.FloatPointer;
import org.bytedeco.javacpp.Pointer;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.api.shape.Shape;
import org.nd4j.linalg.indexing.NDArrayIndex;
import org.nd4j.linalg.learning.AdamUpdater;
import org.nd4j.linalg.learning.GradientUpdater;
import org.nd4j.linalg.learning.config.Adam;

/**
 * The updater of {@link FusedAdamConfig}: the moments live in Java arrays (which the JIT
 * vectorises, square root and division included; loops over native buffers it does not): every
 * step copies the moments in from the state view and back out, and the gradient in and the
 * update out, so that the view is always the state: DL4J reads it whenever it saves or inspects
 * it, and writes it when it restores a model. A gradient or state that is not a contiguous FP32
 * vector (DL4J passes its updater blocks as contiguous row vectors) goes through DL4J's own
 * {@link AdamUpdater} on the same state.
 *
 * <p>Not thread-safe, as DL4J's updaters.
 */
final class FusedAdamUpdater implements GradientUpdater<Adam> {

  private final FusedAdamConfig config;
  private INDArray mView;
  private INDArray vView;
  private float[] m = new float[0];
  private float[] v = new float[0];
  private float[] g = new float[0];

  FusedAdamUpdater(FusedAdamConfig config) {
    this.config = config;
  }

  @Override
  public Adam getConfig() {
    return config;
  }

  @Override
  public void setStateViewArray(INDArray viewArray, long[] gradientShape, char gradientOrder,
      boolean initialize) {
    if (!viewArray.isRowVector()) {
      throw new IllegalArgumentException("viewArray: must be a row vector, got shape "
          + java.util.Arrays.toString(viewArray.shape()));
    }
    if (initialize) {
      viewArray.assign(0);
    }
    INDArray flat = viewArray.reshape(viewArray.length());
    long length = flat.length();
    INDArray mm = flat.get(NDArrayIndex.interval(0, length / 2));
    INDArray vv = flat.get(NDArrayIndex.interval(length / 2, length));
    mm = Shape.newShapeNoCopy(mm, gradientShape, gradientOrder == 'f');
    vv = Shape.newShapeNoCopy(vv, gradientShape, gradientOrder == 'f');
    if (mm == null || vv == null) {
      throw new IllegalStateException("could not reshape the state view to the gradient's shape "
          + java.util.Arrays.toString(gradientShape));
    }
    bind(mm, vv);
  }

  @Override
  public void setState(Map<String, INDArray> stateMap, boolean initialize) {
    INDArray mm = stateMap == null ? null : stateMap.get(AdamUpdater.M_STATE);
    INDArray vv = stateMap == null ? null : stateMap.get(AdamUpdater.V_STATE);
    if (mm == null || vv == null || stateMap.size() != 2) {
      throw new IllegalStateException("state: expected the keys " + AdamUpdater.M_STATE + " and "
          + AdamUpdater.V_STATE + ", got " + (stateMap == null ? null : stateMap.keySet()));
    }
    if (initialize) {
      mm.assign(0);
      vv.assign(0);
    }
    bind(mm, vv);
  }

  @Override
  public Map<String, INDArray> getState() {
    Map<String, INDArray> state = new HashMap<>();
    state.put(AdamUpdater.M_STATE, mView);
    state.put(AdamUpdater.V_STATE, vView);
    return state;
  }

  /** Takes {@code mm} and {@code vv} as the state and loads them into the Java arrays. */
  private void bind(INDArray mm, INDArray vv) {
    mView = mm;
    vView = vv;
    int n = (int) mm.length();
    m = new float[n];
    v = new float[n];
    g = new float[n];
    load();
  }

  /**
   * Reads the moments from the state arrays (after DL4J's own updater wrote them); state that is
   * not contiguous is only ever updated by that updater, so there is nothing to read.
   */
  private void load() {
    if (contiguous(mView) && contiguous(vView)) {
      region(mView).get(m);
      region(vView).get(v);
    }
  }

  @Override
  public void applyUpdater(INDArray gradient, int iteration, int epoch) {
    if (mView == null) {
      throw new IllegalStateException("updater has no state: setStateViewArray or setState first");
    }
    if (gradient.length() != m.length) {
      throw new IllegalArgumentException("gradient: " + gradient.length() + " elements, the"
          + " state holds " + m.length);
    }
    if (!contiguous(gradient) || !contiguous(mView) || !contiguous(vView)) {
      // Not one run of memory: DL4J's updater on the same state, then reload the moments it
      // wrote.
      AdamUpdater fallback = new AdamUpdater(config);
      Map<String, INDArray> state = getState();
      fallback.setState(state, false);
      fallback.applyUpdater(gradient, iteration, epoch);
      load();
      return;
    }
    double beta1 = config.getBeta1();
    double beta2 = config.getBeta2();
    double t = iteration + 1.0;
    double alpha = config.getLearningRate(iteration, epoch) * Math.sqrt(1 - Math.pow(beta2, t))
        / (1 - Math.pow(beta1, t));
    if (Double.isNaN(alpha) || Double.isInfinite(alpha) || alpha == 0) {
      alpha = config.getEpsilon(); // as ND4J's op does
    }
    // The state view is the truth: DL4J writes it without telling the updater (a model restored
    // from a zip, BaseMultiLayerUpdater.setStateViewArray), so the moments are read every step.
    load();
    FloatPointer grad = region(gradient);
    grad.get(g);
    FusedAdam.pass(g, m, v, g, true, alpha, beta1, beta2, config.getEpsilon());
    grad.put(g);
    region(mView).put(m);
    region(vView).put(v);
    // The regions own nothing: the arrays keep the memory alive until here.
    java.lang.ref.Reference.reachabilityFence(gradient);
    java.lang.ref.Reference.reachabilityFence(mView);
    java.lang.ref.Reference.reachabilityFence(vView);
  }

  /**
   * Whether {@code a} is an FP32 vector (at most one dimension longer than 1) with unit stride:
   * one run of memory, element i at offset i, as DL4J's updater blocks and their state are.
   */
  private static boolean contiguous(INDArray a) {
    if (a.dataType() != DataType.FLOAT || a.length() > Integer.MAX_VALUE) {
      return false;
    }
    int longDims = 0;
    for (int d = 0; d < a.rank(); d++) {
      if (a.size(d) > 1 && (++longDims > 1 || a.stride(d) != 1)) {
        return false;
      }
    }
    return true;
  }

  /** The memory of a contiguous FP32 array, not owned (ND4J keeps it alive through {@code a}). */
  private static FloatPointer region(INDArray a) {
    return new Region(a.data().addressPointer().address(), a.length());
  }

  private static final class Region extends FloatPointer {
    Region(long address, long length) {
      super((Pointer) null);
      this.address = address;
      this.position = 0;
      this.limit = length;
      this.capacity = length;
    }
  }
}
