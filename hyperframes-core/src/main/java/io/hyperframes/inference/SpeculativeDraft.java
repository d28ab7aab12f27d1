package io.hyperframes.inference;

import static com.google.common.base.Preconditions.checkArgument;

import io.hyperframes.model.TransformerSpec;

/**
 * What speculative decoding's draft needs of the model and what it adds to a replica: the rules
 * it checks, the draft's weights and its KV cache. Part of {@link InferenceEstimator}, which times
 * the draft's passes.
 */
final class SpeculativeDraft {
  private SpeculativeDraft() {}

  /** The rules speculative decoding needs of the model and the layout, each named. */
  static void checkSpeculative(TransformerSpec m, Speculative spec, int tp, int ep,
      int pp) {
    checkArgument(pp == 1, "workload.speculative: modelled for one pipeline stage per replica"
        + " (layout.pp 1), got layout.pp %s", pp);
    switch (spec.method()) {
      case MTP -> checkArgument(m.mtpLayers() > 0, "workload.speculative.method: mtp needs a"
          + " model with multi-token-prediction layers (model.mtpLayers), got 0 for %s",
          m.name());
      case DRAFT -> {
        TransformerSpec d = spec.draft();
        checkArgument(d.vocab() == m.vocab(), "workload.speculative.draftModel: its vocabulary"
            + " (%s) differs from model.vocab %s; a draft proposes the model's tokens",
            d.vocab(), m.vocab());
        checkArgument(d.heads() % tp == 0, "workload.speculative.draftModel: layout.tp %s does"
            + " not divide its heads %s (the draft runs on the model's tensor-parallel ranks)",
            tp, d.heads());
      }
      case EAGLE -> { }
    }
  }

  /**
   * Weights of the draft: the multi-token-prediction modules ({@link TransformerSpec#mtpParameters};
   * their embedding and output head are the model's), an EAGLE head (one decoder layer of the
   * model's attention and dense MLP, and the 2h × h input layer; Li et al. 2024), or the draft
   * model.
   */
  static double draftParameters(TransformerSpec m, Speculative spec) {
    return switch (spec.method()) {
      case MTP -> m.mtpParameters();
      case EAGLE -> m.attentionParametersPerLayer() + m.mlpParameters(m.ffnHidden())
          + 2.0 * m.hidden() * m.hidden();
      case DRAFT -> spec.draft().parameters();
    };
  }

  /** KV-cache elements per token on one device that the draft keeps. */
  static double draftKvElementsPerToken(TransformerSpec m, Speculative spec, int tp) {
    return switch (spec.method()) {
      case MTP -> m.mtpLayers() * m.kvCacheElementsPerTokenPerLayer(tp);
      case EAGLE -> m.kvCacheElementsPerTokenPerLayer(tp);
      case DRAFT -> spec.draft().layers() * spec.draft().kvCacheElementsPerTokenPerLayer(tp);
    };
  }
}
