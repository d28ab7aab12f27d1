package io.hyperframes.nd4j.dl4j;

import io.hyperframes.nd4j.FusedDense;
import org.deeplearning4j.nn.conf.NeuralNetConfiguration;
import org.deeplearning4j.nn.gradient.DefaultGradient;
import org.deeplearning4j.nn.gradient.Gradient;
import org.deeplearning4j.nn.layers.feedforward.dense.DenseLayer;
import org.deeplearning4j.nn.params.DefaultParamInitializer;
import org.deeplearning4j.nn.workspace.ArrayType;
import org.deeplearning4j.nn.workspace.LayerWorkspaceMgr;
import org.nd4j.common.primitives.Pair;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.memory.MemoryWorkspace;
import org.nd4j.linalg.api.ndarray.INDArray;

/**
 * Run-time layer of {@link FusedDenseLayer}: DL4J's dense layer with forward and backward
 * replaced by {@link FusedDense}. Arrays are allocated through the layer workspace manager with
 * the array types DL4J's own dense layer uses (activations, activation gradients, working memory),
 * so workspaces behave as they do for {@code DenseLayer}. A training forward keeps the
 * pre-activation in the activations workspace, which DL4J keeps open until backward; backward
 * uses it when it belongs to the same input and its workspace has not been recycled since, and
 * recomputes it otherwise (as DL4J's own dense layer always does).
 */
class FusedDenseLayerImpl extends DenseLayer {

  private static final long serialVersionUID = 1L;

  private transient FusedDense kernel;

  FusedDenseLayerImpl(NeuralNetConfiguration conf, DataType dataType) {
    super(conf, dataType);
  }

  private FusedDense kernel() {
    if (kernel == null) {
      FusedDenseLayer c = (FusedDenseLayer) layerConf();
      kernel = FusedDense.of(Dl4jAdapter.activationOf(c.getActivationFn()), c.getPrecision());
    }
    return kernel;
  }

  /** Whether this call can take the fused path (otherwise DL4J's own code runs). */
  private boolean fusedPath() {
    return dataType == DataType.FLOAT && input != null && input.rank() == 2
        && input.dataType() == DataType.FLOAT && maskArray == null
        && layerConf().getIDropout() == null && layerConf().getWeightNoise() == null
        && !hasLayerNorm();
  }

  @Override
  public INDArray activate(boolean training, LayerWorkspaceMgr workspaceMgr) {
    if (!fusedPath()) {
      return super.activate(training, workspaceMgr);
    }
    assertInputSet(false);
    INDArray w = getParam(DefaultParamInitializer.WEIGHT_KEY);
    INDArray b = hasBias() ? getParam(DefaultParamInitializer.BIAS_KEY) : null;
    long[] shape = {input.rows(), w.columns()};
    INDArray y = workspaceMgr.createUninitialized(ArrayType.ACTIVATIONS, DataType.FLOAT, shape,
        'c');
    if (!training) {
      return kernel().forwardInto(input, w, b, null, y);
    }
    // Keep the pre-activation next to the activations (DL4J keeps every layer's activations
    // alive until backward) so that backward need not recompute x·W + b.
    INDArray z = workspaceMgr.createUninitialized(ArrayType.ACTIVATIONS, DataType.FLOAT, shape,
        'c');
    kernel().forwardTrainingInto(input, w, b, null, y, z);
    saved = new Saved(input, z, z.isAttached() ? z.data().getParentWorkspace() : null,
        z.isAttached() ? z.data().getParentWorkspace().getGenerationId() : -1);
    return y;
  }

  /** The pre-activation of the last training forward, with what it was computed from. */
  private record Saved(INDArray input, INDArray preActivation,
      MemoryWorkspace workspace, long generation) {

    /** Whether it belongs to {@code x} and its memory is still the one it was written to. */
    boolean validFor(INDArray x) {
      if (input != x || preActivation.wasClosed()) {
        return false;
      }
      return workspace == null
          || (workspace.isScopeActive() && workspace.getGenerationId() == generation);
    }
  }

  private transient Saved saved;

  /** Backward passes that used the saved pre-activation, and those that recomputed it (tests). */
  transient long reused;

  transient long recomputed;

  @Override
  public void clear() {
    saved = null;
    super.clear();
  }

  @Override
  public Pair<Gradient, INDArray> backpropGradient(INDArray epsilon,
      LayerWorkspaceMgr workspaceMgr) {
    if (!fusedPath() || epsilon.dataType() != DataType.FLOAT) {
      return super.backpropGradient(epsilon, workspaceMgr);
    }
    assertInputSet(true);
    INDArray w = getParam(DefaultParamInitializer.WEIGHT_KEY);
    INDArray b = hasBias() ? getParam(DefaultParamInitializer.BIAS_KEY) : null;
    long m = input.rows();
    long k = input.columns();
    long n = w.columns();
    FusedDense fused = kernel();
    INDArray z;
    if (saved != null && saved.validFor(input)) {
      z = saved.preActivation();
      reused++;
    } else {
      recomputed++;
      INDArray y = workspaceMgr.createUninitialized(ArrayType.BP_WORKING_MEM, DataType.FLOAT,
          new long[] {m, n}, 'c');
      z = workspaceMgr.createUninitialized(ArrayType.BP_WORKING_MEM, DataType.FLOAT,
          new long[] {m, n}, 'c');
      fused.forwardTrainingInto(input, w, b, null, y, z);
    }
    saved = null;
    INDArray dX = workspaceMgr.createUninitialized(ArrayType.ACTIVATION_GRAD, DataType.FLOAT,
        new long[] {m, k}, 'c');
    // The weight gradient goes straight into DL4J's gradient view (column-major, which the
    // kernel writes through its strides): copying it there took as long as the layer's
    // matmuls (JFR of bench train's adapter side).
    INDArray wGrad = gradientViews.get(DefaultParamInitializer.WEIGHT_KEY);
    boolean direct = dense(wGrad, k, n);
    INDArray dW = direct ? wGrad : workspaceMgr.createUninitialized(ArrayType.BP_WORKING_MEM,
        DataType.FLOAT, new long[] {k, n}, 'c');
    INDArray db = workspaceMgr.createUninitialized(ArrayType.BP_WORKING_MEM, DataType.FLOAT,
        new long[] {1, n}, 'c');
    fused.backwardInto(input, w, z, epsilon, dX, dW, db);
    if (!direct) {
      wGrad.assign(dW);
    }

    // Same entries, in the same order, as DL4J's BaseLayer: bias, then weights.
    Gradient gradient = new DefaultGradient();
    if (b != null) {
      INDArray bGrad = gradientViews.get(DefaultParamInitializer.BIAS_KEY);
      bGrad.assign(db);
      gradient.gradientForVariable().put(DefaultParamInitializer.BIAS_KEY, bGrad);
    }
    gradient.gradientForVariable().put(DefaultParamInitializer.WEIGHT_KEY, wGrad);
    return new Pair<>(gradient, dX);
  }

  /** Whether {@code a} is an FP32 [rows, cols] array, dense row- or column-major. */
  private static boolean dense(INDArray a, long rows, long cols) {
    if (a.dataType() != DataType.FLOAT || a.rank() != 2 || a.rows() != rows
        || a.columns() != cols) {
      return false;
    }
    long[] st = a.stride();
    return (st[0] == cols && st[1] == 1) || (st[0] == 1 && st[1] == rows);
  }
}
