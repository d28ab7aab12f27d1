package io.hyperframes.hardware;

import static com.google.common.base.Preconditions.checkArgument;

/**
 * A set of identical accelerators in nodes: {@code devices} in all, {@code devicesPerNode} per node
 * joined by {@code intraNode}, nodes joined by {@code interNode}.
 */
public record Cluster(Accelerator accelerator, int devices, int devicesPerNode, Fabric intraNode,
    Fabric interNode, int hostCoresPerNode, double hostMemoryBytesPerNode) {

  /** A cluster whose host CPUs and memory are not known (golden parameters assume 8 cores and 1 TiB per node). */
  public Cluster(Accelerator accelerator, int devices, int devicesPerNode, Fabric intraNode,
      Fabric interNode) {
    this(accelerator, devices, devicesPerNode, intraNode, interNode, 0, 0.0);
  }

  /** The same cluster with another accelerator (the same model with other constants). */
  public Cluster withAccelerator(Accelerator other) {
    return new Cluster(other, devices, devicesPerNode, intraNode, interNode, hostCoresPerNode,
        hostMemoryBytesPerNode);
  }

  /** The same cluster with another device count. */
  public Cluster withDevices(int count) {
    return new Cluster(accelerator, count, devicesPerNode, intraNode, interNode, hostCoresPerNode,
        hostMemoryBytesPerNode);
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
  }

  /** Number of nodes (1 when all devices fit in one). */
  public int nodes() {
    return devices <= devicesPerNode ? 1 : devices / devicesPerNode;
  }
}
