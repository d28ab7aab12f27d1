package io.hyperframes.interconnect;

/** How a collective is carried out. */
public enum Algorithm {
  /** Ring over all ranks; the slowest link of the ring sets the bandwidth. */
  RING,
  /** Double binary tree (NCCL): logarithmic latency, ring-like bandwidth for all-reduce. */
  TREE,
  /** Reduction inside the switch (NVLink SHARP / InfiniBand SHARP). */
  IN_NETWORK,
  /** Reduce-scatter inside each node, all-reduce across nodes, all-gather inside each node. */
  HIERARCHICAL,
  /**
   * Mixture-of-experts tokens sent across nodes once per destination node and forwarded inside
   * it (DeepEP; {@link InterconnectModel#forwardedExchange}).
   */
  FORWARDED
}
