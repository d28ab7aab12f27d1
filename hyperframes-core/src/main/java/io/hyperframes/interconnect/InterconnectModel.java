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
   * Time of one dispatch (or combine) of routed tokens by DeepEP's normal kernels
   * (deepseek-ai/DeepEP, docs/legacy.md at dd758caf, "Normal kernels with NVLink and RDMA
   * forwarding"): a token crosses the network once per other node it is routed to, landing on
   * the GPU of its own local index there, which forwards it over NVLink once per destination
   * GPU; inside its own node it goes once per destination GPU ({@link ExpertExchange}). Network
   * and NVLink traffic run at once, so the slower sets the time:
   * {@code α + launch + max(networkBytes / (B_inter·e_inter), localBytes / (B_intra·e_intra))},
   * each fabric at its large-message sustained fraction (the kernels stream tokens through
   * fixed-size chunks, not NCCL's protocol, whose message-size curve they do not follow). On one
   * node only the NVLink term remains.
   */
  default CollectiveTime forwardedExchange(Cluster cluster, ExpertExchange exchange) {
    io.hyperframes.hardware.Fabric intra = cluster.intraNode();
    io.hyperframes.hardware.Fabric inter = cluster.interNode();
    boolean oneNode = exchange.group().singleNode();
    double local = exchange.forwardedLocalBytes()
        / (intra.bandwidthBytesPerSecond() * intra.efficiency());
    double network = oneNode ? 0.0 : exchange.forwardedNetworkBytes()
        / (inter.bandwidthBytesPerSecond() * inter.efficiency());
    io.hyperframes.hardware.Fabric slowest = oneNode ? intra : inter;
    double seconds = slowest.latencySeconds() + slowest.launchSeconds()
        + Math.max(local, network);
    double moved = exchange.forwardedLocalBytes() + exchange.forwardedNetworkBytes();
    if (!(seconds > 0)) {
      return CollectiveTime.NONE;
    }
    return new CollectiveTime(seconds, Algorithm.FORWARDED, moved / seconds);
  }

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
