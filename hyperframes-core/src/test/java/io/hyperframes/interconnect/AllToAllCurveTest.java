package io.hyperframes.interconnect;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.hyperframes.catalog.Catalog;
import io.hyperframes.hardware.Cluster;
import io.hyperframes.hardware.Fabric;
import java.io.IOException;
import java.io.InputStream;
import org.junit.jupiter.api.Test;

/**
 * NCCL's all-to-all across nodes of 8 H100 at 400 Gb/s per GPU against the alpha-beta model on a
 * DGX H100 cluster of the catalog ({@code src/test/resources/interconnect/nccl-alltoall.json},
 * nccl-tests on 2–32 nodes, 32 MiB to 2 GiB per rank, with its source). The table is the one the
 * choice of where to read the message-size curve was made on (role fit): at the bytes one rank
 * sends, nccl-tests' size, rather than per peer message.
 */
class AllToAllCurveTest {

  private static final double MIB = 1024.0 * 1024.0;

  @Test
  void theCurveReadAtTheRanksBytesMeetsNcclTestsFromFourMibPerPeer() throws IOException {
    JsonNode rows;
    try (InputStream in = getClass().getResourceAsStream("/interconnect/nccl-alltoall.json")) {
      rows = new ObjectMapper().readTree(in).get("rows");
    }
    Catalog catalog = Catalog.builtIn();
    var node = catalog.node("node", "dgx-h100");
    var acc = catalog.accelerator("accelerator", node.accelerator());
    InterconnectModel model = InterconnectModel.alphaBeta();
    double sumLarge = 0;
    double maxLarge = 0;
    double sumPerPeer = 0;
    double maxPerPeer = 0;
    int large = 0;
    int small = 0;
    for (JsonNode row : rows) {
      int n = row.get("gpus").asInt();
      double bytes = row.get("sizeMiB").asDouble() * MIB;
      double measured = row.get("algbwGBps").asDouble() * 1e9;
      Cluster cluster = new Cluster(acc, n, 8, acc.intraNode(), node.interNode());
      double seconds = model.time(cluster, Collective.ALL_TO_ALL, bytes,
          new CollectiveGroup(n, 8)).seconds();
      double error = bytes / seconds / measured - 1;
      double perPeerError = bytes / perPeerSeconds(cluster, bytes, n) / measured - 1;
      String what = n + " GPUs, " + row.get("sizeMiB").asInt() + " MiB: " + error;
      if (bytes / n >= 4 * MIB) {
        large++;
        sumLarge += Math.abs(error);
        maxLarge = Math.max(maxLarge, Math.abs(error));
        sumPerPeer += Math.abs(perPeerError);
        maxPerPeer = Math.max(maxPerPeer, Math.abs(perPeerError));
        // The variant not chosen is slower than measured on every such row.
        assertTrue(perPeerError < 0, what + ", per peer " + perPeerError);
      } else {
        // Under 4 MiB per peer the model is optimistic (reported, not met), by up to 2x.
        small++;
        assertTrue(error > 0.10 && error < 1.0, what);
      }
    }
    assertEquals(20, large);
    assertEquals(15, small);
    assertTrue(sumLarge / large < 0.06, "mean " + sumLarge / large);
    assertTrue(maxLarge < 0.19, "max " + maxLarge);
    assertTrue(sumPerPeer / large > 0.20, "per peer: mean " + sumPerPeer / large);
    assertTrue(maxPerPeer > 0.45, "per peer: max " + maxPerPeer);
  }

  /** The variant not chosen: each fabric's curve read at the message to one peer. */
  private static double perPeerSeconds(Cluster cluster, double bytes, int n) {
    Fabric intra = cluster.intraNode();
    Fabric inter = cluster.interNode();
    int g = 8;
    return inter.latencySeconds() + inter.launchSeconds() + Math.max(
        (double) (n - g) / n * bytes / inter.sustainedBandwidth(bytes / n),
        (double) (g - 1) / n * bytes / intra.sustainedBandwidth(bytes / n));
  }
}
