package io.hyperframes.plan;

/**
 * Memory of one device of the largest pipeline stage, in bytes.
 *
 * @param weightsBytes working weights (after ZeRO-3 sharding)
 * @param gradientsBytes gradients (after ZeRO-2 sharding)
 * @param optimizerBytes master weights and optimizer moments (after ZeRO-1 sharding)
 * @param activationsBytes activations of the transformer layers kept for backward, all in-flight
 *     micro-batches (Korthikanti et al. 2022)
 * @param otherBytes logits and loss buffers, communication buckets and the runtime reserve
 * @param layerStatesBytes weights + gradients + optimizer of the stage's transformer layers only,
 *     without embedding tables (what Korthikanti et al. 2022 Figure 1 reports)
 * @param expertStatesBytes the part of the model states held for a mixture of experts' routed
 *     experts (their weights, gradients and optimizer states after expert parallelism and ZeRO
 *     sharding over the expert data-parallel group; 0 for a dense model)
 */
public record MemoryBreakdown(double weightsBytes, double gradientsBytes, double optimizerBytes,
    double activationsBytes, double otherBytes, double layerStatesBytes,
    double expertStatesBytes) {

  /** The memory of a model without routed experts. */
  public MemoryBreakdown(double weightsBytes, double gradientsBytes, double optimizerBytes,
      double activationsBytes, double otherBytes, double layerStatesBytes) {
    this(weightsBytes, gradientsBytes, optimizerBytes, activationsBytes, otherBytes,
        layerStatesBytes, 0.0);
  }

  /** Weights + gradients + optimizer states. */
  public double modelStatesBytes() {
    return weightsBytes + gradientsBytes + optimizerBytes;
  }

  /** Everything on the device. */
  public double totalBytes() {
    return modelStatesBytes() + activationsBytes + otherBytes;
  }
}
