package io.hyperframes.nd4j.dl4j;

import io.hyperframes.nd4j.Activation;
import io.hyperframes.nd4j.FusedDense;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.deeplearning4j.nn.conf.ComputationGraphConfiguration;
import org.deeplearning4j.nn.conf.MultiLayerConfiguration;
import org.deeplearning4j.nn.conf.NeuralNetConfiguration;
import org.deeplearning4j.nn.conf.graph.GraphVertex;
import org.deeplearning4j.nn.conf.graph.LayerVertex;
import org.deeplearning4j.nn.conf.layers.BaseLayer;
import org.deeplearning4j.nn.conf.layers.DenseLayer;
import org.nd4j.linalg.activations.IActivation;
import org.nd4j.linalg.activations.impl.ActivationIdentity;
import org.nd4j.linalg.activations.impl.ActivationReLU;
import org.nd4j.linalg.activations.impl.ActivationSwish;
import org.nd4j.linalg.learning.config.Adam;

/**
 * Applies the HyperFrames kernels to existing DL4J network configurations without rewriting them:
 * every {@link DenseLayer} whose settings the fused kernel supports becomes a
 * {@link FusedDenseLayer} with the same parameters, so {@code new MultiLayerNetwork(accelerated)}
 * trains and infers as before, faster, and its parameters are interchangeable with the original
 * network's.
 *
 * <pre>{@code
 * MultiLayerConfiguration conf = ...;            // unchanged user code
 * MultiLayerNetwork net = new MultiLayerNetwork(
 *     Dl4jAdapter.accelerate(conf, FusedDense.Precision.BF16).configuration());
 * net.init();
 * }</pre>
 *
 * <p>Fused: dense layers with identity, ReLU (no cap, threshold or slope) or Swish activation,
 * without layer normalisation. Left as they are, with the reason in
 * {@link Accelerated#skipped()}: every other layer (output layers included: their matmul is small
 * and their loss is DL4J's) and dense layers with other activations. Dropout, weight noise, masks
 * and non-FP32 networks are supported by the fused layer falling back to DL4J's computation for
 * that call. A plain {@code Adam} updater of any layer becomes {@link FusedAdamConfig}: the same
 * update and state, a third of the time.
 */
public final class Dl4jAdapter {

  private Dl4jAdapter() {
  }

  /**
   * An accelerated configuration and what was (not) replaced.
   *
   * @param fused names (or indices, for unnamed layers) of the layers now fused
   * @param skipped dense layers left unchanged, each with the reason
   */
  public record Accelerated<C>(C configuration, List<String> fused, List<String> skipped) {
    public Accelerated {
      fused = List.copyOf(fused);
      skipped = List.copyOf(skipped);
    }
  }

  /**
   * A copy of {@code conf} with its fusable dense layers replaced (the argument is not modified).
   *
   * @throws IllegalArgumentException when an argument is null
   */
  public static Accelerated<MultiLayerConfiguration> accelerate(MultiLayerConfiguration conf,
      FusedDense.Precision precision) {
    if (conf == null) {
      throw new IllegalArgumentException("conf: must be given");
    }
    requirePrecision(precision);
    MultiLayerConfiguration copy = conf.clone();
    List<String> fused = new ArrayList<>();
    List<String> skipped = new ArrayList<>();
    List<NeuralNetConfiguration> confs = copy.getConfs();
    for (int i = 0; i < confs.size(); i++) {
      replace(confs.get(i), String.valueOf(i), precision, fused, skipped);
      fuseAdam(confs.get(i));
    }
    return new Accelerated<>(copy, fused, skipped);
  }

  /**
   * A copy of {@code conf} with its fusable dense layer vertices replaced.
   *
   * @throws IllegalArgumentException when an argument is null
   */
  public static Accelerated<ComputationGraphConfiguration> accelerate(
      ComputationGraphConfiguration conf, FusedDense.Precision precision) {
    if (conf == null) {
      throw new IllegalArgumentException("conf: must be given");
    }
    requirePrecision(precision);
    ComputationGraphConfiguration copy = conf.clone();
    List<String> fused = new ArrayList<>();
    List<String> skipped = new ArrayList<>();
    for (Map.Entry<String, GraphVertex> e : copy.getVertices().entrySet()) {
      if (e.getValue() instanceof LayerVertex vertex) {
        replace(vertex.getLayerConf(), e.getKey(), precision, fused, skipped);
        fuseAdam(vertex.getLayerConf());
      }
    }
    return new Accelerated<>(copy, fused, skipped);
  }

  private static void requirePrecision(FusedDense.Precision precision) {
    if (precision == null) {
      throw new IllegalArgumentException("precision: must be given");
    }
  }

  private static void replace(NeuralNetConfiguration layerConf, String id,
      FusedDense.Precision precision, List<String> fused, List<String> skipped) {
    if (layerConf == null || layerConf.getLayer() == null
        || layerConf.getLayer().getClass() != DenseLayer.class) {
      return;
    }
    DenseLayer dense = (DenseLayer) layerConf.getLayer();
    String name = dense.getLayerName() != null ? dense.getLayerName() : id;
    String why = whyNotFusable(dense);
    if (why != null) {
      skipped.add(name + ": " + why);
      return;
    }
    layerConf.setLayer(FusedDenseLayer.from(dense, precision));
    fused.add(name);
  }

  /**
   * Puts {@link FusedAdamConfig} in place of a plain {@link Adam} updater (weights and biases) of
   * any layer: the same update, without ND4J's native Adam op.
   */
  private static void fuseAdam(NeuralNetConfiguration layerConf) {
    if (layerConf == null || !(layerConf.getLayer() instanceof BaseLayer layer)) {
      return;
    }
    if (layer.getIUpdater() != null && layer.getIUpdater().getClass() == Adam.class) {
      layer.setIUpdater(new FusedAdamConfig((Adam) layer.getIUpdater()));
    }
    if (layer.getBiasUpdater() != null && layer.getBiasUpdater().getClass() == Adam.class) {
      layer.setBiasUpdater(new FusedAdamConfig((Adam) layer.getBiasUpdater()));
    }
  }

  /** Why {@code dense} cannot be fused, or null when it can. */
  static String whyNotFusable(DenseLayer dense) {
    if (dense.hasLayerNorm()) {
      return "layer normalisation is not fused";
    }
    if (activationOf(dense.getActivationFn()) == null) {
      return "activation " + dense.getActivationFn() + " has no fused kernel"
          + " (supported: identity, ReLU without cap/threshold/slope, Swish)";
    }
    return null;
  }

  /** The fused activation equal to DL4J's {@code fn}, or null when there is none. */
  static Activation activationOf(IActivation fn) {
    if (fn instanceof ActivationIdentity) {
      return Activation.IDENTITY;
    }
    if (fn instanceof ActivationReLU relu) {
      boolean plain = relu.getMax() == null
          && (relu.getThreshold() == null || relu.getThreshold() == 0.0)
          && (relu.getNegativeSlope() == null || relu.getNegativeSlope() == 0.0);
      return plain ? Activation.RELU : null;
    }
    if (fn instanceof ActivationSwish) {
      return Activation.SILU;
    }
    return null;
  }
}
