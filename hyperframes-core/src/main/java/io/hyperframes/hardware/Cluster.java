package io.hyperframes.hardware;

import static com.google.common.base.Preconditions.checkArgument;

/**
 * A set of identical accelerators in nodes: {@code devices} in all, {@code devicesPerNode} per node
 * joined by {@code intraNode}, nodes joined by {@code interNode}. A node is the domain the
 * intra-node fabric spans (an NVLink domain); its devices may sit in several hosts, each an
 * operating-system instance with its own CPUs and one launch pod ({@code devicesPerHost}: 8 in a
 * DGX, where host and node are one; 4 per compute tray of a GB200 NVL72 rack, whose 72 GPUs share
 * one NVLink domain).
 *
 * @param hostCoresPerNode CPU cores of all the node's hosts (0 when unknown)
 * @param hostMemoryBytesPerNode host memory of all the node's hosts (0 when unknown)
 * @param devicesPerHost devices per host, dividing {@code devicesPerNode}
 */
public record Cluster(Accelerator accelerator, int devices, int devicesPerNode, Fabric intraNode,
    Fabric interNode, int hostCoresPerNode, double hostMemoryBytesPerNode, int devicesPerHost) {

  /** A cluster whose host CPUs and memory are not known (golden parameters assume 8 cores and 1 TiB per node). */
  public Cluster(Accelerator accelerator, int devices, int devicesPerNode, Fabric intraNode,
      Fabric interNode) {
    this(accelerator, devices, devicesPerNode, intraNode, interNode, 0, 0.0);
  }

  /** A cluster whose hosts are its nodes ({@code devicesPerHost = devicesPerNode}). */
  public Cluster(Accelerator accelerator, int devices, int devicesPerNode, Fabric intraNode,
      Fabric interNode, int hostCoresPerNode, double hostMemoryBytesPerNode) {
    this(accelerator, devices, devicesPerNode, intraNode, interNode, hostCoresPerNode,
        hostMemoryBytesPerNode, devicesPerNode);
  }

  /** The same cluster with another accelerator (the same model with other constants). */
  public Cluster withAccelerator(Accelerator other) {
    return new Cluster(other, devices, devicesPerNode, intraNode, interNode, hostCoresPerNode,
        hostMemoryBytesPerNode, devicesPerHost);
  }

  /** The same cluster with another device count. */
  public Cluster withDevices(int count) {
    return new Cluster(accelerator, count, devicesPerNode, intraNode, interNode, hostCoresPerNode,
        hostMemoryBytesPerNode, devicesPerHost);
  }

  /** CPU cores of one host (0 when unknown). */
  public int hostCoresPerHost() {
    return (int) ((long) hostCoresPerNode * devicesPerHost / devicesPerNode);
  }

  /** Host memory of one host (0 when unknown). */
  public double hostMemoryBytesPerHost() {
    return hostMemoryBytesPerNode * devicesPerHost / devicesPerNode;
  }


  /** Largest accepted device count; larger requests are rejected as implausible input. */
  public static final int MAX_DEVICES = 1 << 22;

  public Cluster {
    checkArgument(accelerator != null, "cluster.accelerator: must be given");
    Checks.positive("cluster.devices", devices);
    Checks.positive("cluster.devicesPerNode", devicesPerNode);
    checkArgument(devices <= MAX_DEVICES, "cluster.devices: must be <= %s, got %s", MAX_DEVICES,
        devices);
    checkArgument(devicesPerNode <= 1024, "cluster.devicesPerNode: must be <= 1024, got %s",
        devicesPerNode);
    checkArgument(devices <= devicesPerNode || devices % devicesPerNode == 0,
        "cluster.devices: %s is more than one node holds (%s) but not a whole number of nodes",
        devices, devicesPerNode);
    checkArgument(intraNode != null && interNode != null, "cluster: fabrics must be given");
    checkArgument(devicesPerHost > 0 && devicesPerNode % devicesPerHost == 0,
        "cluster.devicesPerHost: %s does not divide cluster.devicesPerNode %s", devicesPerHost,
        devicesPerNode);
  }

  /** Number of nodes (1 when all devices fit in one). */
  public int nodes() {
    return devices <= devicesPerNode ? 1 : devices / devicesPerNode;
  }
}
