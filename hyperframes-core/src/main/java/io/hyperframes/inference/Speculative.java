package io.hyperframes.inference;

import io.hyperframes.json.Ids;

import static com.google.common.base.Preconditions.checkArgument;

import io.hyperframes.model.TransformerSpec;

/**
 * Speculative decoding ({@code workload.speculative}): each step a cheap draft proposes
 * {@code tokens} tokens one after another, and the model verifies them in one forward pass over
 * {@code tokens + 1} positions per sequence, keeping the longest accepted prefix and one token
 * of its own (Leviathan et al. 2023, "Fast Inference from Transformers via Speculative
 * Decoding", arXiv 2211.17192).
 *
 * <p>With each draft token accepted independently with probability {@code acceptance} (α), a
 * step yields on average {@code (1 − α^(γ+1)) / (1 − α)} tokens for γ draft tokens (ibid.,
 * Eq. 1; γ + 1 at α = 1, 1 at α = 0). The acceptance rate is an input: it depends on the model,
 * the draft and the text, and is never assumed.
 *
 * @param method the draft: {@link Method#MTP} the model's own multi-token-prediction module,
 *     {@link Method#EAGLE} an EAGLE head, {@link Method#DRAFT} a separate draft model
 * @param tokens draft tokens per step (γ, vLLM's {@code num_speculative_tokens})
 * @param acceptance probability that a draft token is accepted, in [0, 1]
 * @param draft the draft model of {@link Method#DRAFT}; null otherwise
 */
public record Speculative(Method method, int tokens, double acceptance, TransformerSpec draft) {

  /** Draft tokens per step at most (beyond it the verification pass is a prefill). */
  public static final int MAX_TOKENS = 64;

  /** Where the draft tokens come from. */
  public enum Method {
    /**
     * The model's multi-token-prediction module ({@code model.mtpLayers}; DeepSeek-V3 §2.2),
     * run once per draft token: one transformer layer of the model beside the shared embedding
     * and output head.
     */
    MTP,
    /**
     * An EAGLE head (Li et al. 2024, "EAGLE: Speculative Sampling Requires Rethinking Feature
     * Uncertainty", arXiv 2401.15077): a fully connected layer from the token embedding and
     * the model's last hidden state (2h to h) and one decoder layer of the model's shape, with the
     * model's embedding and output head, run once per draft token.
     */
    EAGLE,
    /** A separate, smaller model of the same vocabulary, decoded once per draft token. */
    DRAFT;

    private final String id = Ids.lowerCase(this);

    public String id() {
      return id;
    }

    /** The method named {@code value}; {@code IllegalArgumentException} naming it otherwise. */
    public static Method fromId(String field, String value) {
      return Ids.byId(Method.class, Method::id, field, value, "method");
    }
  }

  public Speculative {
    checkArgument(method != null, "workload.speculative.method: must be given (mtp, eagle or"
        + " draft)");
    checkArgument(tokens >= 1 && tokens <= MAX_TOKENS, "workload.speculative.tokens: must be"
        + " 1-%s, got %s", MAX_TOKENS, tokens);
    checkArgument(Double.isFinite(acceptance) && acceptance >= 0 && acceptance <= 1,
        "workload.speculative.acceptance: must be in [0, 1], got %s", acceptance);
    checkArgument(method != Method.DRAFT || draft != null, "workload.speculative.draftModel:"
        + " must be given for method draft");
    checkArgument(method == Method.DRAFT || draft == null, "workload.speculative.draftModel:"
        + " only for method draft, got method %s", method.id());
  }

  /**
   * Tokens one draft-and-verify step yields per sequence on average:
   * {@code (1 − α^(γ+1)) / (1 − α)} (Leviathan et al. 2023, Eq. 1).
   */
  public double expectedTokensPerStep() {
    if (acceptance >= 1.0) {
      return tokens + 1.0;
    }
    return (1.0 - Math.pow(acceptance, tokens + 1.0)) / (1.0 - acceptance);
  }
}
