package io.hyperframes.interconnect;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.hyperframes.hardware.Catalog;
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
      for (String phase : new String[] {"dispatch", "combine"}) {
        double bytes = phase.equals("dispatch") ? hidden * (1 + 4.0 / 128) : 2 * hidden;
        ExpertExchange x = new ExpertExchange(tokens, bytes, row.get("experts").asInt(),
            row.get("topK").asInt(), group);
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
