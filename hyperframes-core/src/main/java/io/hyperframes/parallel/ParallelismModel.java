package io.hyperframes.parallel;

import io.hyperframes.model.Block;
import io.hyperframes.model.ModelSpec;
import io.hyperframes.model.TransformerSpec;
import io.hyperframes.precision.Optimizer;
import io.hyperframes.precision.PrecisionRecipe;
import java.util.List;

/**
 * What a layout puts on each device: model states, activations, and the communication volume it
 * adds per step.
 */
public interface ParallelismModel {

  /**
   * Model states of one device of the largest pipeline stage. They depend on the layout's
   * parallel degrees (tp, pp, dp, cp, ep, etp), ZeRO stage, engine, sharding and stage split,
   * never on its micro-batch, interleaving, sequence parallelism, recomputation, dispatcher or
   * overlap: the planner skips a group whose states do not fit and computes one group's states
   * once ({@code Planner}, rule 1), so an implementation must keep that independence.
   */
  ModelStates modelStates(ModelSpec model, Layout layout, PrecisionRecipe precision,
      Optimizer optimizer);

  /**
   * Bytes one instance of {@code block} keeps for the backward pass, per token a device holds
   * of a micro-batch, under the layout's parallelism and recomputation policy. Blocks outside
   * the transformer layers (the embedding, the output head, the multi-token-prediction modules,
   * which {@link #activationBytes} counts as extra layers) keep 0 here.
   *
   * @param model the model the block belongs to ({@link TransformerSpec#blocks()})
   */
  double activationBytesPerToken(TransformerSpec model, Block block, Layout layout,
      PrecisionRecipe precision);

  /**
   * Activation bytes one transformer layer keeps for backward, per micro-batch and device: the
   * layers' blocks ({@link #activationBytesPerToken}) averaged over the layers, times the
   * tokens a device holds of a micro-batch, {@code s/cp · b} (a context-parallel rank holds
   * s/cp of each sequence).
   */
  default double activationBytesPerLayer(TransformerSpec model, Layout layout,
      PrecisionRecipe precision) {
    return activationBytesPerLayer(model, model.blocks(), layout, precision);
  }

  /**
   * {@link #activationBytesPerLayer(TransformerSpec, Layout, PrecisionRecipe)} over the model's
   * blocks as the caller already holds them ({@code model.blocks()}): the estimators evaluate
   * many layouts of one model and build its blocks once.
   */
  default double activationBytesPerLayer(TransformerSpec model, List<Block> blocks,
      Layout layout, PrecisionRecipe precision) {
    double sum = 0.0;
    for (Block block : blocks) {
      sum += block.count() * activationBytesPerToken(model, block, layout, precision);
    }
    return sum / model.layers() * ((double) model.seqLen() / layout.cp()) * layout.microBatch();
  }

  /**
   * Activation bytes on the device that holds the most: the first pipeline stage, with every
   * micro-batch in flight under the 1F1B schedule.
   *
   * @param microBatches micro-batches per step per data-parallel rank
   */
  default double activationBytes(TransformerSpec model, Layout layout,
      PrecisionRecipe precision, int microBatches) {
    return activationBytes(model, model.blocks(), layout, precision, microBatches);
  }

  /**
   * {@link #activationBytes(TransformerSpec, Layout, PrecisionRecipe, int)} over the model's
   * blocks as the caller already holds them ({@code model.blocks()}).
   */
  double activationBytes(TransformerSpec model, List<Block> blocks, Layout layout,
      PrecisionRecipe precision, int microBatches);

  /** Bytes of one tensor-parallel collective (the [s, b, h] activation tensor). */
  double tensorParallelMessageBytes(TransformerSpec model, Layout layout,
      PrecisionRecipe precision);

  /**
   * Tensor-parallel collectives per layer and micro-batch: 2 in forward and 2 in backward
   * (Shoeybi et al. 2019, §3, the f and g operators), 2 more when the forward pass is recomputed.
   * With sequence parallelism each all-reduce becomes a reduce-scatter plus an all-gather of the
   * same total volume (Korthikanti 2022, §4.2.2), counted as one all-reduce here.
   */
  int tensorParallelCollectivesPerLayer(Layout layout);

  /** Bytes of one pipeline point-to-point transfer per micro-batch and direction. */
  double pipelineMessageBytes(TransformerSpec model, Layout layout, PrecisionRecipe precision);

  /** Megatron-LM's scheme: layers split evenly, embeddings on the first and last stage. */
  static ParallelismModel megatron() {
    return MegatronParallelism.INSTANCE;
  }
}
