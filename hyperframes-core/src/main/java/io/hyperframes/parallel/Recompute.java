package io.hyperframes.parallel;

import io.hyperframes.json.Ids;

/**
 * Activation recomputation policy (Korthikanti et al. 2022, arXiv 2205.05198, §4-5): keep all
 * activations, recompute only the attention core (softmax, dropout, QKᵀ, A·V), or keep only each
 * layer's input and rerun the whole forward pass in backward (Chen et al. 2016, arXiv 1604.06174).
 */
public enum Recompute {
  NONE,
  SELECTIVE,
  FULL;

  private final String id = Ids.lowerCase(this);

  public String id() {
    return id;
  }

  /** The policy named {@code value}; {@code IllegalArgumentException} naming it otherwise. */
  public static Recompute fromId(String field, String value) {
    return Ids.byId(Recompute.class, Recompute::id, field, value, "recompute mode");
  }
}
