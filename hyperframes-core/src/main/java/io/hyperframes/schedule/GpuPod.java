package io.hyperframes.schedule;

import static com.google.common.base.Preconditions.checkArgument;

import com.google.common.collect.ImmutableSet;
import java.util.Set;

/**
 * One task of a trace: what it asks for and when it arrives.
 *
 * @param name task name
 * @param cpuMilli CPU in thousandths of a core
 * @param memoryMib memory in MiB
 * @param gpus GPUs asked for: 0 (a CPU task), 1 with {@code gpuMilli} ≤ 1000 (a whole or a
 *     shared GPU), or more, each whole
 * @param gpuMilli thousandths of each GPU asked for (1000 for whole GPUs, less for a share of one)
 * @param gpuModels GPU models the task may run on (empty: any)
 * @param arrivalSeconds when the task arrives
 * @param durationSeconds how long it runs once placed ({@code Double.POSITIVE_INFINITY}: until
 *     the end of the replay)
 */
public record GpuPod(String name, long cpuMilli, long memoryMib, int gpus, int gpuMilli,
    Set<String> gpuModels, double arrivalSeconds, double durationSeconds) {
  public GpuPod {
    checkArgument(name != null && !name.isBlank(), "pod.name: must be given");
    checkArgument(cpuMilli >= 0, "pod %s.cpuMilli: must be >= 0, got %s", name, cpuMilli);
    checkArgument(memoryMib >= 0, "pod %s.memoryMib: must be >= 0, got %s", name, memoryMib);
    checkArgument(gpus >= 0, "pod %s.gpus: must be >= 0, got %s", name, gpus);
    checkArgument(gpus == 0 ? gpuMilli == 0 : gpuMilli > 0 && gpuMilli <= 1000,
        "pod %s.gpuMilli: must be in (0, 1000] with GPUs, 0 without, got %s", name, gpuMilli);
    checkArgument(gpus <= 1 || gpuMilli == 1000,
        "pod %s.gpuMilli: a task of %s GPUs takes them whole (1000), got %s", name, gpus,
        gpuMilli);
    checkArgument(Double.isFinite(arrivalSeconds) && arrivalSeconds >= 0,
        "pod %s.arrivalSeconds: must be finite and >= 0, got %s", name, arrivalSeconds);
    checkArgument(durationSeconds >= 0, "pod %s.durationSeconds: must be >= 0, got %s", name,
        durationSeconds);
    gpuModels = gpuModels == null ? Set.of() : ImmutableSet.copyOf(gpuModels);
  }

  /** GPU thousandths the task holds in all: gpus × gpuMilli. */
  public long totalGpuMilli() {
    return (long) gpus * gpuMilli;
  }

  /** This task under another name (workload inflation copies a task). */
  public GpuPod withName(String other) {
    return new GpuPod(other, cpuMilli, memoryMib, gpus, gpuMilli, gpuModels, arrivalSeconds,
        durationSeconds);
  }
}
