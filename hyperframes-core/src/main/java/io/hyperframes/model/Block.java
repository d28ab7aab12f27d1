package io.hyperframes.model;

/**
 * One kind of layer block of a model, repeated {@link #count()} times: the unit the estimators
 * sum over. A {@link TransformerSpec} is, in order, an {@link Embedding}, its {@link Attention}
 * (full and windowed layers apart), the {@link Norms} of its layers, its dense {@link Mlp} and
 * mixture-of-experts {@link Moe} layers, the {@link Output} head and the multi-token-prediction
 * modules ({@link Mtp}); a {@link DenseStackSpec} is a sequence of {@link Dense} layers
 * ({@link TransformerSpec#blocks()}, {@link DenseStackSpec#blocks()}).
 *
 * <p>Each block states, with the source of its formula:
 * <ul>
 *   <li>its weights, {@link #parameters()}, and those one token uses, {@link #activeParameters()};
 *   <li>its forward FLOPs per token, {@link #forwardFlopsPerToken()}: two per multiply-add of a
 *       matmul (Kaplan et al. 2020, arXiv 2001.08361, §2.1); attention's score and value
 *       products over every position of the sequence, scaled by the share of query-key pairs a
 *       windowed layer keeps (the convention of Narayanan et al. 2021, arXiv 2104.04473, §5.1);
 *       element-wise work counts no FLOPs.
 * </ul>
 * What a block stores for the backward pass under a recomputation policy, and the collectives
 * a layout imposes on it, depend on the layout and are stated by the parallelism model over
 * these blocks ({@code io.hyperframes.parallel.ParallelismModel}).
 *
 * <p>The model's totals are sums over its blocks: {@link TransformerSpec#parameters()} over the
 * blocks {@link #inPublishedTotal() in the published total}, the active parameters and the
 * training FLOPs over all. Per instance figures are doubles (weights of a large model exceed
 * {@code int}).
 */
public sealed interface Block {

  /** Short name of the block kind, as the estimate JSON and the docs write it. */
  String kind();

  /** Instances of the block in the model: the layers of its kind; 1 for a block not repeated. */
  default int count() {
    return 1;
  }

  /** Weights of one instance. */
  double parameters();

  /** Weights one token uses in one instance (only the routed experts it is sent to). */
  default double activeParameters() {
    return parameters();
  }

  /** Forward FLOPs per token of one instance. */
  double forwardFlopsPerToken();

  /**
   * Whether the model's published parameter total counts the block: every block but the
   * multi-token-prediction modules, which DeepSeek-V3's 671 B leaves out (its model card,
   * {@code deepseek-ai/DeepSeek-V3} README @06dbd30b: 671 B of main-model weights and 14 B of
   * MTP-module weights).
   */
  default boolean inPublishedTotal() {
    return true;
  }

  /**
   * The {@code IllegalArgumentException} for a block built with a bad component: it names the
   * block and its components in order. Sizes must be positive (counts and widths), weights and
   * FLOPs non-negative. The models check the request's fields first, so this guards direct
   * construction; the message is built only on failure, as blocks are built in inner loops.
   */
  private static IllegalArgumentException invalid(String block, Object... components) {
    return new IllegalArgumentException(block + ": sizes must be > 0 and weights >= 0, got "
        + java.util.Arrays.toString(components));
  }

  /** Weights of an MLP of inner size {@code f} over {@code hidden}: 3·h·f gated, 2·h·f plain. */
  static double mlpParameters(int hidden, double f, boolean gated) {
    return (gated ? 3.0 : 2.0) * hidden * f;
  }

  /**
   * The token table and, GPT style, the learned positions: (V + s)·h weights, no FLOPs (a
   * lookup). An untied output matrix belongs to the {@link Output} block.
   *
   * @param vocab vocabulary size V
   * @param hidden hidden size h
   * @param positions learned position rows (the sequence length for GPT style, 0 with rotary
   *     positions)
   */
  record Embedding(int vocab, int hidden, int positions) implements Block {

    public Embedding {
      if (!(vocab > 0 && hidden > 0 && positions >= 0)) {
        throw invalid("embedding", vocab, hidden, positions);
      }
    }

    @Override
    public String kind() {
      return "embedding";
    }

    @Override
    public double parameters() {
      return ((double) vocab + positions) * hidden;
    }

    @Override
    public double forwardFlopsPerToken() {
      return 0.0;
    }
  }

  /**
   * The attention of {@code count} layers: the query, key and value projections, the score and
   * value products and the output projection.
   *
   * <ul>
   *   <li>Standard attention (MHA, GQA): Q is h × a·d, K and V h × g·d each (g key/value heads),
   *       the output a·d × h (Ainslie et al. 2023, arXiv 2305.13245, for g &lt; a).
   *   <li>Latent attention ({@code mla}): its down and up projections ({@link MlaSpec}); keys as
   *       wide as queries, values a·d_v.
   *   <li>FLOPs: 2 per weight, plus QKᵀ and A·V over the s positions of the sequence, 2·s·(a·d)
   *       each (2·s·(a·(d_n + d_r) + a·d_v) with latent attention), times the share of query-key
   *       pairs the window keeps ({@link SlidingWindowSpec#pairShare}; 1 without a window).
   * </ul>
   *
   * @param count layers with this attention
   * @param hidden hidden size h
   * @param heads attention heads a
   * @param kvHeads key/value heads g
   * @param headDim size of one head d (the query/key head d_n + d_r with latent attention)
   * @param mla latent attention, or {@code null}
   * @param window the sliding window of these layers, or {@code null} for full attention
   * @param seqLen the sequence the scores run over
   */
  record Attention(int count, int hidden, int heads, int kvHeads, int headDim, MlaSpec mla,
      SlidingWindowSpec window, int seqLen) implements Block {

    public Attention {
      if (!(count > 0 && hidden > 0 && heads > 0 && kvHeads > 0 && headDim > 0 && seqLen > 0)) {
        throw invalid("attention", count, hidden, heads, kvHeads, headDim, seqLen);
      }
    }

    @Override
    public String kind() {
      return window == null ? "attention" : "windowed-attention";
    }

    /** Width of the query projection and of the attention output: a·d. */
    public long qDim() {
      return qDim(heads, headDim);
    }

    /** Width of the values and of the output projection's input: a·d, or a·d_v. */
    public long valueDim() {
      return valueDim(heads, headDim, mla);
    }

    /**
     * Width of K (or V): g·d; with latent attention the mean of the key (a·(d_n + d_r)) and value
     * (a·d_v) widths as training materialises them, so that 2·kvDim is K and V together.
     */
    public long kvDim() {
      return kvDim(heads, kvHeads, headDim, mla);
    }

    @Override
    public double parameters() {
      return parameters(hidden, heads, kvHeads, headDim, mla);
    }

    // The formulas as functions of the shape, for the model's per-layer figures (the estimators
    // read them in their inner loop, where a block per call would be garbage).

    static long qDim(int heads, int headDim) {
      return (long) heads * headDim;
    }

    static long valueDim(int heads, int headDim, MlaSpec mla) {
      return mla == null ? qDim(heads, headDim) : (long) heads * mla.vHeadDim();
    }

    static long kvDim(int heads, int kvHeads, int headDim, MlaSpec mla) {
      return mla == null ? (long) kvHeads * headDim
          : (qDim(heads, headDim) + valueDim(heads, headDim, mla)) / 2;
    }

    static double parameters(int hidden, int heads, int kvHeads, int headDim, MlaSpec mla) {
      if (mla != null) {
        return mla.parameters(hidden, heads);
      }
      double h = hidden;
      double q = qDim(heads, headDim);
      return h * (q + 2.0 * kvDim(heads, kvHeads, headDim, null)) + q * h;
    }

    /** Query-key pairs computed, as a share of full causal attention's (1 without a window). */
    public double pairShare() {
      return pairShare(seqLen);
    }

    /** {@link #pairShare()} over a causal sequence of {@code s} tokens (a prompt, say). */
    public double pairShare(double s) {
      return window == null ? 1.0 : window.pairShare(s);
    }

    /**
     * {@link #pairShare()} of the queries at positions {@code (from, to]}: a prompt whose first
     * {@code from} tokens are cached ({@link SlidingWindowSpec#pairShare(double, double)}).
     */
    public double pairShare(double from, double to) {
      return window == null ? 1.0 : window.pairShare(from, to);
    }

    /** Forward FLOPs of QKᵀ and A·V per token over the whole sequence, before the window. */
    public double scoreFlopsPerToken() {
      return mla != null ? 2.0 * seqLen * (double) (qDim() + valueDim())
          : 4.0 * seqLen * (double) qDim();
    }

    @Override
    public double forwardFlopsPerToken() {
      return 2.0 * parameters() + scoreFlopsPerToken() * pairShare();
    }
  }

  /**
   * The normalisation gains and the linear layers' biases of {@code count} layers, counted per
   * layer by the model ({@link TransformerSpec#smallParametersPerLayer()}: GPT style two
   * LayerNorms and a bias on every linear layer; LLaMA style two RMSNorm gains, and latent
   * attention's two latent norms). Element-wise: no FLOPs.
   *
   * @param count layers
   * @param perLayer weights of one layer's norms and biases
   */
  record Norms(int count, double perLayer) implements Block {

    public Norms {
      if (!(count > 0 && perLayer >= 0)) {
        throw invalid("norms", count, perLayer);
      }
    }

    @Override
    public String kind() {
      return "norms";
    }

    @Override
    public double parameters() {
      return perLayer;
    }

    @Override
    public double forwardFlopsPerToken() {
      return 0.0;
    }
  }

  /**
   * The dense MLP of {@code count} layers: up and down projections, 2·h·f weights, and a gate
   * for a gated (SwiGLU) MLP, 3·h·f (Shazeer 2020, arXiv 2002.05202; Touvron et al. 2023,
   * §2.2). Two FLOPs per weight.
   *
   * @param count layers with a dense MLP
   * @param hidden hidden size h
   * @param ffnHidden inner size f
   * @param gated gated MLP
   */
  record Mlp(int count, int hidden, int ffnHidden, boolean gated) implements Block {

    public Mlp {
      if (!(count > 0 && hidden > 0 && ffnHidden > 0)) {
        throw invalid("mlp", count, hidden, ffnHidden);
      }
    }

    @Override
    public String kind() {
      return "mlp";
    }

    @Override
    public double parameters() {
      return mlpParameters(hidden, ffnHidden, gated);
    }

    @Override
    public double forwardFlopsPerToken() {
      return 2.0 * parameters();
    }
  }

  /**
   * The mixture-of-experts MLP of {@code count} layers: E routed experts of inner size f_e,
   * the shared experts and, when there is more than one expert to route to, the router
   * (h × E; Fedus et al. 2021, arXiv 2101.03961, §2.1). A token runs through its top-k routed
   * experts, the shared ones and the router (the convention of the published active counts:
   * Mixtral's 12.9 B, Jiang et al. 2024, arXiv 2401.04088, §2; DeepSeek-V3's 37 B). Two FLOPs
   * per active weight; the capacity factor's padding is element-wise and exchange work, not
   * counted here.
   *
   * @param count MoE layers
   * @param hidden hidden size h
   * @param moe the mixture
   * @param gated gated experts
   */
  record Moe(int count, int hidden, MoeSpec moe, boolean gated) implements Block {

    public Moe {
      if (!(count > 0 && hidden > 0 && moe != null)) {
        throw invalid("moe", count, hidden, moe);
      }
    }

    @Override
    public String kind() {
      return "moe";
    }

    /** The weights of one layer with {@code routed} routed experts, the shared and the router. */
    static double parameters(int hidden, MoeSpec moe, boolean gated, int routed) {
      return routed * mlpParameters(hidden, moe.expertFfnHidden(), gated)
          + moe.sharedExperts() * mlpParameters(hidden, moe.sharedExpertFfnHidden(), gated)
          + (moe.routed() ? (double) hidden * moe.experts() : 0.0);
    }

    /** Weights of one layer's routed experts, all E of them. */
    public double routedExpertParameters() {
      return moe.experts() * mlpParameters(hidden, moe.expertFfnHidden(), gated);
    }

    @Override
    public double parameters() {
      return parameters(hidden, moe, gated, moe.experts());
    }

    @Override
    public double activeParameters() {
      return parameters(hidden, moe, gated, moe.topK());
    }

    @Override
    public double forwardFlopsPerToken() {
      return 2.0 * activeParameters();
    }
  }

  /**
   * The output head: the final normalisation (an RMSNorm gain h, or a LayerNorm's gain and bias
   * 2h), the output matrix V × h unless it is tied to the embedding, and the logits, 2·h·V
   * FLOPs per token whether tied or not.
   *
   * @param vocab vocabulary size V
   * @param hidden hidden size h
   * @param tied the output matrix is the embedding's
   * @param rmsNorm the final norm is an RMSNorm (LLaMA style)
   */
  record Output(int vocab, int hidden, boolean tied, boolean rmsNorm) implements Block {

    public Output {
      if (!(vocab > 0 && hidden > 0)) {
        throw invalid("output", vocab, hidden);
      }
    }

    @Override
    public String kind() {
      return "output";
    }

    @Override
    public double parameters() {
      return (tied ? 0.0 : (double) vocab * hidden) + (rmsNorm ? hidden : 2.0 * hidden);
    }

    @Override
    public double forwardFlopsPerToken() {
      return 2.0 * hidden * vocab;
    }
  }

  /**
   * The multi-token-prediction modules (DeepSeek-V3, arXiv 2412.19437, §2.2, Figure 3): each a
   * projection of 2h to h, a transformer layer like the model's last, two RMSNorm gains, and
   * its own pass through the shared output head. Held and trained, but outside the published
   * parameter total.
   *
   * @param count modules
   * @param hidden hidden size h
   * @param layerParameters weights of the model's last layer (its experts if it is an MoE layer)
   * @param layerActiveParameters weights one token uses in that layer
   * @param layerForwardFlops forward FLOPs per token of that layer
   * @param vocab vocabulary size V of the shared head
   */
  record Mtp(int count, int hidden, double layerParameters, double layerActiveParameters,
      double layerForwardFlops, int vocab) implements Block {

    public Mtp {
      if (!(count > 0 && hidden > 0 && vocab > 0 && layerParameters >= 0
          && layerActiveParameters >= 0 && layerForwardFlops >= 0)) {
        throw invalid("mtp", count, hidden, layerParameters, layerActiveParameters,
            layerForwardFlops, vocab);
      }
    }

    @Override
    public String kind() {
      return "mtp";
    }

    @Override
    public double parameters() {
      double h = hidden;
      return 2 * h * h + layerParameters + 2 * h;
    }

    @Override
    public double activeParameters() {
      double h = hidden;
      return 2 * h * h + layerActiveParameters + 2 * h;
    }

    @Override
    public double forwardFlopsPerToken() {
      double h = hidden;
      return 2 * 2 * h * h + layerForwardFlops + 2.0 * hidden * vocab;
    }

    @Override
    public boolean inPublishedTotal() {
      return false;
    }
  }

  /**
   * One fully connected layer of a dense stack: an in × out matrix and a bias of out, 2·in·out
   * FLOPs per sample forward ({@link DenseStackSpec}).
   *
   * @param in input width
   * @param out output width
   */
  record Dense(int in, int out) implements Block {

    public Dense {
      if (!(in > 0 && out > 0)) {
        throw invalid("dense", in, out);
      }
    }

    @Override
    public String kind() {
      return "dense";
    }

    @Override
    public double parameters() {
      return ((double) in + 1) * out;
    }

    @Override
    public double forwardFlopsPerToken() {
      return 2.0 * in * out;
    }
  }
}
