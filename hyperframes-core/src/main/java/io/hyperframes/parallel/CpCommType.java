package io.hyperframes.parallel;

import java.util.Locale;

/**
 * How context-parallel ranks exchange keys and values ({@code layout.cpCommType}; Megatron-LM
 * {@code --cp-comm-type}, megatron/training/arguments.py at d98e8a64: "p2p, a2a, allgather or
 * a2a+p2p", implemented by Transformer Engine's context-parallel attention).
 *
 * <ul>
 *   <li>{@link #P2P} — ring attention (Liu et al. 2023, arXiv 2310.01889, §3): cp − 1 steps,
 *       each passing a KV chunk to the next rank while attending to the one it holds, so the
 *       exchange hides behind the attention it feeds; Megatron-LM's default.
 *   <li>{@link #ALL_GATHER} — the KV of the whole sequence gathered before attention and its
 *       gradient reduce-scattered after, not overlapped.
 *   <li>{@link #A2A} — DeepSpeed-Ulysses (Jacobs et al. 2023, arXiv 2309.14509, §3.1): an
 *       all-to-all turns a sequence shard of every head into the whole sequence of 1/cp of the
 *       heads for Q, K and V, and one turns the output back, not overlapped; the heads per
 *       tensor-parallel rank must divide by cp.
 *   <li>{@link #A2A_P2P} — all-to-all inside the node, ring across nodes (Megatron-LM with
 *       {@code --hierarchical-context-parallel-sizes}).
 * </ul>
 */
public enum CpCommType {
  P2P("p2p", "p2p"),
  ALL_GATHER("all_gather", "allgather"),
  A2A("a2a", "a2a"),
  A2A_P2P("a2a+p2p", "a2a+p2p");

  private final String id;
  private final String megatron;

  CpCommType(String id, String megatron) {
    this.id = id;
    this.megatron = megatron;
  }

  /** The JSON name. */
  public String id() {
    return id;
  }

  /** The value of Megatron-LM's {@code --cp-comm-type}. */
  public String megatronName() {
    return megatron;
  }

  /** The type named {@code value} (JSON or Megatron spelling); names field and value otherwise. */
  public static CpCommType fromId(String field, String value) {
    String v = value == null ? "" : value.trim().toLowerCase(Locale.ROOT);
    for (CpCommType t : values()) {
      if (t.id.equals(v) || t.megatron.equals(v)) {
        return t;
      }
    }
    throw new IllegalArgumentException(field + ": '" + value + "' is not a context-parallel"
        + " communication type (p2p, all_gather, a2a, a2a+p2p)");
  }
}
