package io.hyperframes.schedule;

import static com.google.common.base.Preconditions.checkArgument;

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
}
