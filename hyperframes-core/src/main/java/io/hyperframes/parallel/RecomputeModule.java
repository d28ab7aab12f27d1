package io.hyperframes.parallel;

import com.google.common.collect.Sets;
import io.hyperframes.json.Ids;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;

/**
 * A sub-module whose forward pass selective recomputation reruns in the backward pass, so that
 * its inner activations are not stored ({@code layout.recomputeModules}; Megatron-Core's
 * {@code --recompute-modules} with {@code --recompute-granularity selective}, whose names these
 * are: {@code megatron/core/transformer/transformer_config.py} at d98e8a64, field
 * {@code recompute_modules}, default {@code ["core_attn"]}).
 *
 * <ul>
 *   <li>{@code core_attn}: the attention core (scores, softmax, A·V); free with a fused
 *       attention kernel, whose backward recomputes the scores anyway (Korthikanti et al. 2022
 *       §5, selective recomputation).
 *   <li>{@code layernorm}: the two normalisations of a layer; their outputs, the inputs of the
 *       QKV and first MLP matmuls, are dropped and rebuilt from the stored residual.
 *   <li>{@code mlp}: a dense layer's MLP.
 *   <li>{@code moe_act}: the experts' activation function; its output, the input of the second
 *       expert matmul, is dropped.
 *   <li>{@code moe}: the whole MoE layer (router, dispatch, experts, combine, shared experts),
 *       its token exchange included.
 *   <li>{@code shared_experts}: the shared experts of an MoE layer.
 *   <li>{@code mla_up_proj}: the up-projections of latent attention; the full-width queries,
 *       keys and values are rebuilt from the stored latents.
 * </ul>
 */
public enum RecomputeModule {
  CORE_ATTN,
  LAYERNORM,
  MLP,
  MOE_ACT,
  MOE,
  SHARED_EXPERTS,
  MLA_UP_PROJ;

  private final String id = Ids.lowerCase(this);

  /** Megatron-Core's default: the attention core only. */
  public static final Set<RecomputeModule> DEFAULT = Sets.immutableEnumSet(CORE_ATTN);

  /** The name in requests and in Megatron-Core's {@code --recompute-modules}. */
  public String id() {
    return id;
  }

  /** The module named {@code value}; {@code IllegalArgumentException} naming it otherwise. */
  public static RecomputeModule fromId(String field, String value) {
    return Ids.byId(RecomputeModule.class, RecomputeModule::id, field, value, "module");
  }

  /**
   * The modules named in {@code values}, an immutable set; an empty list, a repeated or an
   * unknown name is an {@code IllegalArgumentException} naming the field and the value.
   */
  public static Set<RecomputeModule> setOf(String field, List<String> values) {
    if (values == null) {
      return null;
    }
    if (values.isEmpty()) {
      throw new IllegalArgumentException(field + ": must name at least one module (or be left"
          + " out for Megatron-Core's default core_attn)");
    }
    EnumSet<RecomputeModule> out = EnumSet.noneOf(RecomputeModule.class);
    for (String v : values) {
      if (!out.add(fromId(field, v))) {
        throw new IllegalArgumentException(field + ": module '" + v + "' is named twice");
      }
    }
    return Sets.immutableEnumSet(out);
  }

  /** The ids of {@code modules} in declaration order, e.g. for a command line. */
  public static List<String> ids(Set<RecomputeModule> modules) {
    List<String> out = new ArrayList<>();
    for (RecomputeModule m : values()) {
      if (modules.contains(m)) {
        out.add(m.id());
      }
    }
    return List.copyOf(out);
  }
}
