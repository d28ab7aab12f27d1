package io.hyperframes.schedule;

import static com.google.common.base.Preconditions.checkArgument;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * One node of a GPU cluster as a scheduler sees it.
 *
 * @param name node name
 * @param cpuMilli CPU in thousandths of a core
 * @param memoryMib host memory in MiB
 * @param gpus whole GPUs on the node (0 for a CPU node)
 * @param model GPU model ("V100M32", "T4"; empty for a CPU node)
 */
public record GpuNode(String name, long cpuMilli, long memoryMib, int gpus, String model) {
  public GpuNode {
    checkArgument(name != null && !name.isBlank(), "node.name: must be given");
    checkArgument(cpuMilli >= 0, "node %s.cpuMilli: must be >= 0, got %s", name, cpuMilli);
    checkArgument(memoryMib >= 0, "node %s.memoryMib: must be >= 0, got %s", name, memoryMib);
    checkArgument(gpus >= 0 && gpus <= 64, "node %s.gpus: must be in [0, 64], got %s", name,
        gpus);
    model = model == null ? "" : model;
  }

  /**
   * A uniform cluster: {@code count} nodes of {@code gpusPerNode} GPUs named
   * {@code node-00000}, {@code node-00001}, …, no CPU or memory limit.
   *
   * @throws IllegalArgumentException naming {@code cluster.nodes} or {@code cluster.gpusPerNode}
   *     when a count is out of range (1 to 1 000 000 nodes, 1 to 64 GPUs)
   */
  public static List<GpuNode> uniform(int count, int gpusPerNode) {
    checkArgument(count >= 1 && count <= 1_000_000, "cluster.nodes: must be in [1, 1000000],"
        + " got %s", count);
    checkArgument(gpusPerNode >= 1 && gpusPerNode <= 64, "cluster.gpusPerNode: must be in"
        + " [1, 64], got %s", gpusPerNode);
    List<GpuNode> out = new ArrayList<>(count);
    for (int i = 0; i < count; i++) {
      out.add(new GpuNode(String.format(Locale.ROOT, "node-%05d", i), 0, 0, gpusPerNode, ""));
    }
    return List.copyOf(out);
  }
}
