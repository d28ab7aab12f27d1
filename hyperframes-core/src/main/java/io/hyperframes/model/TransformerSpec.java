package io.hyperframes.model;

import static com.google.common.base.Preconditions.checkArgument;

import io.hyperframes.hardware.Checks;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * A dense decoder-only transformer.
 *
 * <p>Two families are distinguished by {@code gatedMlp}: GPT style (GeLU MLP, LayerNorm with bias,
 * biases on every linear layer, dropout, learned positions; Radford et al. 2019, Brown et al.
 * 2020) and LLaMA style (SwiGLU MLP with three matrices, RMSNorm, no biases, no dropout, rotary
 * positions; Touvron et al. 2023, arXiv 2302.13971, §2.2).
 *
 * @param name model name
 * @param layers transformer layers (l)
 * @param hidden hidden size (h)
 * @param heads attention heads (a)
 * @param kvHeads key/value heads (grouped-query attention; equals heads for multi-head attention)
 * @param ffnHidden MLP inner size (f)
 * @param gatedMlp SwiGLU MLP (LLaMA style) instead of GeLU (GPT style)
 * @param vocab vocabulary size (V)
 * @param seqLen training sequence length (s)
 * @param tiedEmbeddings output layer shares the input embedding matrix
 * @param headDim size of one attention head (d); {@code hidden / heads} unless the model sets its
 *     own (Qwen3: 128 at hidden 4096 and 64 heads, so the query projection is wider than hidden;
 *     Hugging Face {@code head_dim}). The query projection is {@code heads · headDim} wide, key
 *     and value {@code kvHeads · headDim}; attention's score and value products run over
 *     {@code headDim}
 * @param moe the mixture-of-experts part, or {@code null} for a dense model: its MoE layers
 *     replace the dense MLP by a router, routed and shared experts ({@link MoeSpec})
 * @param mla multi-head latent attention ({@link MlaSpec}), or {@code null} for standard
 *     attention. With it {@code headDim} is the query/key head size d_n + d_r (0 or that value
 *     may be given), kvHeads equals heads, and the KV cache is the latent
 * @param slidingWindow the windowed layers ({@link SlidingWindowSpec}), or {@code null} when
 *     every layer attends to the whole context
 * @param mtpLayers multi-token-prediction modules trained beside the model (DeepSeek-V3,
 *     arXiv 2412.19437, §2.2: each a projection of 2h to h, a transformer block like the
 *     model's last and two RMSNorms, sharing the embedding and the output head); their weights
 *     are not in {@link #parameters()} (the convention of the published counts) but are held
 *     and trained: {@link #mtpParameters()}, their FLOPs in {@link #trainingFlopsPerToken()}
 */
public record TransformerSpec(
    String name,
    int layers,
    int hidden,
    int heads,
    int kvHeads,
    int ffnHidden,
    boolean gatedMlp,
    int vocab,
    int seqLen,
    boolean tiedEmbeddings,
    int headDim,
    MoeSpec moe,
    MlaSpec mla,
    SlidingWindowSpec slidingWindow,
    int mtpLayers) implements ModelSpec {

  /** A transformer without multi-token-prediction modules. */
  public TransformerSpec(String name, int layers, int hidden, int heads, int kvHeads,
      int ffnHidden, boolean gatedMlp, int vocab, int seqLen, boolean tiedEmbeddings,
      int headDim, MoeSpec moe, MlaSpec mla, SlidingWindowSpec slidingWindow) {
    this(name, layers, hidden, heads, kvHeads, ffnHidden, gatedMlp, vocab, seqLen,
        tiedEmbeddings, headDim, moe, mla, slidingWindow, 0);
  }

  /** A transformer whose every layer attends to the whole context. */
  public TransformerSpec(String name, int layers, int hidden, int heads, int kvHeads,
      int ffnHidden, boolean gatedMlp, int vocab, int seqLen, boolean tiedEmbeddings,
      int headDim, MoeSpec moe, MlaSpec mla) {
    this(name, layers, hidden, heads, kvHeads, ffnHidden, gatedMlp, vocab, seqLen,
        tiedEmbeddings, headDim, moe, mla, null, 0);
  }

  /** A transformer with standard (MHA / GQA) attention, dense or a mixture of experts. */
  public TransformerSpec(String name, int layers, int hidden, int heads, int kvHeads,
      int ffnHidden, boolean gatedMlp, int vocab, int seqLen, boolean tiedEmbeddings,
      int headDim, MoeSpec moe) {
    this(name, layers, hidden, heads, kvHeads, ffnHidden, gatedMlp, vocab, seqLen,
        tiedEmbeddings, headDim, moe, null, null);
  }

  /** A dense transformer with a head size of its own (0: {@code hidden / heads}). */
  public TransformerSpec(String name, int layers, int hidden, int heads, int kvHeads,
      int ffnHidden, boolean gatedMlp, int vocab, int seqLen, boolean tiedEmbeddings,
      int headDim) {
    this(name, layers, hidden, heads, kvHeads, ffnHidden, gatedMlp, vocab, seqLen,
        tiedEmbeddings, headDim, null);
  }

  /** A transformer whose heads split the hidden size ({@code headDim = hidden / heads}). */
  public TransformerSpec(String name, int layers, int hidden, int heads, int kvHeads,
      int ffnHidden, boolean gatedMlp, int vocab, int seqLen, boolean tiedEmbeddings) {
    this(name, layers, hidden, heads, kvHeads, ffnHidden, gatedMlp, vocab, seqLen,
        tiedEmbeddings, 0, null);
  }

  /**
   * @throws IllegalArgumentException naming the field and the value; {@code headDim} 0 means
   *     {@code hidden / heads}, which must then divide
   */
  public TransformerSpec {
    checkArgument(name != null && !name.isBlank(), "model.name: must be given");
    Checks.positive("model.layers", layers);
    Checks.positive("model.hidden", hidden);
    Checks.positive("model.heads", heads);
    Checks.positive("model.kvHeads", kvHeads);
    Checks.positive("model.ffnHidden", ffnHidden);
    Checks.positive("model.vocab", vocab);
    Checks.positive("model.seqLen", seqLen);
    checkArgument(headDim >= 0, "model.headDim: must be > 0, got %s", headDim);
    checkArgument(mtpLayers >= 0 && mtpLayers <= 16, "model.mtpLayers: must be in [0, 16], got"
        + " %s", mtpLayers);
    if (mla != null) {
      checkArgument(headDim == 0 || headDim == mla.qkHeadDim(), "model.headDim: %s differs from"
          + " model.mla qkNopeHeadDim + qkRopeHeadDim = %s (latent attention's query/key head)",
          headDim, mla.qkHeadDim());
      checkArgument(kvHeads == heads, "model.kvHeads: %s must equal model.heads %s with"
          + " model.mla (every head has its own key and value, decompressed from the latent)",
          kvHeads, heads);
      headDim = mla.qkHeadDim();
    }
    checkArgument(headDim > 0 || hidden % heads == 0,
        "model.hidden: %s is not divisible by model.heads %s (give model.headDim)", hidden, heads);
    if (headDim == 0) {
      headDim = hidden / heads;
    }
    checkArgument(headDim <= 1 << 16, "model.headDim: must be <= 65536, got %s", headDim);
    checkArgument(heads % kvHeads == 0, "model.kvHeads: %s does not divide model.heads %s",
        kvHeads, heads);
    checkArgument(layers <= 100_000, "model.layers: must be <= 100000, got %s", layers);
    checkArgument(hidden <= 1 << 20, "model.hidden: must be <= 1048576, got %s", hidden);
    checkArgument(ffnHidden <= 1 << 22, "model.ffnHidden: must be <= 4194304, got %s", ffnHidden);
    checkArgument(seqLen <= 1 << 24, "model.seqLen: must be <= 16777216, got %s", seqLen);
    checkArgument(vocab <= 1 << 24, "model.vocab: must be <= 16777216, got %s", vocab);
  }

  /**
   * The same model at another sequence length ({@code model.seqLen} beside
   * {@code model.catalog}): a catalog model trained or served at {@code tokens} a sequence.
   *
   * @throws IllegalArgumentException naming {@code model.seqLen} and the value
   */
  public TransformerSpec withSeqLen(int tokens) {
    return new TransformerSpec(name, layers, hidden, heads, kvHeads, ffnHidden, gatedMlp, vocab,
        tokens, tiedEmbeddings, headDim, moe, mla, slidingWindow, mtpLayers);
  }

  /**
   * The default MLP size: 4h for GPT style; for gated MLPs the LLaMA rule, 2/3·4h rounded up to a
   * multiple of 256 (Touvron et al. 2023, §2.2; reference implementation {@code multiple_of=256}).
   */
  public static int defaultFfnHidden(int hidden, boolean gatedMlp) {
    if (!gatedMlp) {
      return 4 * hidden;
    }
    int f = (int) ((2L * 4 * hidden) / 3);
    return (f + 255) / 256 * 256;
  }

  /** Width of the query projection and of the attention output: heads · headDim (h by default). */
  public long qDim() {
    return Block.Attention.qDim(heads, headDim);
  }

  /**
   * Width of the K (or V) projection: kvHeads · headDim. With latent attention, the mean of the
   * key (heads · (d_n + d_r)) and value (heads · d_v) widths as training materialises them, so
   * that 2 · kvDim is K and V together.
   */
  public long kvDim() {
    return Block.Attention.kvDim(heads, kvHeads, headDim, mla);
  }

  /** Width of attention's values and of the output projection's input: qDim, or heads · d_v. */
  public long valueDim() {
    return Block.Attention.valueDim(heads, headDim, mla);
  }

  /**
   * Output width of a single matmul from the hidden state carrying the attention's input
   * projections' FLOPs: q + 2kv (the fused QKV projection); with latent attention, its down and
   * up projections' weights over h (DeepSeek-V2 §2.1).
   */
  public double qkvWidth() {
    if (mla == null) {
      return qDim() + 2.0 * kvDim();
    }
    return (mla.parameters(hidden, heads) - mla.outputParameters(hidden, heads)) / hidden;
  }

  /**
   * KV-cache elements per token and layer on a device of a {@code tp}-way tensor-parallel group:
   * a key and a value for each of its KV heads (at least one, replicated when tp exceeds them);
   * with latent attention the latent and the rotary key, which every rank keeps whole
   * (DeepSeek-V2 §2.1.2: r_kv + d_r elements whatever the heads).
   */
  public double kvCacheElementsPerTokenPerLayer(int tp) {
    if (mla != null) {
      return mla.kvCacheElements();
    }
    return 2.0 * Math.max(1, kvHeads / tp) * headDim;
  }

  /** Parameters of one layer's attention weights: Q, K, V (h × (q + 2kv)) and the output (q × h). */
  public double attentionParametersPerLayer() {
    return Block.Attention.parameters(hidden, heads, kvHeads, headDim, mla);
  }

  /** Weights of one MLP (or expert) of inner size {@code f}: 3·h·f gated, 2·h·f otherwise. */
  public double mlpParameters(double f) {
    return Block.mlpParameters(hidden, f, gatedMlp);
  }

  /** Whether this is a mixture-of-experts model. */
  public boolean isMoe() {
    return moe != null;
  }

  /** Layers with a dense MLP of {@code ffnHidden} (every layer of a dense model). */
  public int denseLayers() {
    return moe == null ? layers : layers - moe.moeLayers(layers);
  }

  /** Layers whose MLP is a mixture of experts (0 for a dense model). */
  public int moeLayers() {
    return moe == null ? 0 : moe.moeLayers(layers);
  }

  /**
   * MLP weights of one MoE layer: every routed and shared expert, and the router (h × E) when
   * there is more than one expert to route to.
   */
  public double moeMlpParametersPerLayer() {
    return moe == null ? 0.0 : Block.Moe.parameters(hidden, moe, gatedMlp, moe.experts());
  }

  /** MLP weights one token uses in an MoE layer: its top-k routed experts, the shared, the router. */
  public double activeMoeMlpParametersPerLayer() {
    return moe == null ? 0.0 : Block.Moe.parameters(hidden, moe, gatedMlp, moe.topK());
  }

  /**
   * MLP inner size one token runs through, averaged over the layers: {@code ffnHidden} in dense
   * layers; in MoE layers its top-k experts (times the capacity factor, whose padding is computed
   * too) and the shared experts. The element-wise work and the stored activations of the MLP
   * scale with it.
   */
  public double activeFfnHidden() {
    if (moe == null) {
      return ffnHidden;
    }
    double routed = moe.routedPerToken() * moe.expertFfnHidden();
    double perMoeLayer = routed + moe.sharedExperts() * (double) moe.sharedExpertFfnHidden();
    return (denseLayers() * (double) ffnHidden + moeLayers() * perMoeLayer) / layers;
  }

  /** Share of layers that are MoE layers (0 for a dense model). */
  public double moeLayerShare() {
    return (double) moeLayers() / layers;
  }

  /**
   * Parameters in the weight matrices of one layer, averaged over the layers: the attention
   * weights and the MLP (dense layers' MLP, or every expert and the router of MoE layers). Every
   * weight a layer holds.
   */
  public double matmulParametersPerLayer() {
    if (moe == null) {
      return attentionParametersPerLayer() + mlpParameters(ffnHidden);
    }
    double mlp = (denseLayers() * mlpParameters(ffnHidden)
        + moeLayers() * moeMlpParametersPerLayer()) / layers;
    return attentionParametersPerLayer() + mlp;
  }

  /**
   * Weights one token multiplies in one layer, averaged over the layers: the same as
   * {@link #matmulParametersPerLayer()} for a dense model, only the active experts in MoE layers.
   */
  public double activeMatmulParametersPerLayer() {
    if (moe == null) {
      return matmulParametersPerLayer();
    }
    double mlp = (denseLayers() * mlpParameters(ffnHidden)
        + moeLayers() * activeMoeMlpParametersPerLayer()) / layers;
    return attentionParametersPerLayer() + mlp;
  }

  /**
   * Parameters one token uses: the attention and normalisation weights, the dense MLPs, the
   * active experts of MoE layers, the embedding and the output layer (the convention of the
   * published active counts: Mixtral's 12.9 B, DeepSeek-V3's 36.7 B with embedding and head).
   */
  public double activeParameters() {
    return publishedSum(Block::activeParameters);
  }

  /** The sum over the blocks of the published totals of {@code perBlock} times the count. */
  private double publishedSum(java.util.function.ToDoubleFunction<Block> perBlock) {
    double n = 0.0;
    for (Block b : blocks()) {
      if (b.inPublishedTotal()) {
        n += b.count() * perBlock.applyAsDouble(b);
      }
    }
    return n;
  }

  /** Biases and normalisation parameters of one layer. */
  public double smallParametersPerLayer() {
    double h = hidden;
    if (gatedMlp) {
      // two RMSNorm gains, no biases; latent attention normalises its latents too
      return mla == null ? 2.0 * h : 2.0 * h + mla.normParameters();
    }
    return (qDim() + 2.0 * kvDim()) + h + ffnHidden + h + 4.0 * h; // biases + two LayerNorms
  }

  /** Parameters of one transformer layer. */
  public double parametersPerLayer() {
    return matmulParametersPerLayer() + smallParametersPerLayer();
  }

  /** Embedding parameters: token table, learned positions (GPT style), untied output layer. */
  public double embeddingParameters() {
    double e = new Block.Embedding(vocab, hidden, gatedMlp ? 0 : seqLen).parameters();
    return tiedEmbeddings ? e : e + (double) vocab * hidden;
  }

  /**
   * The model as a sequence of layer blocks ({@link Block}), in order: the embedding; the
   * attention of the full layers and, apart, of the windowed ones; the layers' norms and biases;
   * the dense MLP layers; the MoE layers; the output head; the multi-token-prediction modules.
   * A kind the model lacks (no windowed, dense-MLP, MoE layers or MTP modules) is left out.
   * The totals below are sums over these blocks.
   */
  public List<Block> blocks() {
    List<Block> out = new ArrayList<>(8);
    out.add(new Block.Embedding(vocab, hidden, gatedMlp ? 0 : seqLen));
    int windowed = windowedLayers();
    if (windowed < layers) {
      out.add(attention(layers - windowed, null));
    }
    if (windowed > 0) {
      out.add(attention(windowed, slidingWindow));
    }
    out.add(new Block.Norms(layers, smallParametersPerLayer()));
    if (denseLayers() > 0) {
      out.add(new Block.Mlp(denseLayers(), hidden, ffnHidden, gatedMlp));
    }
    if (moeLayers() > 0) {
      out.add(new Block.Moe(moeLayers(), hidden, moe, gatedMlp));
    }
    out.add(new Block.Output(vocab, hidden, tiedEmbeddings, gatedMlp));
    if (mtpLayers > 0) {
      out.add(mtp());
    }
    return Collections.unmodifiableList(out);
  }

  /**
   * The multi-token-prediction block (the last of {@link #blocks()}; only with modules). The
   * module's layer is like the model's last: its MLP (the experts of an MoE layer), and the
   * attention of an average layer (its windows averaged over the layers).
   */
  private Block.Mtp mtp() {
    double scores = attention(1, null).scoreFlopsPerToken() * attentionPairShare(seqLen);
    double layerFlops = 2.0 * lastLayerActiveMatmulParameters() + scores;
    return new Block.Mtp(mtpLayers, hidden, lastLayerParameters(),
        lastLayerActiveMatmulParameters() + smallParametersPerLayer(), layerFlops, vocab);
  }

  /** The attention block of {@code count} layers with {@code window} (null: full). */
  private Block.Attention attention(int count, SlidingWindowSpec window) {
    return new Block.Attention(count, hidden, heads, kvHeads, headDim, mla, window, seqLen);
  }

  /**
   * All parameters: the sum over the blocks in the published total (the multi-token-prediction
   * modules are not). For GPT style with f = 4h and tied embeddings this is Narayanan et al.
   * 2021 (arXiv 2104.04473), §5.1: P = 12lh²(1 + 13/(12h) + (V + s)/(12lh)), plus the final
   * LayerNorm's 2h, which the closed form leaves out.
   */
  @Override
  public double parameters() {
    return publishedSum(Block::parameters);
  }

  /**
   * Forward matmul FLOPs per token of one layer with full (non-causal) attention scores:
   * 2·(active matmul parameters: the top-k experts of MoE layers) + 4·s·q (q = heads · headDim, h by default). The attention term counts
   * QKᵀ and A·V over all s positions, the convention of Narayanan et al. 2021 (§5.1) and Chowdhery
   * et al. 2022 (PaLM, Appendix B).
   */
  public double forwardFlopsPerTokenPerLayer() {
    // The layers' blocks: attention (Q·Kᵀ over the query/key head, A·V over the value head,
    // over the pairs the windows leave), norms, dense MLPs and MoE layers (Block).
    double n = 0.0;
    for (Block b : blocks()) {
      if (b instanceof Block.Attention || b instanceof Block.Norms || b instanceof Block.Mlp
          || b instanceof Block.Moe) {
        n += b.count() * b.forwardFlopsPerToken();
      }
    }
    return n / layers;
  }

  /** Layers whose attention is windowed (0 without {@code slidingWindow}). */
  public int windowedLayers() {
    return slidingWindow == null ? 0 : slidingWindow.windowedLayers(layers);
  }

  /** Share of the layers whose attention is windowed (0 without {@code slidingWindow}). */
  public double windowedLayerShare() {
    return (double) windowedLayers() / layers;
  }

  /**
   * Query-key pairs the layers compute over a causal sequence of {@code s} tokens, averaged over
   * the layers, as a share of full attention's: 1 without windows; windowed layers count
   * {@link SlidingWindowSpec#pairShare}. Attention FLOPs and fused-attention time scale by it.
   */
  public double attentionPairShare(double s) {
    if (slidingWindow == null) {
      return 1.0;
    }
    int windowed = windowedLayers();
    return ((layers - windowed) + windowed * slidingWindow.pairShare(s)) / layers;
  }

  /** Forward FLOPs per token of the output (logit) layer: 2·h·V. */
  public double logitFlopsPerToken() {
    return new Block.Output(vocab, hidden, tiedEmbeddings, gatedMlp).forwardFlopsPerToken();
  }

  /**
   * Model FLOPs per token of one training step (forward + backward = 3 × forward, no
   * recomputation): for GPT style 72·l·h²·(1 + s/6h + V/12lh)/... per sequence token as in
   * Korthikanti et al. 2022 (arXiv 2205.05198), §6.
   */
  public double trainingFlopsPerToken() {
    double forward = 0.0;
    for (Block b : blocks()) {
      forward += b.count() * b.forwardFlopsPerToken();
    }
    return 3.0 * forward;
  }

  /**
   * Weights of the multi-token-prediction modules, the shared embedding and output head not
   * counted again: per module the projection (2h × h), a transformer block like the model's last
   * layer and two RMSNorm gains (DeepSeek-V3 §2.2, Figure 3).
   */
  public double mtpParameters() {
    return mtpLayers == 0 ? 0.0 : mtpLayers * mtp().parameters();
  }

  /**
   * The routed experts' weights within {@link #mtpParameters()}: every multi-token-prediction
   * module repeats the last layer, and with it that layer's routed experts when it is an MoE
   * layer (Megatron-Core builds the module's block with the decoder's layer spec; its experts are
   * split over the expert-parallel group like every other MoE layer's). 0 without such modules.
   */
  public double mtpRoutedExpertParameters() {
    return mtpLayers > 0 && lastLayerIsMoe()
        ? mtpLayers * (double) moe.experts() * mlpParameters(moe.expertFfnHidden()) : 0.0;
  }

  /** Forward FLOPs per token of one multi-token-prediction module: projection, block, logits. */
  public double mtpForwardFlopsPerToken() {
    return mtpLayers == 0 ? 0.0 : mtp().forwardFlopsPerToken();
  }

  /** Weights of the model's last layer (an MoE layer when it is one). */
  private double lastLayerParameters() {
    double mlp = lastLayerIsMoe() ? moeMlpParametersPerLayer() : mlpParameters(ffnHidden);
    return attentionParametersPerLayer() + mlp + smallParametersPerLayer();
  }

  /** Weights a token multiplies in the model's last layer. */
  private double lastLayerActiveMatmulParameters() {
    double mlp = lastLayerIsMoe() ? activeMoeMlpParametersPerLayer() : mlpParameters(ffnHidden);
    return attentionParametersPerLayer() + mlp;
  }

  private boolean lastLayerIsMoe() {
    return moe != null && moe.isMoeLayer(layers - 1);
  }
}
