package io.hyperframes.inference;

import io.hyperframes.model.TransformerSpec;

/**
 * The routed-expert weights a serving step reads: the experts a batch's tokens touch, on one
 * device and on the busiest of an expert-parallel group. Part of {@link InferenceEstimator}.
 */
final class ExpertWeights {
  private ExpertWeights() {}

  /**
   * Routed-expert weights one decode step reads on the busiest device: in each MoE layer of the
   * stage the experts the batch's tokens touch ({@link #expertsTouched}), each {@code 1/tp} of
   * an expert; with expert parallelism the touched experts of the busiest rank
   * ({@link #busiestRankExperts}), each {@code ep/tp} of one.
   */
  static double expertBytesPerDecodeStep(TransformerSpec m, int layersPerStage, int tp, int ep,
      int batch, double weightBytes) {
    if (!m.isMoe()) {
      return 0.0;
    }
    io.hyperframes.model.MoeSpec moe = m.moe();
    if (ep == 1) {
      return layersPerStage * m.moeLayerShare()
          * expertsTouched(moe.experts(), moe.topK(), batch)
          * m.mlpParameters(moe.expertFfnHidden()) / tp * weightBytes;
    }
    if (ep > tp) {
      // The ep/tp replicas' tokens all reach the group's ranks, each holding whole experts.
      return layersPerStage * m.moeLayerShare()
          * busiestRankExperts(moe.experts(), moe.topK(), (double) batch * (ep / tp), ep)
          * m.mlpParameters(moe.expertFfnHidden()) * weightBytes;
    }
    return layersPerStage * m.moeLayerShare()
        * busiestRankExperts(moe.experts(), moe.topK(), batch, ep)
        * m.mlpParameters(moe.expertFfnHidden()) * ep / tp * weightBytes;
  }

  /** Routed-expert weights of one layer, averaged over the layers (0 for a dense model). */
  static double routedParametersPerLayer(TransformerSpec m) {
    return m.isMoe() ? m.moeLayerShare() * m.moe().experts()
        * m.mlpParameters(m.moe().expertFfnHidden()) : 0.0;
  }

  /**
   * Touched experts on the busiest of {@code ep} ranks holding E/ep experts each, when
   * {@code tokens} tokens route to k experts: each expert is touched with probability
   * 1 − (1 − k/E)^tokens ({@link #expertsTouched}), and the rank with the most touched sets the
   * step ({@link ExpertBalance#expectedMax}), never fewer than is certain: the mean share of the
   * touched experts, and one expert once a token routes.
   */
  static double busiestRankExperts(int experts, int topK, double tokens, int ep) {
    double touched = 1.0 - Math.pow(1.0 - (double) topK / experts, tokens);
    double certain = Math.max(tokens >= 1 ? 1.0 : 0.0, experts * touched / ep);
    return Math.max(certain, ExpertBalance.expectedMax(experts / ep, touched, ep));
  }

  /**
   * Experts a step of {@code tokens} tokens touches in one MoE layer: each token routes to k of
   * the E experts, uniformly and independently across tokens, so an expert is missed by all of
   * them with probability (1 − k/E)^tokens and E·(1 − (1 − k/E)^tokens) are touched (the
   * expected occupancy of E bins; one token touches k, a large batch nearly all E). Decode reads
   * the weights of those experts only.
   */
  static double expertsTouched(int experts, int topK, double tokens) {
    return experts * (1.0 - Math.pow(1.0 - (double) topK / experts, tokens));
  }
}
