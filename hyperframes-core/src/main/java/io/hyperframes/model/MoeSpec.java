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
 * @param groups groups of consecutive experts the router ranks first (1: no grouping;
 *     DeepSeek-V3's {@code n_group}, Megatron-Core's {@code --moe-router-num-groups})
 * @param groupTopK groups a token's experts are chosen from (1 with one group; DeepSeek-V3's
 *     {@code topk_group}, Megatron-Core's {@code --moe-router-group-topk}): node-limited routing
 *     when the groups are the nodes of the expert-parallel group (DeepSeek-V3 §2.1.2,
 *     arXiv 2412.19437: each token to at most 4 nodes)
 */
public record MoeSpec(int experts, int topK, int expertFfnHidden, int sharedExperts,
    int sharedExpertFfnHidden, int firstDenseLayers, int layerInterval, double capacityFactor,
    int groups, int groupTopK) {

  /** A mixture without group-limited routing (one group). */
  public MoeSpec(int experts, int topK, int expertFfnHidden, int sharedExperts,
      int sharedExpertFfnHidden, int firstDenseLayers, int layerInterval, double capacityFactor) {
    this(experts, topK, expertFfnHidden, sharedExperts, sharedExpertFfnHidden, firstDenseLayers,
        layerInterval, capacityFactor, 1, 1);
  }

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
    Checks.positive("model.moe.groups", groups);
    checkArgument(experts % groups == 0, "model.moe.groups: %s does not divide model.moe.experts"
        + " %s", groups, experts);
    checkArgument(groupTopK >= 1 && groupTopK <= groups, "model.moe.groupTopK: must be in"
        + " [1, model.moe.groups %s], got %s", groups, groupTopK);
    // Megatron-Core ranks the groups by the sum of their top (k / groupTopK) scores, so each
    // chosen group holds at least one of a token's k experts, and the chosen groups hold k.
    checkArgument(groupTopK == groups || groupTopK <= topK, "model.moe.groupTopK: %s is more than"
        + " model.moe.topK %s (each chosen group takes at least one of a token's experts)",
        groupTopK, topK);
    checkArgument((long) groupTopK * (experts / groups) >= topK, "model.moe.groupTopK: %s groups"
        + " of %s experts hold fewer than model.moe.topK %s", groupTopK, experts / groups, topK);
  }

  /** Whether a token's experts come from fewer groups than there are (group-limited routing). */
  public boolean groupLimited() {
    return groupTopK < groups;
  }

  /** The same mixture with another capacity factor (or imbalance stand-in). */
  public MoeSpec withCapacityFactor(double factor) {
    return new MoeSpec(experts, topK, expertFfnHidden, sharedExperts, sharedExpertFfnHidden,
        firstDenseLayers, layerInterval, factor, groups, groupTopK);
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
