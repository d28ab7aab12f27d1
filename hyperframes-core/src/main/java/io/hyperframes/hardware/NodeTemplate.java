package io.hyperframes.hardware;

/**
 * A server design: how many accelerators it holds and the fabric each device reaches other nodes
 * through.
 *
 * @param id catalog identifier ("dgx-a100")
 * @param accelerator accelerator id it is built with
 * @param devicesPerNode accelerators per node
 * @param interNode fabric between nodes, per device (total NIC bandwidth / devices per node)
 * @param source where the numbers come from
 */
public record NodeTemplate(String id, String accelerator, int devicesPerNode, Fabric interNode,
    String source) {
  public NodeTemplate {
    Checks.positive(id + ".devicesPerNode", devicesPerNode);
  }
}
