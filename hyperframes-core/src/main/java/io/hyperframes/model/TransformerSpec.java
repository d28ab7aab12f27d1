package io.hyperframes.model;

import static com.google.common.base.Preconditions.checkArgument;

import io.hyperframes.hardware.Checks;

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
    int headDim) implements ModelSpec {

  /** A transformer whose heads split the hidden size ({@code headDim = hidden / heads}). */
  public TransformerSpec(String name, int layers, int hidden, int heads, int kvHeads,
      int ffnHidden, boolean gatedMlp, int vocab, int seqLen, boolean tiedEmbeddings) {
    this(name, layers, hidden, heads, kvHeads, ffnHidden, gatedMlp, vocab, seqLen,
        tiedEmbeddings, 0);
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
    return (long) heads * headDim;
  }

  /** Width of the K (or V) projection: kvHeads · headDim. */
  public long kvDim() {
    return (long) kvHeads * headDim;
  }

  /**
   * Parameters in the weight matrices of one layer: Q, K, V (h × (q + 2kv)), the attention output
   * (q × h) and the MLP.
   */
  public double matmulParametersPerLayer() {
    double h = hidden;
    double q = qDim();
    double attention = h * (q + 2.0 * kvDim()) + q * h;
    double mlp = (gatedMlp ? 3.0 : 2.0) * h * ffnHidden;
    return attention + mlp;
  }

  /** Biases and normalisation parameters of one layer. */
  public double smallParametersPerLayer() {
    double h = hidden;
    if (gatedMlp) {
      return 2.0 * h; // two RMSNorm gains, no biases
    }
    return (qDim() + 2.0 * kvDim()) + h + ffnHidden + h + 4.0 * h; // biases + two LayerNorms
  }

  /** Parameters of one transformer layer. */
  public double parametersPerLayer() {
    return matmulParametersPerLayer() + smallParametersPerLayer();
  }

  /** Embedding parameters: token table, learned positions (GPT style), untied output layer. */
  public double embeddingParameters() {
    double e = (double) vocab * hidden;
    if (!gatedMlp) {
      e += (double) seqLen * hidden;
    }
    if (!tiedEmbeddings) {
      e += (double) vocab * hidden;
    }
    return e;
  }

  /**
   * All parameters. For GPT style with f = 4h this is Narayanan et al. 2021 (arXiv 2104.04473),
   * §5.1: P = 12lh²(1 + 13/(12h) + (V + s)/(12lh)).
   */
  @Override
  public double parameters() {
    return layers * parametersPerLayer() + embeddingParameters() + (gatedMlp ? hidden : 2.0 * hidden);
  }

  /**
   * Forward matmul FLOPs per token of one layer with full (non-causal) attention scores:
   * 2·(matmul parameters) + 4·s·q (q = heads · headDim, h by default). The attention term counts
   * QKᵀ and A·V over all s positions, the convention of Narayanan et al. 2021 (§5.1) and Chowdhery
   * et al. 2022 (PaLM, Appendix B).
   */
  public double forwardFlopsPerTokenPerLayer() {
    return 2.0 * matmulParametersPerLayer() + 4.0 * seqLen * (double) qDim();
  }

  /** Forward FLOPs per token of the output (logit) layer: 2·h·V. */
  public double logitFlopsPerToken() {
    return 2.0 * hidden * vocab;
  }

  /**
   * Model FLOPs per token of one training step (forward + backward = 3 × forward, no
   * recomputation): for GPT style 72·l·h²·(1 + s/6h + V/12lh)/... per sequence token as in
   * Korthikanti et al. 2022 (arXiv 2205.05198), §6.
   */
  public double trainingFlopsPerToken() {
    return 3.0 * (layers * forwardFlopsPerTokenPerLayer() + logitFlopsPerToken());
  }
}
