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
 */
public record ModelStates(double weightsBytes, double gradientsBytes, double optimizerBytes,
    double layerStatesBytes, double parametersOnDevice) {

  public double totalBytes() {
    return weightsBytes + gradientsBytes + optimizerBytes;
  }
}
