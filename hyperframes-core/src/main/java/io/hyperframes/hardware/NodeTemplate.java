package io.hyperframes.hardware;

/**
 * A server design: how many accelerators it holds and the fabric each device reaches other nodes
 * through.
 *
 * @param id catalog identifier ("dgx-a100")
 * @param accelerator accelerator id it is built with
 * @param devicesPerNode accelerators per node
 * @param interNode fabric between nodes, per device (total NIC bandwidth / devices per node)
 * @param hostCores CPU cores per node (for data-loader workers)
 * @param hostMemoryBytes host memory per node
 * @param source where the numbers come from
 */
public record NodeTemplate(String id, String accelerator, int devicesPerNode, Fabric interNode,
    int hostCores, double hostMemoryBytes, String source) {
  public NodeTemplate {
    Checks.positive(id + ".devicesPerNode", devicesPerNode);
    Checks.positive(id + ".hostCores", hostCores);
    Checks.positive(id + ".hostMemoryBytes", hostMemoryBytes);
  }
}
