package io.hyperframes.hardware;

/**
 * A server design: how many accelerators it holds and the fabric each device reaches other nodes
 * through.
 *
 * @param id catalog identifier ("dgx-a100")
 * @param accelerator accelerator id it is built with
 * @param devicesPerNode accelerators per node
 * @param interNode fabric between nodes, per device (total NIC bandwidth / devices per node)
 * @param hostCores CPU cores per node, all its hosts (for data-loader workers)
 * @param hostMemoryBytes host memory per node, all its hosts
 * @param source where the numbers come from
 * @param devicesPerHost devices per host (one launch pod), dividing {@code devicesPerNode}: a
 *     node is the intra-node fabric's domain ({@link Cluster})
 */
public record NodeTemplate(String id, String accelerator, int devicesPerNode, Fabric interNode,
    int hostCores, double hostMemoryBytes, String source, int devicesPerHost) {
  public NodeTemplate {
    Checks.positive(id + ".devicesPerNode", devicesPerNode);
    Checks.positive(id + ".hostCores", hostCores);
    Checks.positive(id + ".hostMemoryBytes", hostMemoryBytes);
    if (devicesPerHost <= 0 || devicesPerNode % devicesPerHost != 0) {
      throw new IllegalArgumentException(id + ".devicesPerHost: " + devicesPerHost
          + " does not divide devicesPerNode " + devicesPerNode);
    }
  }

  /** A node that is one host. */
  public NodeTemplate(String id, String accelerator, int devicesPerNode, Fabric interNode,
      int hostCores, double hostMemoryBytes, String source) {
    this(id, accelerator, devicesPerNode, interNode, hostCores, hostMemoryBytes, source,
        devicesPerNode);
  }
}
