package io.hyperframes.parallel;

/**
 * Model-state bytes on one device.
 *
 * @param weightsBytes working weights
 * @param gradientsBytes gradients
 * @param optimizerBytes master weights plus optimizer moments
 * @param layerStatesBytes all three for the transformer layers only (no embedding tables)
 * @param parametersOnDevice parameters held by the device's pipeline stage and tensor shard,
 *     before ZeRO sharding
 * @param expertStatesBytes the part of the three held for a mixture of experts' routed experts
 *     (0 for a dense model)
 * @param expertParametersOnDevice the routed experts' part of {@code parametersOnDevice}, whose
 *     gradients are reduced and whose states are sharded over the expert data-parallel ranks
 *     ({@link Layout#expertDataParallel}), not the data-parallel ones (0 for a dense model)
 */
public record ModelStates(double weightsBytes, double gradientsBytes, double optimizerBytes,
    double layerStatesBytes, double parametersOnDevice, double expertStatesBytes,
    double expertParametersOnDevice) {

  /** Model states of a model without routed experts. */
  public ModelStates(double weightsBytes, double gradientsBytes, double optimizerBytes,
      double layerStatesBytes, double parametersOnDevice) {
    this(weightsBytes, gradientsBytes, optimizerBytes, layerStatesBytes, parametersOnDevice, 0.0,
        0.0);
  }

  public double totalBytes() {
    return weightsBytes + gradientsBytes + optimizerBytes;
  }
}
