package io.hyperframes.interconnect;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.hyperframes.catalog.Catalog;
import io.hyperframes.hardware.Cluster;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

/**
 * Laws of the all-to-all time and of DeepEP's forwarded exchange of routed tokens, over catalog
 * clusters, group sizes and message sizes.
 */
class AllToAllProperties {

  private static final InterconnectModel MODEL = InterconnectModel.alphaBeta();

  @Provide
  Arbitrary<String> accelerators() {
    return Arbitraries.of("a100-sxm-80gb", "h100-sxm-80gb", "h800-sxm-80gb", "b200-sxm-192gb",
        "mi300x-192gb");
  }

  @Provide
  Arbitrary<Integer> sizes() {
    return Arbitraries.of(2, 4, 8, 16, 32, 64, 128, 256);
  }

  @Provide
  Arbitrary<Double> bytes() {
    return Arbitraries.doubles().between(1e3, 1e10);
  }

  @Provide
  Arbitrary<Integer> groups() {
    return Arbitraries.of(2, 4, 8, 16, 32, 64, 128);
  }

  @Provide
  Arbitrary<Integer> perNode() {
    return Arbitraries.of(1, 2, 4, 8);
  }

  @Provide
  Arbitrary<Integer> expertsPerRank() {
    return Arbitraries.of(1, 2, 4, 8, 16);
  }

  @Provide
  Arbitrary<Integer> topK() {
    return Arbitraries.integers().between(1, 16);
  }

  @Provide
  Arbitrary<Double> tokens() {
    return Arbitraries.doubles().between(1, 1e6);
  }

  private static Cluster cluster(String accelerator) {
    Catalog c = Catalog.builtIn();
    var a = c.accelerator("accelerator", accelerator);
    return new Cluster(a, 1024, 8, a.intraNode(), c.node("node", a.defaultNode()).interNode());
  }

  /**
   * No faster than its traffic over the slowest hop it uses: the (n − g)/n share bound for other
   * nodes through one NIC, and the (g − 1)/n share for the node's own ranks over the node's
   * fabric.
   */
  @Property(tries = 1000)
  void neverFasterThanItsTrafficOverTheSlowestHop(@ForAll("accelerators") String accelerator,
      @ForAll("sizes") int n, @ForAll("sizes") int perNode, @ForAll("bytes") double bytes) {
    int g = Math.min(perNode, Math.min(n, 8));
    Cluster c = cluster(accelerator);
    double t = MODEL.time(c, Collective.ALL_TO_ALL, bytes, new CollectiveGroup(n, g)).seconds();
    double cross = g == n ? 0.0 : (double) (n - g) / n * bytes
        / c.interNode().bandwidthBytesPerSecond();
    double local = (double) (g - 1) / n * bytes / c.intraNode().bandwidthBytesPerSecond();
    assertTrue(t >= Math.max(cross, local) && Double.isFinite(t), () -> t + " < "
        + Math.max(cross, local));
  }

  /** Expert parallelism inside a node is never slower than the same group across nodes. */
  @Property(tries = 1000)
  void insideANodeIsNeverSlowerThanAcrossNodes(@ForAll("accelerators") String accelerator,
      @ForAll("sizes") int n, @ForAll("bytes") double bytes) {
    int size = Math.min(n, 8);
    Cluster c = cluster(accelerator);
    double inside = MODEL.time(c, Collective.ALL_TO_ALL, bytes, new CollectiveGroup(size, size))
        .seconds();
    for (int g = 1; g < size; g *= 2) {
      double across = MODEL.time(c, Collective.ALL_TO_ALL, bytes,
          new CollectiveGroup(size, g)).seconds();
      assertTrue(inside <= across, () -> "inside " + inside + " > across " + across);
    }
  }

  private static ExpertExchange exchange(int ep, int perNode, int perRank, int topK,
      double tokens) {
    int experts = ep * perRank;
    return new ExpertExchange(tokens, 8192, experts, Math.min(topK, experts),
        new CollectiveGroup(ep, Math.min(perNode, ep)));
  }

  /**
   * A token crosses the network at most once per node it is routed to, so never more than the
   * all-to-all's copy per routed expert on another node: {@code k·(n − g)/n} copies.
   */
  @Property(tries = 1000)
  void neverMoreNetworkBytesThanOneCopyPerExpert(@ForAll("groups") int ep,
      @ForAll("perNode") int perNode, @ForAll("expertsPerRank") int perRank,
      @ForAll("topK") int topK, @ForAll("tokens") double tokens) {
    ExpertExchange x = exchange(ep, perNode, perRank, topK, tokens);
    int g = x.group().perNode();
    double copies = x.copyBytes() * (ep - g) / ep;
    assertTrue(x.forwardedNetworkBytes() <= copies * (1 + 1e-12),
        () -> x.forwardedNetworkBytes() + " > " + copies);
    assertTrue(x.ranksPerToken() <= Math.min(x.topK(), ep) + 1e-9);
    assertTrue(x.nodesPerToken() <= Math.min(x.topK(), x.group().nodes()) + 1e-9);
    assertTrue(x.ranksPerToken() >= x.nodesPerToken() - 1e-9);
  }

  /** No faster than its traffic over either fabric at the fabric's full bandwidth. */
  @Property(tries = 1000)
  void neverFasterThanItsTrafficOverEitherFabric(@ForAll("accelerators") String accelerator,
      @ForAll("groups") int ep, @ForAll("perNode") int perNode,
      @ForAll("expertsPerRank") int perRank, @ForAll("topK") int topK,
      @ForAll("tokens") double tokens) {
    Cluster c = cluster(accelerator);
    ExpertExchange x = exchange(ep, perNode, perRank, topK, tokens);
    double t = MODEL.forwardedExchange(c, x).seconds();
    double net = x.group().singleNode() ? 0.0
        : x.forwardedNetworkBytes() / c.interNode().bandwidthBytesPerSecond();
    double local = x.forwardedLocalBytes() / c.intraNode().bandwidthBytesPerSecond();
    assertTrue(Double.isFinite(t) && t > 0 && t >= Math.max(net, local),
        () -> t + " < " + Math.max(net, local));
  }
}
