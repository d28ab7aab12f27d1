package io.hyperframes.parallel;

import io.hyperframes.model.ModelSpec;
import io.hyperframes.model.TransformerSpec;
import io.hyperframes.precision.Optimizer;
import io.hyperframes.precision.PrecisionRecipe;

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
        expertStates);
  }

  @Override
  public double activationBytesPerLayer(TransformerSpec m, Layout l, PrecisionRecipe precision) {
    double s = m.seqLen();
    // Context parallelism: each rank keeps the activations of its s/cp tokens, and its queries'
    // scores over the whole sequence (Megatron-Core context parallelism).
    double sq = s / l.cp();
    double b = l.microBatch();
    double h = m.hidden();
    double f = m.activeFfnHidden();
    double t = l.tp();
    double kv = m.kvDim();
    double e = precision.activationBytes();
    double sp = l.sequenceParallel() ? t : 1.0;
    double sb = sq * b;
    if (l.recompute() == Recompute.FULL) {
      return e * sb * h / sp;
    }
    boolean dropout = !m.gatedMlp();
    // Replicated across the tensor-parallel group unless sequence parallelism shards them.
    double replicated = sb * h * (e /* LN1 input */ + e /* QKV input */ + e /* LN2 input */
        + e /* MLP input */ + (dropout ? 2.0 : 0.0) /* two dropout masks */);
    // Sharded by tensor parallelism.
    double q = m.qDim();
    double attention = sb * (e * q /* Q */ + e * kv /* K */ + e * kv /* V */ + e * q /* proj in */);
    double mlp = m.gatedMlp() ? sb * f * e * 3 : sb * f * e * 2;
    double sharded = attention + mlp;
    // A routed MoE layer's experts store their first matmul's input for its weight gradient
    // (Korthikanti et al. 2022 §4.1: each linear layer keeps its input): the dispatched token
    // copies, k·h per token, not the normalised input the dense MLP's first matmul shares with
    // the router. A rank holds the copies of the tokens its expert tensor-parallel group routes:
    // etp/tp of the tensor-parallel group's (Megatron-Core's dispatcher; as the expert matmuls'
    // rows in TrainingEstimator). Without routing (E = 1) the input is the normalised one.
    double dispatched = m.isMoe() && m.moe().routed()
        ? e * sb * m.moe().routedPerToken() * h * m.moeLayers() / m.layers()
            * l.etp() / t : 0.0;
    if (!l.recomputeModules().isEmpty()
        && !l.recomputeModules().equals(RecomputeModule.DEFAULT)) {
      replicated -= droppedReplicated(m, l, sb, e);
      sharded -= droppedSharded(m, l, sb, e);
    }
    double core = 0.0;
    if (!l.recomputes(RecomputeModule.CORE_ATTN)) {
      // softmax output (e), dropout mask (1) and dropout output (e) per score; no dropout: e.
      double perScore = dropout ? 2 * e + 1 : e;
      core = perScore * m.heads() * sq * s * b;
    }
    if (l.recomputes(RecomputeModule.MOE)) {
      // The whole MoE layer reruns from its input: its dispatched copies are rebuilt too.
      dispatched = 0.0;
    }
    return replicated / sp + (sharded + core) / t + dispatched;
  }

  /**
   * Replicated bytes per layer (averaged over the layers) that the selectively recomputed
   * modules do not store: with {@code layernorm} the two normalisations' outputs (Korthikanti's
   * "QKV input" and "MLP input", 2sbh each in 16 bits), rebuilt from the stored residual; with
   * {@code mla_up_proj} nothing replicated (the latents it keeps are counted below).
   */
  private static double droppedReplicated(TransformerSpec m, Layout l, double sb, double e) {
    double dropped = 0.0;
    if (l.recomputes(RecomputeModule.LAYERNORM)) {
      dropped += sb * m.hidden() * 2 * e;
    }
    if (l.recomputes(RecomputeModule.MLA_UP_PROJ) && m.mla() != null) {
      // The query and key-value latents (and the shared rotary key) stay stored as the
      // up-projections' inputs: negative drop, kept on every tensor-parallel rank.
      dropped -= sb * e * (m.mla().qLoraRank() + m.mla().kvLoraRank() + m.mla().qkRopeHeadDim());
    }
    return dropped;
  }

  /**
   * Tensor-parallel-sharded bytes per layer (averaged over the layers) that the selectively
   * recomputed modules do not store, from the MLP's 3sbf (gated: gate, up and their product; 2sbf
   * plain) split into the dense layers', the routed experts' (k·f_e per token) and the shared
   * experts' parts: {@code mlp} drops the dense layers' part, {@code moe} the routed and shared
   * parts, {@code moe_act} the routed experts' activation output (sbf_e·k, the second matmul's
   * input), {@code shared_experts} the shared part; {@code mla_up_proj} drops Q, K and V.
   */
  private static double droppedSharded(TransformerSpec m, Layout l, double sb, double e) {
    double passes = m.gatedMlp() ? 3 : 2;
    double layers = m.layers();
    double dropped = 0.0;
    if (l.recomputes(RecomputeModule.MLP)) {
      dropped += passes * e * sb * m.ffnHidden() * m.denseLayers() / layers;
    }
    if (m.isMoe()) {
      double share = m.moeLayers() / layers;
      double routed = m.moe().routedPerToken() * m.moe().expertFfnHidden();
      double shared = m.moe().sharedExperts() * (double) m.moe().sharedExpertFfnHidden();
      if (l.recomputes(RecomputeModule.MOE)) {
        dropped += passes * e * sb * (routed + shared) * share;
      } else {
        if (l.recomputes(RecomputeModule.MOE_ACT)) {
          dropped += e * sb * routed * share;
        }
        if (l.recomputes(RecomputeModule.SHARED_EXPERTS)) {
          dropped += passes * e * sb * shared * share;
        }
      }
    }
    if (l.recomputes(RecomputeModule.MLA_UP_PROJ) && m.mla() != null) {
      dropped += sb * e * (m.qDim() + 2.0 * m.kvDim());
    }
    return dropped;
  }

  @Override
  public double activationBytes(TransformerSpec m, Layout l, PrecisionRecipe precision,
      int microBatches) {
    double perLayer = activationBytesPerLayer(m, l, precision);
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
