package io.hyperframes.interconnect;

import io.hyperframes.hardware.Cluster;

/** Time of collectives on a cluster's fabrics. */
public interface InterconnectModel {

  /**
   * Time of {@code op} on a message of {@code bytes} (the per-rank buffer size as nccl-tests counts
   * it) over {@code group}, choosing the fastest algorithm the fabrics offer.
   */
  CollectiveTime time(Cluster cluster, Collective op, double bytes, CollectiveGroup group);

  /**
   * The alpha-beta model with Hockney half-bandwidth efficiency over NCCL's algorithms (ring,
   * double binary tree, in-network reduction); see {@link AlphaBetaInterconnect}.
   */
  static InterconnectModel alphaBeta() {
    return AlphaBetaInterconnect.NCCL;
  }

  /**
   * As {@link #alphaBeta()}, also considering the hierarchical all-reduce (reduce-scatter inside
   * the node, all-reduce across nodes, all-gather inside the node) of Horovod and DeepSpeed.
   */
  static InterconnectModel alphaBetaHierarchical() {
    return AlphaBetaInterconnect.WITH_HIERARCHICAL;
  }
}
