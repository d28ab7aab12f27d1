package io.hyperframes.interconnect;

import io.hyperframes.hardware.Cluster;
import io.hyperframes.hardware.Fabric;

/**
 * Alpha-beta collective model.
 *
 * <p>Each algorithm costs {@code steps·α + volume / B(S)}, where the volume per rank and the step
 * counts are those of Thakur, Rabenseifner and Gropp 2005, "Optimization of Collective
 * Communication Operations in MPICH" (IJHPCA 19(1)), §3: ring all-reduce moves 2(n-1)/n·S in
 * 2(n-1) steps, reduce-scatter and all-gather (n-1)/n·S in n-1 steps. B(S) is the fabric's
 * sustained bandwidth at that message size ({@link Fabric#sustainedBandwidth}).
 *
 * <p>A ring that spans nodes crosses each node boundary once per channel; NCCL runs one channel
 * per NIC, so with g ranks of the group per node the inter-node bandwidth of the ring is g times
 * the per-device inter-node bandwidth (NCCL's ring over rails; Jeaugey, "NCCL 2.0", GTC 2017),
 * capped by the intra-node fabric. The hierarchical variant reduce-scatters inside the node,
 * all-reduces 1/g of the data across nodes and all-gathers inside the node. In-network reduction
 * (NVLink SHARP) sends and receives each byte once at the switch's reduction bandwidth.
 * Every collective also pays the fabric's launch latency once (kernel launch and the
 * synchronisation of the ranks). The double binary tree has the ring's bandwidth term and
 * 2·log2(n) latency steps (Sanders,
 * Speck and Träff 2009, "Two-tree algorithms for full bandwidth broadcast, reduction and scan",
 * Parallel Computing 35(12)).
 *
 * <p>An all-to-all is not a ring: each of the n ranks keeps 1/n of its {@code S} bytes and sends
 * S/n to every other rank, all exchanges at once (NCCL's grouped send/receive). Across nodes the
 * (n − g)/n·S bound for other nodes leaves through the rank's own NIC, not the node's g NICs
 * together, while the (g − 1)/n·S for its node's ranks crosses the intra-node fabric at the same
 * time: {@code α + max((n−g)/n·S / B_inter, (g−1)/n·S / B_intra)} (the per-rank traffic of
 * Thakur et al. 2005 §3's pairwise exchange; one latency, the exchanges being concurrent). Each
 * fabric's message-size curve {@code B(S)} is read at {@code S}, the bytes one rank sends, as
 * for every other collective: that is the size nccl-tests reports for an all-to-all
 * (NVIDIA/nccl-tests @ a0b82b22 {@code src/alltoall.cu}: the send count is n times the
 * per-peer count), and the n − 1 peer messages are in flight together. Read per peer message
 * (S/n), the curve put NCCL's all-to-all across 2–32 nodes of 8 H100 at 400 Gb/s per GPU up to
 * 46 % under the measured bandwidth at 4–128 MiB per peer (22 % mean); read at S, within 19 %
 * there (5.6 % mean).
 * Under 4 MiB per peer (many ranks, small batches) it is optimistic, up to 2× at 256 ranks and
 * 128 KiB per peer ({@code AllToAllCurveTest}, with the data and its source).
 */
enum AlphaBetaInterconnect implements InterconnectModel {
  /** NCCL's algorithms: ring, double binary tree, in-network reduction. */
  NCCL(false),
  /** Also the two-level reduce-scatter / all-reduce / all-gather (Horovod, DeepSpeed). */
  WITH_HIERARCHICAL(true);

  private final boolean hierarchical;

  AlphaBetaInterconnect(boolean hierarchical) {
    this.hierarchical = hierarchical;
  }

  @Override
  public CollectiveTime time(Cluster cluster, Collective op, double bytes, CollectiveGroup group) {
    int n = group.size();
    if (n <= 1 || bytes <= 0) {
      return CollectiveTime.NONE;
    }
    Fabric intra = cluster.intraNode();
    Fabric inter = cluster.interNode();
    double factor = op.busFactor(n);
    double volume = factor * bytes;
    int steps = op == Collective.ALL_REDUCE ? 2 * (n - 1)
        : op == Collective.POINT_TO_POINT ? 1 : n - 1;

    double best;
    Algorithm algorithm = Algorithm.RING;
    if (op == Collective.ALL_TO_ALL && !group.singleNode()) {
      int g = group.perNode();
      double cross = (double) (n - g) / n * bytes;
      double local = (double) (g - 1) / n * bytes;
      best = inter.latencySeconds() + Math.max(cross / inter.sustainedBandwidth(bytes),
          g > 1 ? local / intra.sustainedBandwidth(bytes) : 0.0);
      best += inter.launchSeconds();
      return new CollectiveTime(best, algorithm, volume / best);
    }
    if (op == Collective.ALL_TO_ALL) {
      best = intra.latencySeconds() + volume / intra.sustainedBandwidth(bytes)
          + intra.launchSeconds();
      return new CollectiveTime(best, algorithm, volume / best);
    }
    if (group.singleNode()) {
      best = steps * intra.latencySeconds() + volume / intra.sustainedBandwidth(bytes);
      if (op == Collective.ALL_REDUCE && intra.inNetworkReductionBytesPerSecond() > 0) {
        double t = 2 * intra.latencySeconds() + bytes / intra.inNetworkReductionBytesPerSecond();
        if (t < best) {
          best = t;
          algorithm = Algorithm.IN_NETWORK;
        }
      }
    } else {
      int g = group.perNode();
      double ringBandwidth = Math.min(intra.sustainedBandwidth(bytes),
          g * inter.sustainedBandwidth(bytes / g));
      best = steps * inter.latencySeconds() + volume / ringBandwidth;
      if (op == Collective.ALL_REDUCE) {
        int nodes = group.nodes();
        double tree = 2 * log2(n) * inter.latencySeconds() + volume / ringBandwidth;
        if (tree < best) {
          best = tree;
          algorithm = Algorithm.TREE;
        }
        if (hierarchical && g > 1) {
          double shard = bytes / g;
          double intraPart = 2 * ((g - 1) * intra.latencySeconds()
              + (double) (g - 1) / g * bytes / intra.sustainedBandwidth(bytes));
          double interPart = 2 * (nodes - 1) * inter.latencySeconds()
              + 2.0 * (nodes - 1) / nodes * shard / inter.sustainedBandwidth(shard);
          double hier = intraPart + interPart;
          if (hier < best) {
            best = hier;
            algorithm = Algorithm.HIERARCHICAL;
          }
        }
      }
    }
    best += group.singleNode() ? intra.launchSeconds() : inter.launchSeconds();
    return new CollectiveTime(best, algorithm, volume / best);
  }

  private static double log2(int n) {
    return Math.ceil(Math.log(n) / Math.log(2));
  }
}
