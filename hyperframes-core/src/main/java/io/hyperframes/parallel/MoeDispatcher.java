package io.hyperframes.parallel;

import java.util.Locale;

/**
 * How a mixture of experts' routed tokens travel to the expert-parallel ranks holding their
 * experts and back ({@code layout.moeDispatcher}; Megatron-Core's
 * {@code --moe-token-dispatcher-type} and {@code --moe-flex-dispatcher-backend},
 * {@code megatron/core/transformer/transformer_config.py} at d98e8a64).
 *
 * <ul>
 *   <li>{@link #ALL_TO_ALL} — Megatron-Core's {@code alltoall} dispatcher
 *       ({@code MoEAlltoAllTokenDispatcher}): each rank permutes one copy of a token per routed
 *       expert and exchanges the copies with an NCCL all-to-all over the expert-parallel group
 *       (Lepikhin et al. 2020, GShard, arXiv 2006.16668, §3.2). The default.
 *   <li>{@link #DEEPEP} — the {@code flex} dispatcher with the DeepEP backend
 *       ({@code _DeepepManager}; deepseek-ai/DeepEP, "normal kernels with NVLink and RDMA
 *       forwarding", docs/legacy.md at dd758caf): a token crosses the network once per
 *       destination node, to the GPU of its own local index there, which forwards it over NVLink
 *       once per destination GPU; inside a node it goes once per destination GPU. The expert
 *       tensor- and expert-parallel ranks form one group (Megatron-Core asserts
 *       {@code etp · ep > 1}).
 * </ul>
 */
public enum MoeDispatcher {
  ALL_TO_ALL("alltoall"),
  DEEPEP("deepep");

  private final String id;

  MoeDispatcher(String id) {
    this.id = id;
  }

  /** The JSON name. */
  public String id() {
    return id;
  }

  /** Megatron-LM's options selecting this dispatcher. */
  public String megatronArgs() {
    return this == ALL_TO_ALL ? "--moe-token-dispatcher-type alltoall"
        : "--moe-token-dispatcher-type flex --moe-flex-dispatcher-backend deepep";
  }

  /** The dispatcher named {@code value}; names field and value otherwise. */
  public static MoeDispatcher fromId(String field, String value) {
    String v = value == null ? "" : value.trim().toLowerCase(Locale.ROOT);
    for (MoeDispatcher d : values()) {
      if (d.id.equals(v)) {
        return d;
      }
    }
    throw new IllegalArgumentException(field + ": '" + value + "' is not a token dispatcher"
        + " HyperFrames models (alltoall, deepep; Megatron-Core's allgather dispatcher and the"
        + " hybridep and ncclep backends are not modelled)");
  }
}
