package io.hyperframes.model;

import static com.google.common.base.Preconditions.checkArgument;

import io.hyperframes.hardware.Checks;

/**
 * The mixture-of-experts part of a transformer ({@code model.moe}): in its MoE layers the MLP is
 * a router, {@code experts} routed experts of which each token uses {@code topK}, and
 * {@code sharedExperts} experts every token uses (Shazeer et al. 2017, arXiv 1701.06538; Fedus et
 * al. 2021, Switch Transformer, arXiv 2101.03961, §2.1; shared experts: Dai et al. 2024,
 * DeepSeekMoE, arXiv 2401.06066, §3.2). Each expert is an MLP of the model's kind (gated or not)
 * with {@code expertFfnHidden} inner size.
 *
 * @param experts routed experts per MoE layer (E)
 * @param topK routed experts per token (k)
 * @param expertFfnHidden inner size of one routed expert
 * @param sharedExperts experts every token uses (0 for none)
 * @param sharedExpertFfnHidden inner size of one shared expert (0 when there are none)
 * @param firstDenseLayers leading layers with a dense MLP of the model's {@code ffnHidden}
 *     (DeepSeek-V3's {@code first_k_dense_replace})
 * @param layerInterval every {@code layerInterval}-th layer after those is an MoE layer, the
 *     others dense (1: every layer; Qwen-MoE's {@code decoder_sparse_step})
 * @param capacityFactor tokens an expert takes, as a multiple of its even share; 0 for dropless
 *     routing (every routed token is computed)
 */
public record MoeSpec(int experts, int topK, int expertFfnHidden, int sharedExperts,
    int sharedExpertFfnHidden, int firstDenseLayers, int layerInterval, double capacityFactor) {

  public MoeSpec {
    Checks.positive("model.moe.experts", experts);
    Checks.positive("model.moe.topK", topK);
    checkArgument(topK <= experts, "model.moe.topK: %s is more than model.moe.experts %s", topK,
        experts);
    Checks.positive("model.moe.expertFfnHidden", expertFfnHidden);
    checkArgument(sharedExperts >= 0, "model.moe.sharedExperts: must be >= 0, got %s",
        sharedExperts);
    checkArgument(sharedExpertFfnHidden >= 0,
        "model.moe.sharedExpertFfnHidden: must be >= 0, got %s", sharedExpertFfnHidden);
    checkArgument(sharedExperts == 0 || sharedExpertFfnHidden > 0,
        "model.moe.sharedExpertFfnHidden: must be given with %s shared experts", sharedExperts);
    checkArgument(firstDenseLayers >= 0, "model.moe.firstDenseLayers: must be >= 0, got %s",
        firstDenseLayers);
    Checks.positive("model.moe.layerInterval", layerInterval);
    checkArgument(capacityFactor == 0 || (capacityFactor >= 1 && capacityFactor <= 64),
        "model.moe.capacityFactor: must be 0 (dropless) or in [1, 64], got %s", capacityFactor);
    checkArgument(experts <= 1 << 16, "model.moe.experts: must be <= 65536, got %s", experts);
  }

  /**
   * Expert rows one token makes in an MoE layer: its k routed copies, times the capacity factor
   * when one is set (its padding is computed too).
   */
  public double routedPerToken() {
    return topK * (capacityFactor > 0 ? capacityFactor : 1.0);
  }

  /** Whether layer {@code i} (0-based) of the model is an MoE layer. */
  public boolean isMoeLayer(int i) {
    return i >= firstDenseLayers && (i - firstDenseLayers) % layerInterval == 0;
  }

  /** MoE layers among {@code layers}. */
  public int moeLayers(int layers) {
    int n = layers - firstDenseLayers;
    return n <= 0 ? 0 : (n + layerInterval - 1) / layerInterval;
  }

  /** Whether the layer has a router: one expert routed to is a dense MLP. */
  public boolean routed() {
    return experts > 1;
  }
}
