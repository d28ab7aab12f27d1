package io.hyperframes.plan;

import io.hyperframes.hardware.Accelerator;
import io.hyperframes.hardware.KernelEfficiency;
import io.hyperframes.interconnect.CollectiveGroup;
import io.hyperframes.interconnect.ExpertExchange;
import io.hyperframes.memory.MemoryHierarchyModel;
import io.hyperframes.model.Block;
import io.hyperframes.model.MoeSpec;
import io.hyperframes.model.TransformerSpec;
import io.hyperframes.parallel.Layout;
import io.hyperframes.parallel.MoeDispatcher;
import io.hyperframes.parallel.Recompute;
import io.hyperframes.parallel.RecomputeModule;
import io.hyperframes.precision.NumberFormat;
import io.hyperframes.precision.PrecisionRecipe;
import io.hyperframes.precision.model.PrecisionModel;
import io.hyperframes.workload.Attention;
import io.hyperframes.workload.Kernels;
import io.hyperframes.workload.TrainingWorkload;
import java.util.List;

/**
 * One transformer layer of a training step on one rank, averaged over the model's layer blocks:
 * its forward, forward plus backward, and recomputation seconds, with the matmul, attention,
 * element-wise, permutation and FP8-cast terms they are made of (docs/model-reference.md,
 * "Step time"). Part of {@link TrainingEstimator}, which chains layers into stages, micro-batches
 * and the step; made once per evaluated layout.
 */
final class LayerTime {
  private final MemoryHierarchyModel memoryModel;
  private final TransformerSpec m;
  private final Layout l;
  private final double peak;
  private final Accelerator acc;
  final PrecisionRecipe recipe;
  /** Activation bytes per element. */
  private final double e;
  private final double tp;
  private final double s;
  /** The rank's queries per sequence (s / cp). */
  final double sq;
  private final double b;
  private final double h;
  /** Tokens of one micro-batch on this rank. */
  final double tokens;
  /** Sustained streaming bandwidth. */
  final double bandwidth;
  private final double hd;
  private final double headsPerRank;
  /** The compute format and its kernel efficiencies. */
  private final NumberFormat c;
  final KernelEfficiency kernel;
  private final NumberFormat attnFormat;
  private final double attnPeak;
  private final boolean dropout;
  /** The sequence-parallel divisor (tp with sequence parallelism, else 1). */
  private final double sp;
  /** Matmul seconds of one layer's forward, and those of its MLP (dense or MoE). */
  double tDense;
  double tMlp;
  private double tAttn;
  private double pairShare;
  private double replicatedBytes;
  private double shardedBytes;
  private double core;
  /** The bandwidth element-wise kernels stream at. */
  private final double ewBandwidth;
  /** One layer's forward, and forward plus backward. */
  double forward;
  double layerTraining;
  /** The attention a context-parallel exchange can hide behind, forward and backward. */
  double attnForward;
  double attnBackward;
  /** One layer's recomputation. */
  double recompute;

  LayerTime(MemoryHierarchyModel memoryModel, PrecisionModel precisionModel, TransformerSpec m,
      List<Block> blocks, Accelerator acc, TrainingWorkload w, Layout l, double peak) {
    this.memoryModel = memoryModel;
    this.m = m;
    this.l = l;
    this.peak = peak;
    this.acc = acc;
    this.recipe = w.precision();
    this.e = recipe.activationBytes();
    this.tp = l.tp();
    this.s = m.seqLen();
    // Context parallelism: the rank's queries are s/cp of each sequence (two chunks of 2·cp,
    // balanced for causal masking), attending to the keys of the whole sequence.
    this.sq = s / l.cp();
    this.b = l.microBatch();
    this.h = m.hidden();
    this.tokens = sq * b;
    this.bandwidth = memoryModel.streamingBytesPerSecond(acc);

    this.hd = m.headDim();
    this.headsPerRank = m.heads() / tp;
    this.c = recipe.compute();
    this.kernel = acc.kernel(c);
    // FP8 recipes run FP8 in the linear layers only: Transformer Engine's DotProductAttention
    // computes in the activation format (BF16) unless FP8 attention is enabled explicitly.
    this.attnFormat = recipe.attentionFormat(acc::supports);
    this.attnPeak = attnFormat == c ? peak
        : Math.min(peak, precisionModel.peakFlopsPerSecond(acc, attnFormat));
    this.dropout = !m.gatedMlp();
    this.sp = l.sequenceParallel() ? tp : 1.0;

    sumBlocks(blocks);
    // Element-wise kernels stream at their format's fitted fraction of the sustained bandwidth
    // (KernelEfficiency#elementwiseBandwidthFraction; docs/model-reference.md, "Element-wise
    // bandwidth"): the activation format's kernels, BF16 in an FP8 recipe. The optimizer step
    // has its own fraction.
    double norms = 2 * 2 * e * tokens * h;
    this.ewBandwidth = elementwiseBytesPerSecond(memoryModel, acc, recipe);
    double tElementwise = (replicatedBytes / sp + shardedBytes) / ewBandwidth;
    if (w.kernels() == Kernels.EAGER) {
      tElementwise += eagerExtraBytes(m, l, e, tokens, dropout) / ewBandwidth;
    }
    double tCore = core / ewBandwidth;

    this.forward = tDense + tAttn + tElementwise + tCore;
    // The attention a context-parallel exchange can hide behind: forward, and backward (the two
    // products' gradients, twice the forward).
    this.attnForward = tAttn + tCore;
    this.attnBackward = 2 * attnForward;
    // Selective recomputation reruns the forward of the modules it names (Megatron-Core
    // --recompute-modules; core_attn, its default, is the attention core).
    double modules = moduleRecomputeSeconds(m, acc, l, tokens, e, c, peak, ewBandwidth,
        norms / sp);
    this.recompute = switch (l.recompute()) {
      case FULL -> forward;
      case SELECTIVE -> (l.recomputes(RecomputeModule.CORE_ATTN) ? tAttn + tCore : 0.0)
          + modules;
      case NONE -> 0.0;
    };
    // One layer's forward, backward (twice the forward) and recomputation.
    this.layerTraining = 3 * forward;
    if (w.attentionOn(acc, l.engine()) == Attention.FLASH) {
      // FlashAttention-2 (Dao 2023, arXiv 2307.08691, §3): scores stay on chip (no element-wise
      // passes over them), causal tiles above the diagonal are skipped ((n+1)/2n of n×n tiles of
      // 128, Attention#causalTileShare), and the backward recomputes the scores: five matmuls
      // against the forward's two.
      // Sliding windows: a windowed layer's kernel computes only the band of tiles inside its
      // window (FlashAttention-2's window_size; TransformerSpec#attentionPairShare). An unfused
      // kernel computes every score and masks, so the eager path below is not reduced.
      double causal = Attention.causalTileShare(s) * pairShare;
      double fused = (attnFormat == c ? kernel : acc.kernel(attnFormat)).attention();
      // With a fitted fused-attention efficiency the kernel runs its executed FLOPs (the two
      // score and value products, 4·b·s²·h/t, causal tiles only) at that fraction of the peak.
      double tFlash = fused > 0
          ? 4.0 * b * sq * s * hd * headsPerRank * causal / (attnPeak * fused)
          : tAttn * causal;
      forward = tDense + tElementwise + tFlash;
      attnForward = tFlash;
      attnBackward = 2.5 * tFlash;
      layerTraining = 3 * (tDense + tElementwise) + 3.5 * tFlash;
      recompute = l.recompute() == Recompute.FULL ? forward : modules;
    }
    addPermutationAndCasts();
  }

  /**
   * Adds an MoE layer's token permutation and an FP8 recipe's casts: element-wise passes
   * around the exchange and the linear layers, forward, backward and recomputed.
   */
  private void addPermutationAndCasts() {
    // MoE token permutation around the exchange (#moePermutationBytesPerToken): element-wise
    // traffic of the MoE layers, forward; its backward moves the same bytes the other way (the
    // gradient of a gather is a scatter), and it reruns with the layer under full or MoE-module
    // recomputation.
    if (m.isMoe() && m.moe().routed()) {
      double tPermute = moePermutationBytesPerToken(m, l, e) * tokens / ewBandwidth;
      forward += tPermute;
      layerTraining += 2 * tPermute;
      if (l.recompute() == Recompute.FULL || l.recomputes(RecomputeModule.MOE)) {
        recompute += tPermute;
      }
    }
    // FP8 linear layers: every input is cast to FP8 in the forward pass and every output
    // gradient in the backward, each read once in the activation format and written twice in
    // FP8 (row-wise and the transposed copy Hopper's TN-only FP8 GEMMs need for the other
    // product: Transformer Engine, "Performance considerations", handling transposes).
    if (c.isFp8()) {
      double[] cast = fp8CastBytesPerToken(m, l, e);
      double tCastForward = cast[0] * tokens / ewBandwidth;
      double tCastBackward = cast[1] * tokens / ewBandwidth;
      forward += tCastForward;
      layerTraining += tCastForward + tCastBackward;
      if (l.recompute() == Recompute.FULL) {
        recompute += tCastForward;
      }
    }
  }

  /** The blocks' matmul, attention and element-wise terms, each weighted by its layers. */
  private void sumBlocks(List<Block> blocks) {
    // One layer's forward, summed over the model's layer blocks (TransformerSpec#blocks), each
    // weighted by its share of the layers:
    // - matmuls (tDense): attention's QKV and output projection; a dense MLP's up (gate and up
    //   for a gated MLP) and down; an MoE layer's router, routed and shared experts (#withMlp);
    // - the attention products QKᵀ and A·V per head (tAttn; an unfused kernel computes every
    //   score, windowed or not) and, for a fused kernel, the share of query-key pairs the
    //   layers' windows keep;
    // - element-wise bytes read and written: each side's norm (2e·h) and residual add
    //   (3e·h, a dropout mask more GPT style), split by sequence parallelism; the MLP's
    //   activation over its inner columns (3e per column gated, 2e GeLU), split by tp; the
    //   attention core's passes over the scores (softmax, GPT style dropout and its mask).
    double layers = m.layers();
    double sideBytes = (2 * e + 3 * e + (dropout ? 1 : 0)) * tokens * h;
    double passes = m.gatedMlp() ? 3 : 2;
    // Every attention block has the model's shapes (only its window differs): its matmuls,
    // products and core bytes are computed once.
    double attentionMatmuls = memoryModel.matmulSeconds(acc, tokens, m.qkvWidth() / tp, h, 1, e,
        c, peak) + memoryModel.matmulSeconds(acc, tokens, h, m.valueDim() / tp, 1, e, c, peak);
    double attentionProducts = memoryModel.matmulSeconds(acc, sq, s, hd, b * headsPerRank, e,
        attnFormat, attnPeak) + memoryModel.matmulSeconds(acc, sq, hd, s, b * headsPerRank, e,
            attnFormat, attnPeak);
    double coreBytes = (dropout ? 4 * e + 1 : 2 * e) * m.heads() * sq * s * b / tp;
    for (Block block : blocks) {
      double share = block.count() / layers;
      if (block instanceof Block.Attention a) {
        tDense += share * attentionMatmuls;
        tAttn += share * attentionProducts;
        pairShare += share * a.pairShare();
        replicatedBytes += share * sideBytes;
        core += share * coreBytes;
      } else if (block instanceof Block.Mlp mlp) {
        double f = mlp.ffnHidden() / tp;
        double t = share * mlpMatmuls(m, acc, tokens, f, e, c, peak);
        tDense += t;
        tMlp += t;
        replicatedBytes += share * sideBytes;
        shardedBytes += share * passes * e * tokens * f;
      } else if (block instanceof Block.Moe moe) {
        // With expert parallelism this rank computes E / ep experts over the tokens the ep
        // ranks route to them (#moeExpertSeconds).
        double t = share * (moeRouterSeconds(m, acc, tokens, e, c, peak)
            + moeExpertSeconds(m, acc, tokens, tp, l.ep(), l.etp(), e, c, peak)
            + moeSharedSeconds(m, acc, tokens, tp, e, c, peak));
        tDense += t;
        tMlp += t;
        MoeSpec spec = moe.moe();
        double inner = spec.routedPerToken() * spec.expertFfnHidden()
            + spec.sharedExperts() * (double) spec.sharedExpertFfnHidden();
        replicatedBytes += share * sideBytes;
        shardedBytes += share * passes * e * tokens * inner / tp;
      }
    }
  }

  /**
   * Logits and loss of one micro-batch on the last stage: three matmul passes plus the
   * cross-entropy softmax.
   */
  double logitsSeconds() {
    double logitBytes = tokens * m.vocab() / tp * (e + 16.0);
    return 3 * memoryModel.matmulSeconds(acc, tokens, m.vocab() / tp, h, 1, e, c, peak)
        + logitBytes / ewBandwidth;
  }

  /**
   * What the last pipeline rank computes a micro-batch beyond its layers: the logits and loss
   * ({@code logits}, {@link #logitsSeconds}) and per multi-token-prediction module the 2h-to-h
   * projection (three matmul passes), a block like an average layer with its per-layer overhead
   * and its own pass through the output head (DeepSeek-V3 §2.2).
   */
  double lastRankCompute(double logits) {
    double out = logits;
    if (m.mtpLayers() > 0) {
      out += m.mtpLayers() * (layerTraining + kernel.layerOverheadSeconds() + logits
          + mtpProjectionSeconds());
    }
    return out;
  }

  /** The last pipeline rank's recomputation beyond its layers: its prediction modules'. */
  double lastRankRecompute() {
    return m.mtpLayers() > 0 ? m.mtpLayers() * recompute : 0.0;
  }

  /** A multi-token-prediction module's 2h-to-h projection: three matmul passes. */
  double mtpProjectionSeconds() {
    return 3 * memoryModel.matmulSeconds(acc, tokens, h, 2 * h / tp, 1, e, c, peak);
  }

  /** The MoE MLP of one MoE layer, forward: router, routed and shared experts. */
  double moeMlpSeconds() {
    return moeRouterSeconds(m, acc, tokens, e, c, peak)
        + moeExpertSeconds(m, acc, tokens, tp, l.ep(), l.etp(), e, c, peak)
        + moeSharedSeconds(m, acc, tokens, tp, e, c, peak);
  }

  /** The router's matmul of one MoE layer, forward (tokens × E × h, replicated over tp). */
  private double moeRouterSeconds(TransformerSpec m, Accelerator acc, double tokens, double e,
      NumberFormat c, double peak) {
    return m.moe().routed() ? memoryModel.matmulSeconds(acc, tokens, m.moe().experts(),
        m.hidden(), 1, e, c, peak) : 0.0;
  }

  /**
   * The routed experts' matmuls of one MoE layer on one rank, forward. With expert parallelism
   * this rank computes E / ep experts over the tokens the ep ranks route to them: the same
   * routed rows in all, tokens·k·ep/E per expert. The expert tensor-parallel group gathers the
   * tokens its etp ranks hold (etp/tp of the tensor-parallel group's, which sequence
   * parallelism splits over tp) and splits each expert's columns etp ways: FLOPs as with
   * etp = tp, wider and shorter matmuls with etp < tp.
   */
  private double moeExpertSeconds(TransformerSpec m, Accelerator acc, double tokens, double tp,
      int ep, int etp, double e, NumberFormat c, double peak) {
    MoeSpec moe = m.moe();
    double routed = tokens * (etp / tp) * moe.routedPerToken();
    double local = (double) moe.experts() / ep;
    return local * mlpMatmuls(m, acc, routed / local, moe.expertFfnHidden() / (double) etp, e,
        c, peak);
  }

  /** The shared experts' matmuls of one MoE layer on one rank, forward (0 without them). */
  private double moeSharedSeconds(TransformerSpec m, Accelerator acc, double tokens, double tp,
      double e, NumberFormat c, double peak) {
    MoeSpec moe = m.moe();
    return moe.sharedExperts() > 0 ? mlpMatmuls(m, acc, tokens,
        moe.sharedExperts() * (double) moe.sharedExpertFfnHidden() / tp, e, c, peak) : 0.0;
  }

  /**
   * Forward FLOPs per token of the modules {@link #moduleRecomputeSeconds} reruns, over all
   * layers: 2 per weight of the matmuls they run (the normalisations and activations none).
   */
  static double moduleRecomputeFlopsPerToken(TransformerSpec m, Layout l) {
    double flops = 0.0;
    if (l.recomputes(RecomputeModule.MLP)) {
      flops += 2 * m.denseLayers() * m.mlpParameters(m.ffnHidden());
    }
    if (m.isMoe()) {
      MoeSpec moe = m.moe();
      double shared = moe.sharedExperts() * m.mlpParameters(moe.sharedExpertFfnHidden());
      if (l.recomputes(RecomputeModule.MOE)) {
        flops += 2 * m.moeLayers() * (moe.routedPerToken() * m.mlpParameters(
            moe.expertFfnHidden()) + shared + (moe.routed() ? moe.experts() * m.hidden() : 0.0));
      } else if (l.recomputes(RecomputeModule.SHARED_EXPERTS)) {
        flops += 2 * m.moeLayers() * shared;
      }
    }
    if (l.recomputes(RecomputeModule.MLA_UP_PROJ) && m.mla() != null) {
      io.hyperframes.model.MlaSpec mla = m.mla();
      flops += 2 * m.layers() * m.heads() * ((double) mla.qLoraRank() * mla.qkHeadDim()
          + (double) mla.kvLoraRank() * (mla.qkNopeHeadDim() + mla.vHeadDim()));
    }
    return flops;
  }

  /**
   * Forward seconds, per layer averaged over the layers, of the modules selective recomputation
   * reruns beyond the attention core ({@link RecomputeModule}; Megatron-Core
   * {@code --recompute-modules}): the two normalisations (their element-wise passes,
   * {@code normSeconds·bandwidth} bytes), a dense layer's MLP (matmuls and activation), the whole
   * MoE layer (router, experts, shared experts and their activations; its all-to-all is counted in
   * {@link ActivationExchange#allToAllSecondsPerLayer}), the experts' activation alone, the shared
   * experts, or latent
   * attention's two up-projections. 0 for none of them.
   */
  private double moduleRecomputeSeconds(TransformerSpec m, Accelerator acc, Layout l,
      double tokens, double e, NumberFormat c, double peak, double bandwidth,
      double normBytes) {
    if (l.recomputeModules().isEmpty()
        || l.recomputeModules().equals(RecomputeModule.DEFAULT)) {
      return 0.0;
    }
    double tp = l.tp();
    double layers = m.layers();
    double gatedPasses = m.gatedMlp() ? 3 : 2;
    double seconds = 0.0;
    if (l.recomputes(RecomputeModule.LAYERNORM)) {
      seconds += normBytes / bandwidth;
    }
    if (l.recomputes(RecomputeModule.MLP) && m.denseLayers() > 0) {
      double f = m.ffnHidden() / tp;
      seconds += m.denseLayers() / layers * (mlpMatmuls(m, acc, tokens, f, e, c, peak)
          + gatedPasses * e * tokens * f / bandwidth);
    }
    if (m.isMoe()) {
      MoeSpec moe = m.moe();
      double share = m.moeLayers() / layers;
      double routedF = tokens * moe.routedPerToken() * moe.expertFfnHidden() / tp;
      double sharedF = tokens * moe.sharedExperts() * (double) moe.sharedExpertFfnHidden() / tp;
      if (l.recomputes(RecomputeModule.MOE)) {
        seconds += share * (moeRouterSeconds(m, acc, tokens, e, c, peak)
            + moeExpertSeconds(m, acc, tokens, tp, l.ep(), l.etp(), e, c, peak)
            + moeSharedSeconds(m, acc, tokens, tp, e, c, peak)
            + gatedPasses * e * (routedF + sharedF) / bandwidth);
      } else {
        if (l.recomputes(RecomputeModule.MOE_ACT)) {
          seconds += share * gatedPasses * e * routedF / bandwidth;
        }
        if (l.recomputes(RecomputeModule.SHARED_EXPERTS)) {
          seconds += share * (moeSharedSeconds(m, acc, tokens, tp, e, c, peak)
              + gatedPasses * e * sharedF / bandwidth);
        }
      }
    }
    if (l.recomputes(RecomputeModule.MLA_UP_PROJ) && m.mla() != null) {
      io.hyperframes.model.MlaSpec mla = m.mla();
      // Without query compression (qLoraRank 0) the query projection is no up-projection.
      seconds += (mla.qLoraRank() > 0 ? memoryModel.matmulSeconds(acc, tokens,
          m.heads() * (double) mla.qkHeadDim() / tp, mla.qLoraRank(), 1, e, c, peak) : 0.0)
          + memoryModel.matmulSeconds(acc, tokens,
              m.heads() * (double) (mla.qkNopeHeadDim() + mla.vHeadDim()) / tp,
              mla.kvLoraRank(), 1, e, c, peak);
    }
    return seconds;
  }

  /** Up (or gate and up) and down matmuls of an MLP of {@code f} inner columns per rank. */
  private double mlpMatmuls(TransformerSpec m, Accelerator acc, double rows, double f, double e,
      NumberFormat c, double peak) {
    double h = m.hidden();
    return memoryModel.matmulSeconds(acc, rows, (m.gatedMlp() ? 2 : 1) * f, h, 1, e, c, peak)
        + memoryModel.matmulSeconds(acc, rows, h, f, 1, e, c, peak);
  }

  /**
   * The bandwidth a training layer's element-wise kernels stream at: the sustained bandwidth
   * times the fitted fraction of the format they run in (PrecisionRecipe#elementwiseFormat: the
   * activation format, BF16 in an FP8 recipe).
   */
  static double elementwiseBytesPerSecond(MemoryHierarchyModel memoryModel, Accelerator acc,
      PrecisionRecipe recipe) {
    return memoryModel.streamingBytesPerSecond(acc)
        * acc.kernel(recipe.elementwiseFormat(acc::supports)).elementwiseBandwidthFraction();
  }

  /**
   * Bytes per token of this rank, averaged over the layers, that a routed MoE layer's token
   * permutation moves in its forward pass: the copies of each token sorted by expert before the
   * experts and summed back after them. Counted kernel by kernel from Megatron-Core's dispatchers
   * ({@code megatron/core/transformer/moe/token_dispatcher.py} and {@code moe_utils.py}
   * {@code permute}, {@code unpermute}, {@code sort_chunks_by_idxs} at d98e8a64; Transformer
   * Engine's fused permute reads a token once and writes its copies, its unpermute reads the
   * copies and writes the sum), each kernel reading and writing its rows once at {@code e} bytes
   * per element of the hidden width {@code h}. With {@code T} the tokens a rank holds before the
   * exchange (divided by sequence parallelism), {@code k} the routed copies per token (times a
   * capacity factor, whose padding is moved too) and {@code R = T·k·etp/tp} the rows this rank's
   * experts receive:
   * <ul>
   *   <li>all-to-all: permute before the exchange {@code (1 + k)·T·h}, unpermute after the
   *       combine {@code (k + 1)·T·h}, and with more than one local expert the sort of the
   *       received rows by expert and its inverse ({@code 2·R·h} each);
   *   <li>DeepEP: the dispatch kernel delivers one row per token and destination rank
   *       ({@code ρ/k} of R, ρ the ranks a token reaches, {@link ExpertExchange#ranksPerToken}),
   *       permuted into the experts' R rows and summed back before the combine:
   *       {@code 2·(R·ρ/k + R)·h}.
   * </ul>
   * The router's scores and indices (E or k numbers per token) are not counted. 0 for a model
   * without routing.
   */
  static double moePermutationBytesPerToken(TransformerSpec m, Layout l, double e) {
    if (!m.isMoe() || !m.moe().routed()) {
      return 0.0;
    }
    MoeSpec moe = m.moe();
    double tp = l.tp();
    double sp = l.sequenceParallel() ? tp : 1.0;
    double k = moe.routedPerToken();
    double source = 1.0 / sp;
    double received = k * l.etp() / tp;
    double rows;
    if (l.moeDispatcher() == MoeDispatcher.DEEPEP) {
      // The ranks a token reaches depend on the group's size, not on its nodes.
      ExpertExchange exchange = new ExpertExchange(1.0, 1.0, moe.experts(), moe.topK(),
          new CollectiveGroup(l.ep(), l.ep()), moe.groups(), moe.groupTopK());
      rows = 2 * (received * exchange.ranksPerToken() / moe.topK() + received);
    } else {
      // More than one local expert: the received rows are sorted by expert and back.
      rows = 2 * (1 + k) * source + (moe.experts() > l.ep() ? 4 * received : 0.0);
    }
    return m.moeLayerShare() * rows * m.hidden() * e;
  }

  /**
   * Bytes per token of one layer's FP8 casts on this rank, forward and backward: each linear
   * layer's input (forward) and output gradient (backward) read once at {@code e} bytes and
   * written twice at 1 byte (the FP8 tensor and its transpose; Transformer Engine,
   * "Performance considerations", handling transposes, and {@code CanonicalizeGemmInput} in
   * {@code transformer_engine/common/gemm/cublaslt_gemm.cu}: Hopper runs only TN FP8 GEMMs).
   * The linear layers: QKV and the MLP's up projections take the hidden state, the output
   * projection the attention values and the MLP's down projections the inner activation; a
   * token runs through {@code u} MLPs per layer (1 in a dense layer, its routed copies and the
   * shared experts in an MoE layer, averaged over the layers). Widths a tensor-parallel rank
   * holds whole without sequence parallelism (the hidden-wide ones) are divided by the
   * sequence-parallel degree, the sharded ones by tp. The weights' casts (once per step) are
   * not counted.
   *
   * @return {forward bytes, backward bytes} per token
   */
  static double[] fp8CastBytesPerToken(TransformerSpec m, Layout l, double e) {
    double tp = l.tp();
    double sp = l.sequenceParallel() ? tp : 1.0;
    double h = m.hidden();
    MoeSpec moe = m.moe();
    double u = moe == null ? 1.0
        : (m.denseLayers() + m.moeLayers() * (moe.routedPerToken() + moe.sharedExperts()))
            / m.layers();
    double inner = m.activeFfnHidden();
    double perElement = e + 2.0;
    double forward = (h * (1 + u) / sp + (m.valueDim() + inner) / tp) * perElement;
    double backward = ((h * (1 + u)) / sp
        + (m.qkvWidth() + (m.gatedMlp() ? 2 : 1) * inner) / tp) * perElement;
    return new double[] {forward, backward};
  }

  /**
   * Bytes one layer's forward moves beyond the fused count when every operator is its own kernel
   * ({@link Kernels#EAGER}), per micro-batch of {@code tokens} tokens, on one tensor-parallel
   * rank. Counted operator by operator from PyTorch eager LLaMA and GPT blocks (torchtitan
   * {@code torchtitan/models/norms.py} and {@code models/llama/model.py} at 6a6f755; PyTorch
   * {@code nn.LayerNorm}, {@code nn.Linear} with bias as one {@code addmm}): each kernel reads its
   * inputs and writes its output once, e bytes per activation element, 4 per FP32 element.
   * The attention output's {@code transpose(1, 2).contiguous()} costs nothing: the fused
   * attention kernel already writes it token-major. Other eager implementations differ in
   * detail (foundation-model-stack's rotary embedding, a broadcast product and a sum in FP32,
   * moves about 36 bytes per q and k element against torchtitan's 20).
   *
   * <ul>
   *   <li>RMSNorm (gated-MLP blocks), twice: {@code x.float()} (e + 4), {@code pow} (4 + 4),
   *       {@code mean} (4), {@code x * rsqrt} (4 + 4), {@code type_as} (4 + e),
   *       {@code * weight} (e + e): 28 + 4e per element against the fused 2e. A GPT block's
   *       {@code nn.LayerNorm} is one kernel, as fused.
   *   <li>Rotary embedding of q and k (gated-MLP blocks): {@code float()} (e + 4), the complex
   *       product (4 + 4), {@code type_as} (4 + e): 16 + 2e per element of (h + kv)/t; the fused
   *       count has none.
   *   <li>SwiGLU as {@code silu} (2e) then the gate product (3e) against the fused 3e.
   *   <li>Grouped-query attention: {@code repeat_kv} copies k and v from kv to h columns before
   *       {@code scaled_dot_product_attention} (e·(kv + h) each).
   *   <li>Dropout before a residual add (GPT blocks) as its own kernel: 2e more per element.
   * </ul>
   */
  static double eagerExtraBytes(TransformerSpec m, Layout l, double e, double tokens,
      boolean dropout) {
    double tp = l.tp();
    double sp = l.sequenceParallel() ? tp : 1.0;
    double h = m.hidden();
    double q = m.qDim();
    double kv = m.kvDim();
    double perToken = 0.0;
    if (m.gatedMlp()) {
      perToken += 2 * (28 + 4 * e - 2 * e) * h / sp
          + (16 + 2 * e) * (q + kv) / tp
          + 2 * e * m.activeFfnHidden() / tp;
      if (m.kvHeads() < m.heads()) {
        perToken += 2 * e * (kv + q) / tp;
      }
    }
    if (dropout) {
      perToken += 2 * 2 * e * h / sp;
    }
    return perToken * tokens;
  }
}
