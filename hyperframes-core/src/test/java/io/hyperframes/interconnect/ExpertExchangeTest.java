package io.hyperframes.interconnect;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.hyperframes.catalog.Catalog;
import io.hyperframes.hardware.Cluster;
import io.hyperframes.hardware.Fabric;
import java.io.IOException;
import java.io.InputStream;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * The expected destinations of uniformly routed tokens against a simulation, and DeepEP's
 * forwarded exchange against DeepEP's own kernel table
 * ({@code src/test/resources/interconnect/deepep-kernels.json}, with its sources).
 */
class ExpertExchangeTest {

  private static final InterconnectModel MODEL = InterconnectModel.alphaBeta();

  @Test
  void expectedDestinationsMatchASimulationOfUniformRouting() {
    Random random = new Random(7);
    int experts = 128;
    int topK = 8;
    int ep = 32;
    int perNode = 8;
    ExpertExchange x = new ExpertExchange(1, 1, experts, topK, new CollectiveGroup(ep, perNode));
    int trials = 200_000;
    long ranks = 0;
    long nodes = 0;
    for (int t = 0; t < trials; t++) {
      boolean[] picked = new boolean[experts];
      java.util.Set<Integer> r = new java.util.HashSet<>();
      java.util.Set<Integer> n = new java.util.HashSet<>();
      for (int i = 0; i < topK; i++) {
        int e;
        do {
          e = random.nextInt(experts);
        } while (picked[e]);
        picked[e] = true;
        int rank = e / (experts / ep);
        r.add(rank);
        n.add(rank / perNode);
      }
      ranks += r.size();
      nodes += n.size();
    }
    assertEquals((double) ranks / trials, x.ranksPerToken(), 0.01 * x.ranksPerToken());
    assertEquals((double) nodes / trials, x.nodesPerToken(), 0.01 * x.nodesPerToken());
  }

  @Test
  void oneExpertPerTokenGoesToOneRankAndEveryExpertToAll() {
    ExpertExchange one = new ExpertExchange(10, 4, 64, 1, new CollectiveGroup(16, 8));
    assertEquals(1.0, one.ranksPerToken(), 1e-12);
    assertEquals(1.0, one.nodesPerToken(), 1e-12);
    ExpertExchange all = new ExpertExchange(10, 4, 16, 16, new CollectiveGroup(16, 8));
    assertEquals(16.0, all.ranksPerToken(), 1e-12);
    assertEquals(2.0, all.nodesPerToken(), 1e-12);
    // Every token reaches the other node once and the 7 other ranks of each node once.
    assertEquals(10 * 1 * 4.0, all.forwardedNetworkBytes(), 1e-9);
    assertEquals(10 * 14 * 4.0, all.forwardedLocalBytes(), 1e-9);
  }

  @Test
  void badExchangesAreNamed() {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> new ExpertExchange(1, 1, 100, 8, new CollectiveGroup(32, 8)));
    assertTrue(e.getMessage().startsWith("exchange.experts: 100"), e.getMessage());
    e = assertThrows(IllegalArgumentException.class,
        () -> new ExpertExchange(1, 1, 64, 65, new CollectiveGroup(32, 8)));
    assertTrue(e.getMessage().startsWith("exchange.topK"), e.getMessage());
  }

  /**
   * DeepEP's table: the rows the model expresses are within 7.5 % on the network-bound rows
   * (V1 at EP 32, V2 at EP 16 and 32). Two rows are reported, not met: V1's EP 16 kernels
   * reached less than V2's on the same two nodes, and its intranode row less than the NVLink
   * fraction NCCL reaches. The variant not chosen, the fabric's NCCL message-size curve, is
   * 11 % or more under every network-bound dispatch row.
   */
  @Test
  void deepEpKernelTable() throws IOException {
    JsonNode rows;
    try (InputStream in = getClass().getResourceAsStream("/interconnect/deepep-kernels.json")) {
      rows = new ObjectMapper().readTree(in).get("rows");
    }
    Catalog catalog = Catalog.builtIn();
    int checked = 0;
    int ep64 = 0;
    for (JsonNode row : rows) {
      String id = row.get("id").asText();
      var node = catalog.node("node", row.get("node").asText());
      var acc = catalog.accelerator("accelerator", node.accelerator());
      int ep = row.get("ep").asInt();
      int perNode = row.get("perNode").asInt();
      Cluster cluster = new Cluster(acc, ep, perNode, acc.intraNode(), node.interNode());
      CollectiveGroup group = new CollectiveGroup(ep, perNode);
      double tokens = row.get("tokens").asDouble();
      double hidden = row.get("hidden").asDouble();
      int groups = row.has("groups") ? row.get("groups").asInt() : 1;
      int groupTopK = row.has("groupTopK") ? row.get("groupTopK").asInt() : 1;
      for (String phase : new String[] {"dispatch", "combine"}) {
        double bytes = phase.equals("dispatch") ? hidden * (1 + 4.0 / 128) : 2 * hidden;
        ExpertExchange x = new ExpertExchange(tokens, bytes, row.get("experts").asInt(),
            row.get("topK").asInt(), group, groups, groupTopK);
        double seconds = MODEL.forwardedExchange(cluster, x).seconds();
        // DeepEP's logical bytes: per node reached (own included) across nodes, per rank
        // reached (own included) inside one.
        double logical = tokens * bytes
            * (group.singleNode() ? x.ranksPerToken() : x.nodesPerToken());
        double measured = row.get(phase + "GBps").asDouble() * 1e9;
        double error = logical / seconds / measured - 1;
        String what = id + " " + phase + ": " + Math.round(error * 1000) / 10.0 + " %";
        if (id.equals("deepep-v1-intranode-ep8")) {
          assertTrue(error > 0.10 && error < 0.20, what);
        } else if (id.equals("deepep-v1-internode-ep16")) {
          assertTrue(error > 0.20 && error < 0.35, what);
        } else if (id.equals("deepep-v1-internode-ep64")) {
          // The check of group-limited routing (8 nodes, a token's experts from 4).
          assertTrue(Math.abs(error) <= EP64_BOUND, what);
          ep64++;
        } else {
          assertTrue(Math.abs(error) <= 0.075, what);
          checked++;
          if (phase.equals("dispatch")) {
            double curved = curvedSeconds(cluster, x);
            double curvedError = logical / curved / measured - 1;
            assertTrue(curvedError < -0.11, id + " with the message-size curve: "
                + curvedError);
          }
        }
      }
    }
    assertEquals(6, checked);
    assertEquals(2, ep64);
  }

  /** The EP 64 row: -4.5 % dispatch, -2.2 % combine (a check, computed after the model). */
  private static final double EP64_BOUND = 0.05;

  /**
   * Group-limited routing against a simulation of Megatron-Core's {@code group_limited_topk}
   * (megatron/core/transformer/moe/moe_utils.py @ ac198fc0: groups ranked by the sum of their
   * top k/g scores, then the top k of the chosen groups' experts) under random scores, as
   * {@code --moe-router-force-load-balancing} routes: DeepSeek-V3's 8 groups of 32 experts, a
   * token's 8 from 4 of them, on 2 to 32 nodes of 8 ranks. The model's destinations are within
   * 6 % of the simulation's and never under them by more than 1 %: a node or rank holding part
   * of a group is reached a little more often than the routing reaches it.
   */
  @Test
  void groupLimitedDestinationsMatchASimulationOfMegatronsRouting() {
    Random random = new Random(11);
    int experts = 256;
    int topK = 8;
    int groups = 8;
    int groupTopK = 4;
    int size = experts / groups;
    int trials = 40_000;
    int[] eps = {16, 32, 64, 128, 256};
    double[] nodes = new double[eps.length];
    double[] ranks = new double[eps.length];
    double[] scores = new double[experts];
    for (int t = 0; t < trials; t++) {
      for (int e = 0; e < experts; e++) {
        scores[e] = random.nextDouble();
      }
      double[] groupScore = new double[groups];
      for (int g = 0; g < groups; g++) {
        double[] in = java.util.Arrays.copyOfRange(scores, g * size, (g + 1) * size);
        java.util.Arrays.sort(in);
        for (int i = 0; i < topK / groupTopK; i++) {
          groupScore[g] += in[size - 1 - i];
        }
      }
      boolean[] chosen = new boolean[groups];
      for (int i = 0; i < groupTopK; i++) {
        int best = -1;
        for (int g = 0; g < groups; g++) {
          if (!chosen[g] && (best < 0 || groupScore[g] > groupScore[best])) {
            best = g;
          }
        }
        chosen[best] = true;
      }
      boolean[] picked = new boolean[experts];
      for (int i = 0; i < topK; i++) {
        int best = -1;
        for (int e = 0; e < experts; e++) {
          if (chosen[e / size] && !picked[e] && (best < 0 || scores[e] > scores[best])) {
            best = e;
          }
        }
        picked[best] = true;
      }
      for (int j = 0; j < eps.length; j++) {
        java.util.Set<Integer> r = new java.util.HashSet<>();
        java.util.Set<Integer> n = new java.util.HashSet<>();
        for (int e = 0; e < experts; e++) {
          if (picked[e]) {
            int rank = e / (experts / eps[j]);
            r.add(rank);
            n.add(rank / 8);
          }
        }
        nodes[j] += n.size();
        ranks[j] += r.size();
      }
    }
    for (int j = 0; j < eps.length; j++) {
      ExpertExchange x = new ExpertExchange(1, 1, experts, topK, new CollectiveGroup(eps[j], 8),
          groups, groupTopK);
      double simulatedNodes = nodes[j] / trials;
      double simulatedRanks = ranks[j] / trials;
      assertTrue(x.nodesPerToken() / simulatedNodes - 1 < 0.06
          && x.nodesPerToken() / simulatedNodes - 1 > -0.01,
          "ep " + eps[j] + " nodes: " + x.nodesPerToken() + " vs " + simulatedNodes);
      assertTrue(x.ranksPerToken() / simulatedRanks - 1 < 0.06
          && x.ranksPerToken() / simulatedRanks - 1 > -0.01,
          "ep " + eps[j] + " ranks: " + x.ranksPerToken() + " vs " + simulatedRanks);
    }
    // Without the limit each token reaches 5.3 of 8 nodes at ep 64; with it, at most 4.
    ExpertExchange open = new ExpertExchange(1, 1, experts, topK, new CollectiveGroup(64, 8));
    ExpertExchange limited = new ExpertExchange(1, 1, experts, topK, new CollectiveGroup(64, 8),
        groups, groupTopK);
    assertEquals(5.29, open.nodesPerToken(), 0.01);
    assertEquals(4.0, limited.nodesPerToken(), 1e-9);
    // One group, or every group chosen, is the unlimited routing exactly.
    ExpertExchange all = new ExpertExchange(1, 1, experts, topK, new CollectiveGroup(64, 8),
        groups, groups);
    assertEquals(open.nodesPerToken(), all.nodesPerToken(), 1e-12);
    assertEquals(open.ranksPerToken(), all.ranksPerToken(), 1e-12);
  }

  /** The variant not chosen: each fabric at NCCL's message-size curve, per peer message. */
  private static double curvedSeconds(Cluster cluster, ExpertExchange x) {
    Fabric intra = cluster.intraNode();
    Fabric inter = cluster.interNode();
    int nodes = x.group().nodes();
    double net = x.forwardedNetworkBytes();
    double local = x.forwardedLocalBytes();
    return inter.latencySeconds() + inter.launchSeconds() + Math.max(
        net / inter.sustainedBandwidth(net / (nodes - 1)),
        local / intra.sustainedBandwidth(local / (x.group().size() - 1)));
  }
}
