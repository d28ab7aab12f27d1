package io.hyperframes.schedule;

import java.util.List;
import java.util.Set;

/** What is left of every node; the one mutable structure of a replay. */
final class ClusterState {
  final GpuNode[] nodes;
  final long[] cpuLeft;
  final long[] memLeft;
  final int[][] gpuLeft;
  final long capacityMilli;
  long allocatedMilli;

  ClusterState(List<GpuNode> list) {
    nodes = list.toArray(GpuNode[]::new);
    cpuLeft = new long[nodes.length];
    memLeft = new long[nodes.length];
    gpuLeft = new int[nodes.length][];
    long cap = 0;
    for (int i = 0; i < nodes.length; i++) {
      cpuLeft[i] = nodes[i].cpuMilli();
      memLeft[i] = nodes[i].memoryMib();
      gpuLeft[i] = new int[nodes[i].gpus()];
      java.util.Arrays.fill(gpuLeft[i], 1000);
      cap += 1000L * nodes[i].gpus();
    }
    capacityMilli = cap;
  }

  /** Whether {@code pod} fits on node {@code n} now. */
  boolean fits(int n, GpuPod pod) {
    if (pod.cpuMilli() > cpuLeft[n] || pod.memoryMib() > memLeft[n]) {
      return false;
    }
    if (pod.gpus() == 0) {
      return true;
    }
    GpuNode node = nodes[n];
    if (node.gpus() == 0) {
      return false;
    }
    Set<String> models = pod.gpuModels();
    if (!models.isEmpty() && !models.contains(node.model())) {
      return false;
    }
    int enough = 0;
    for (int g : gpuLeft[n]) {
      if (g >= pod.gpuMilli() && ++enough >= pod.gpus()) {
        return true;
      }
    }
    return false;
  }

  /** Places {@code pod} on node {@code n}, a shared task on GPU {@code shareGpu}. */
  void place(int n, GpuPod pod, int shareGpu) {
    cpuLeft[n] -= pod.cpuMilli();
    memLeft[n] -= pod.memoryMib();
    if (pod.gpus() == 1 && pod.gpuMilli() < 1000) {
      if (shareGpu < 0 || gpuLeft[n][shareGpu] < pod.gpuMilli()) {
        throw new IllegalStateException("placement chose GPU " + shareGpu + " of "
            + nodes[n].name() + " without " + pod.gpuMilli() + " thousandths left");
      }
      gpuLeft[n][shareGpu] -= pod.gpuMilli();
    } else if (pod.gpus() > 0) {
      takeWhole(gpuLeft[n], pod.gpus());
    }
    allocatedMilli += pod.totalGpuMilli();
  }

  /** Takes the {@code count} lowest-index fully free GPUs. */
  static void takeWhole(int[] gpus, int count) {
    for (int i = 0; i < gpus.length && count > 0; i++) {
      if (gpus[i] == 1000) {
        gpus[i] = 0;
        count--;
      }
    }
    if (count > 0) {
      throw new IllegalStateException("not enough free GPUs");
    }
  }

  /** A reusable view of node {@code n}. */
  final class View implements NodeView {
    int n;

    @Override
    public GpuNode node() {
      return nodes[n];
    }

    @Override
    public long cpuLeft() {
      return cpuLeft[n];
    }

    @Override
    public long memoryLeft() {
      return memLeft[n];
    }

    @Override
    public int gpuLeft(int i) {
      return gpuLeft[n][i];
    }

    @Override
    public long gpuLeftTotal() {
      long t = 0;
      for (int g : gpuLeft[n]) {
        t += g;
      }
      return t;
    }
  }
}
