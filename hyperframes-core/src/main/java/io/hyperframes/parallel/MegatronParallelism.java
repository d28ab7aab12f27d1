package io.hyperframes.parallel;

import io.hyperframes.model.Block;
import io.hyperframes.model.ModelSpec;
import io.hyperframes.model.MoeSpec;
import io.hyperframes.model.TransformerSpec;
import io.hyperframes.precision.Optimizer;
import io.hyperframes.precision.PrecisionRecipe;
import java.util.List;

/**
 * Tensor, pipeline, sequence and data parallelism as Megatron-LM implements them, with ZeRO
 * sharding of the model states.
 *
 * <p>Model states (Rajbhandari et al. 2020, arXiv 1910.02054, §5.1 and Figure 1): with Ψ
 * parameters on a device, w, g, k bytes per parameter of weights, gradients and optimizer state
 * and N data-parallel ranks, stage 0 holds (w + g + k)Ψ, stage 1 (w + g + k/N)Ψ, stage 2
 * (w + (g + k)/N)Ψ, stage 3 (w + g + k)Ψ/N.
 *
 * <p>Activations per layer (Korthikanti et al. 2022, arXiv 2205.05198, §4, equations 1-5), with
 * s sequence, b micro-batch, h hidden, a heads, t tensor-parallel size, 16-bit activations:
 * sbh(34 + 5as/h) without parallelism; sbh(10 + 24/t + 5as/(ht)) with tensor parallelism;
 * sbh/t·(34 + 5as/h) with sequence parallelism; the 5as/h term vanishes with selective
 * recomputation; full recomputation keeps only the layer input, 2sbh (÷t with sequence
 * parallelism). The 34 decomposes as: LayerNorms 4, QKV input 2, Q and K 4, V 2, projection input
 * 2, attention dropout mask 1, MLP input 2, MLP activations 16 (8 + 8 for f = 4h), MLP dropout
 * mask 1. GQA shrinks K and V to kvHeads·headDim; a gated MLP keeps gate, up and product
 * (3 × 2sbf); LLaMA-style models have no dropout masks. The first pipeline stage holds
 * activations of all L layers (p micro-batches of L/p layers), times 1 + (p-1)/(pv) with v
 * interleaved stages (§4.2.3).
 */
enum MegatronParallelism implements ParallelismModel {
  INSTANCE;

  @Override
  public ModelStates modelStates(ModelSpec model, Layout layout, PrecisionRecipe precision,
      Optimizer optimizer) {
    double params;
    double layerParams;
    double expertParams = 0.0;
    if (model instanceof TransformerSpec t) {
      // Decoder layers of the first, a middle and the last pipeline rank (Layout#stageLayers).
      int[] stages = layout.stageLayers(t.layers());
      double[] layers = new double[3];
      double[] experts = new double[3];
      for (int i = 0; i < 3; i++) {
        layers[i] = stages[i] * t.parametersPerLayer() / layout.tp();
        if (t.isMoe()) {
          // Routed experts split over the expert-parallel group, each of them over the expert
          // tensor-parallel group: this rank holds 1/etp of E / ep of each MoE layer's experts.
          double all = stages[i] * t.moeLayerShare() * t.moe().experts()
              * t.mlpParameters(t.moe().expertFfnHidden());
          experts[i] = all / layout.etp() / layout.ep();
          layers[i] -= all / layout.tp() - experts[i];
        }
      }
      double embedding = (double) t.vocab() * t.hidden() / layout.tp();
      double positions = t.gatedMlp() ? 0.0 : (double) t.seqLen() * t.hidden();
      double first = layers[0] + embedding + positions;
      // The last stage holds the output layer: a copy of the tied embedding when pp > 1, the
      // untied output matrix otherwise (Megatron-LM, word-embedding sharing across stages).
      double output = (!t.tiedEmbeddings() || layout.pp() > 1) ? embedding : 0.0;
      // The last stage also holds the multi-token-prediction modules (0 without them), whose
      // routed experts split over the expert-parallel group as the decoder's do.
      double mtpRouted = t.mtpRoutedExpertParameters();
      double mtpExperts = mtpRouted / layout.etp() / layout.ep();
      double mtp = (t.mtpParameters() - mtpRouted) / layout.tp() + mtpExperts;
      double last = layers[2] + output + t.hidden() + mtp;
      double middle = layout.pp() > 2 ? layers[1] : 0.0;
      if (layout.pp() == 1) {
        params = first + (t.tiedEmbeddings() ? 0.0 : embedding) + t.hidden() + mtp;
        layerParams = layers[0];
        expertParams = experts[0] + mtpExperts;
      } else if (last > first && last >= middle) {
        params = last;
        layerParams = layers[2];
        expertParams = experts[2] + mtpExperts;
      } else if (first >= middle) {
        params = first;
        layerParams = layers[0];
        expertParams = experts[0];
      } else {
        params = middle;
        layerParams = layers[1];
        expertParams = experts[1];
      }
    } else {
      // A dense stack or a bare count: no tensor or pipeline split of its own (the estimator
      // refuses tp or pp > 1 for a dense stack); every parameter sits on every replica.
      params = model.parameters() / ((double) layout.tp() * layout.pp());
      layerParams = params;
    }
    double w = precision.weightBytes();
    double g = precision.gradientBytes();
    double k = precision.masterBytes() + optimizer.stateBytesPerParameter();
    // ZeRO shards over the shard group (all data-parallel ranks unless hybrid sharding).
    double n = layout.zeroStage() == 0 ? layout.dp() : layout.shardRanks();
    int z = layout.zeroStage();
    // Expert weights shard over the expert data-parallel ranks (tp·dp / (ep·etp); Megatron-Core's
    // distributed optimizer and Megatron-FSDP shard expert states over that group), the rest
    // over the shard group.
    double ne = Math.max(1.0, n * layout.tp() / ((double) layout.ep() * layout.etp()));
    double dense = params - expertParams;
    double weights = dense * w / (z >= 3 ? n : 1.0) + expertParams * w / (z >= 3 ? ne : 1.0);
    double grads = dense * g / (z >= 2 ? n : 1.0) + expertParams * g / (z >= 2 ? ne : 1.0);
    double opt = dense * k / (z >= 1 ? n : 1.0) + expertParams * k / (z >= 1 ? ne : 1.0);
    double layerShare = params > 0 ? layerParams / params : 0.0;
    double expertStates = expertParams * (w / (z >= 3 ? ne : 1.0) + g / (z >= 2 ? ne : 1.0)
        + k / (z >= 1 ? ne : 1.0));
    return new ModelStates(weights, grads, opt, (weights + grads + opt) * layerShare, params,
        expertStates, expertParams);
  }

  @Override
  public double activationBytesPerToken(TransformerSpec m, Block block, Layout l,
      PrecisionRecipe precision) {
    double e = precision.activationBytes();
    double t = l.tp();
    double sp = l.sequenceParallel() ? t : 1.0;
    boolean full = l.recompute() == Recompute.FULL;
    if (block instanceof Block.Attention a) {
      // Full recomputation keeps only each layer's input, the input of its attention.
      return full ? e * m.hidden() / sp : attentionBytesPerToken(m, a, l, e, m.seqLen(), t, sp);
    }
    if (full) {
      return 0.0;
    }
    if (block instanceof Block.Mlp mlp) {
      return mlpInputBytesPerToken(m, l, e, sp)
          + (l.recomputes(RecomputeModule.MLP) ? 0.0 : passes(m) * e * mlp.ffnHidden() / t);
    }
    if (block instanceof Block.Moe moe) {
      return mlpInputBytesPerToken(m, l, e, sp) + moeBytesPerToken(moe, l, e, t);
    }
    // The norms' inputs are the attention's and the MLP's inputs, counted there. The embedding
    // and the output head are not layers, whose activations alone this model counts (the
    // output's logits are not counted); the MTP modules count as extra layers
    // (#activationBytes).
    return 0.0;
  }

  /** Stored inner activations of a (gated) MLP: gate, up and their product, or input and GeLU. */
  private static double passes(TransformerSpec m) {
    return m.gatedMlp() ? 3 : 2;
  }

  /**
   * What one layer's attention stores per token (Korthikanti et al. 2022 §4.1): the first norm's
   * input (replicated, or split by sequence parallelism), the QKV input (dropped by the
   * {@code layernorm} module, rebuilt from the stored residual), GPT style the output dropout's
   * mask (one byte); Q, K, V and the output projection's input, split by tensor parallelism (Q, K
   * and V dropped by {@code mla_up_proj}, which keeps the latents instead, on every rank); and
   * the core's scores over the whole sequence, per head (softmax output, GPT style its dropout
   * mask and output), dropped by {@code core_attn}.
   */
  private static double attentionBytesPerToken(TransformerSpec m, Block.Attention a, Layout l,
      double e, double s, double t, double sp) {
    boolean dropout = !m.gatedMlp();
    double h = m.hidden();
    double replicated = h * (e /* norm input */
        + (l.recomputes(RecomputeModule.LAYERNORM) ? 0.0 : e) /* QKV input */
        + (dropout ? 1.0 : 0.0) /* output dropout mask */);
    double q = a.qDim();
    double qkv = e * (q + 2.0 * a.kvDim());
    boolean upProj = a.mla() != null && l.recomputes(RecomputeModule.MLA_UP_PROJ);
    if (upProj) {
      replicated += e * (a.mla().qLoraRank() + a.mla().kvLoraRank() + a.mla().qkRopeHeadDim());
    }
    double sharded = (upProj ? 0.0 : qkv) + e * q /* output projection input */;
    double core = 0.0;
    if (!l.recomputes(RecomputeModule.CORE_ATTN)) {
      // softmax output (e), dropout mask (1) and dropout output (e) per score; no dropout: e.
      double perScore = dropout ? 2 * e + 1 : e;
      core = perScore * m.heads() * s;
    }
    return replicated / sp + (sharded + core) / t;
  }

  /**
   * What one layer's MLP side stores per token whatever its kind: the second norm's input, the
   * MLP input (dropped by {@code layernorm}) and GPT style the MLP dropout's mask (one byte),
   * replicated or split by sequence parallelism.
   */
  private static double mlpInputBytesPerToken(TransformerSpec m, Layout l, double e,
      double sp) {
    double mask = m.gatedMlp() ? 0.0 : 1.0;
    double input = l.recomputes(RecomputeModule.LAYERNORM) ? 0.0 : e;
    return m.hidden() * (e + input + mask) / sp;
  }

  /**
   * What one MoE layer stores per token beyond its input, split by tensor parallelism: the
   * routed experts' inner activations for the k·f_e (times the capacity factor) rows a token
   * makes, and the shared experts'. {@code moe} drops them all, {@code moe_act} the routed
   * experts' activation output (k·f_e, the second matmul's input), {@code shared_experts} the
   * shared part. Each routed expert also keeps its first matmul's input (Korthikanti et al.
   * 2022 §4.1: each linear layer keeps its input): the dispatched token copies, k·h per token,
   * not the normalised input the dense MLP's first matmul shares with the router. A rank holds
   * the copies its expert tensor-parallel group routes: etp/tp of the tensor-parallel group's
   * (Megatron-Core's dispatcher; as the expert matmuls' rows in TrainingEstimator). Without
   * routing (E = 1) the input is the normalised one. {@code moe} reruns the whole layer from
   * its input and drops the copies too.
   */
  private static double moeBytesPerToken(Block.Moe block, Layout l, double e, double t) {
    MoeSpec moe = block.moe();
    double passes = block.gated() ? 3 : 2;
    if (l.recomputes(RecomputeModule.MOE)) {
      return 0.0;
    }
    double routed = moe.routedPerToken() * moe.expertFfnHidden();
    double shared = moe.sharedExperts() * (double) moe.sharedExpertFfnHidden();
    double experts = passes * e * routed
        - (l.recomputes(RecomputeModule.MOE_ACT) ? e * routed : 0.0)
        + (l.recomputes(RecomputeModule.SHARED_EXPERTS) ? 0.0 : passes * e * shared);
    double dispatched = moe.routed()
        ? e * moe.routedPerToken() * block.hidden() * l.etp() / t : 0.0;
    return experts / t + dispatched;
  }

  @Override
  public double activationBytes(TransformerSpec m, List<Block> blocks, Layout l,
      PrecisionRecipe precision, int microBatches) {
    double perLayer = activationBytesPerLayer(m, blocks, l, precision);
    int p = l.pp();
    // The largest rank's layers (the multi-token prediction on the last), every rank counted
    // with the first rank's micro-batches in flight, as for an even split.
    int[] stages = l.stageLayers(m.layers());
    double layersPerStage = Math.max(Math.max(stages[0], stages[1]), stages[2] + m.mtpLayers());
    double inFlight = Math.min(p, Math.max(1, microBatches));
    double factor = l.virtualStages() > 1 && microBatches >= p
        ? 1.0 + (p - 1.0) / (p * (double) l.virtualStages()) : 1.0;
    // Korthikanti's accounting: the transient working set of the layer being recomputed is not
    // counted (it is freed layer by layer and is covered by the runtime reserve).
    return perLayer * layersPerStage * inFlight * factor;
  }

  @Override
  public double tensorParallelMessageBytes(TransformerSpec m, Layout l, PrecisionRecipe precision) {
    // A context-parallel rank's tokens: s/cp of each sequence.
    return (double) m.seqLen() / l.cp() * l.microBatch() * m.hidden()
        * precision.activationBytes();
  }

  @Override
  public int tensorParallelCollectivesPerLayer(Layout l) {
    if (l.tp() == 1) {
      return 0;
    }
    return l.recompute() == Recompute.FULL ? 6 : 4;
  }

  @Override
  public double pipelineMessageBytes(TransformerSpec m, Layout l, PrecisionRecipe precision) {
    // Scatter/gather optimisation: each tensor-parallel rank sends 1/t of the tensor
    // (Narayanan et al. 2021, §4.1).
    return tensorParallelMessageBytes(m, l, precision) / l.tp();
  }
}
