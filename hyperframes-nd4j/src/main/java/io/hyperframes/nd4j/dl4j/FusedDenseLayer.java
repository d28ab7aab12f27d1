package io.hyperframes.nd4j.dl4j;

import io.hyperframes.nd4j.FusedDense;
import java.util.Collection;
import java.util.Map;
import java.util.Objects;
import org.deeplearning4j.nn.api.Layer;
import org.deeplearning4j.nn.conf.NeuralNetConfiguration;
import org.deeplearning4j.nn.conf.layers.DenseLayer;
import org.deeplearning4j.optimize.api.TrainingListener;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;

/**
 * Configuration of a DL4J dense layer computed by {@link FusedDense}: one oneDNN matmul with the
 * bias and the activation fused, in FP32 or BF16 compute with FP32 master weights.
 *
 * <p>It is a {@link DenseLayer} in every other respect: the same parameters ({@code W} [nIn,
 * nOut], {@code b} [1, nOut]) in the same flattened layout, the same initialisation, updater,
 * regularisation and JSON form plus one field, {@code precision}. A network saved with it loads
 * with {@code ModelSerializer}; its parameters load into a plain {@code DenseLayer} network and
 * the reverse. Built by {@link Dl4jAdapter#accelerate}, which copies every setting of the layer
 * it replaces.
 *
 * <p>At run time the layer takes the fused path when the network is FP32, the input is a 2-d
 * batch, and there is no mask; otherwise it computes exactly as {@code DenseLayer} does.
 */
public class FusedDenseLayer extends DenseLayer {

  private static final long serialVersionUID = 1L;

  private FusedDense.Precision precision = FusedDense.Precision.BF16;

  /** For JSON deserialisation; use {@link #from}. */
  public FusedDenseLayer() {
  }

  /**
   * A fused copy of {@code dense} computing in {@code precision}.
   *
   * @throws IllegalArgumentException when an argument is null or the layer cannot be fused
   *     ({@link Dl4jAdapter#whyNotFusable})
   */
  public static FusedDenseLayer from(DenseLayer dense, FusedDense.Precision precision) {
    if (dense == null) {
      throw new IllegalArgumentException("dense: must be given");
    }
    if (precision == null) {
      throw new IllegalArgumentException("precision: must be given");
    }
    String why = Dl4jAdapter.whyNotFusable(dense);
    if (why != null) {
      throw new IllegalArgumentException("dense: layer '" + dense.getLayerName()
          + "' cannot be fused: " + why);
    }
    FusedDenseLayer f = new FusedDenseLayer();
    f.setLayerName(dense.getLayerName());
    f.setNIn(dense.getNIn());
    f.setNOut(dense.getNOut());
    f.setTimeDistributedFormat(dense.getTimeDistributedFormat());
    f.setActivationFn(dense.getActivationFn());
    f.setWeightInitFn(dense.getWeightInitFn());
    f.setBiasInit(dense.getBiasInit());
    f.setGainInit(dense.getGainInit());
    f.setRegularization(dense.getRegularization());
    f.setRegularizationBias(dense.getRegularizationBias());
    f.setIUpdater(dense.getIUpdater());
    f.setBiasUpdater(dense.getBiasUpdater());
    f.setWeightNoise(dense.getWeightNoise());
    f.setGradientNormalization(dense.getGradientNormalization());
    f.setGradientNormalizationThreshold(dense.getGradientNormalizationThreshold());
    f.setIDropout(dense.getIDropout());
    f.setConstraints(dense.getConstraints());
    f.setHasBias(dense.hasBias());
    f.setHasLayerNorm(dense.hasLayerNorm());
    f.precision = precision;
    return f;
  }

  public FusedDense.Precision getPrecision() {
    return precision;
  }

  /** For JSON deserialisation. */
  public void setPrecision(FusedDense.Precision precision) {
    if (precision == null) {
      throw new IllegalArgumentException("precision: must be given");
    }
    this.precision = precision;
  }

  @Override
  public Layer instantiate(NeuralNetConfiguration conf,
      Collection<TrainingListener> trainingListeners, int layerIndex, INDArray layerParamsView,
      boolean initializeParams, DataType networkDataType) {
    if (getNIn() <= 0 || getNOut() <= 0) {
      throw new IllegalArgumentException("layer " + layerIndex + " ('" + getLayerName()
          + "'): nIn and nOut must be set, got nIn=" + getNIn() + ", nOut=" + getNOut());
    }
    FusedDenseLayerImpl layer = new FusedDenseLayerImpl(conf, networkDataType);
    layer.setListeners(trainingListeners);
    layer.setIndex(layerIndex);
    layer.setParamsViewArray(layerParamsView);
    Map<String, INDArray> params = initializer().init(conf, layerParamsView, initializeParams);
    layer.setParamTable(params);
    layer.setConf(conf);
    return layer;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof FusedDenseLayer other && super.equals(o)
        && precision == other.precision;
  }

  @Override
  public int hashCode() {
    return Objects.hash(super.hashCode(), precision);
  }

  @Override
  public String toString() {
    return "FusedDenseLayer(precision=" + precision + ", " + super.toString() + ")";
  }
}
