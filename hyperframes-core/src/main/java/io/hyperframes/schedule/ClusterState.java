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
  /** Nodes that failed and are not repaired yet: nothing fits on them. */
  final boolean[] down;

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
    down = new boolean[nodes.length];
  }

  private ClusterState(ClusterState other) {
    nodes = other.nodes;
    cpuLeft = other.cpuLeft.clone();
    memLeft = other.memLeft.clone();
    gpuLeft = new int[other.gpuLeft.length][];
    for (int i = 0; i < gpuLeft.length; i++) {
      gpuLeft[i] = other.gpuLeft[i].clone();
    }
    capacityMilli = other.capacityMilli;
    allocatedMilli = other.allocatedMilli;
    down = other.down.clone();
  }

  /** An independent copy, to try placements on. */
  ClusterState copy() {
    return new ClusterState(this);
  }

  /** Whether {@code pod} fits on node {@code n} now. */
  boolean fits(int n, GpuPod pod) {
    if (down[n]) {
      return false;
    }
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

  /**
   * Places {@code pod} on node {@code n}, a shared task on GPU {@code shareGpu}; returns the
   * indices of the GPUs it took (for {@link #release}).
   */
  int[] place(int n, GpuPod pod, int shareGpu) {
    cpuLeft[n] -= pod.cpuMilli();
    memLeft[n] -= pod.memoryMib();
    int[] taken;
    if (pod.gpus() == 1 && pod.gpuMilli() < 1000) {
      if (shareGpu < 0 || gpuLeft[n][shareGpu] < pod.gpuMilli()) {
        throw new IllegalStateException("placement chose GPU " + shareGpu + " of "
            + nodes[n].name() + " without " + pod.gpuMilli() + " thousandths left");
      }
      gpuLeft[n][shareGpu] -= pod.gpuMilli();
      taken = new int[] {shareGpu};
    } else if (pod.gpus() > 0) {
      taken = takeWhole(gpuLeft[n], pod.gpus());
    } else {
      taken = new int[0];
    }
    allocatedMilli += pod.totalGpuMilli();
    return taken;
  }

  /** Gives back what {@link #place} took. */
  void release(int n, GpuPod pod, int[] taken) {
    cpuLeft[n] += pod.cpuMilli();
    memLeft[n] += pod.memoryMib();
    for (int g : taken) {
      gpuLeft[n][g] += pod.gpuMilli();
      if (gpuLeft[n][g] > 1000) {
        throw new IllegalStateException("released more than GPU " + g + " of "
            + nodes[n].name() + " holds");
      }
    }
    allocatedMilli -= pod.totalGpuMilli();
  }

  /** Takes the {@code count} lowest-index fully free GPUs; returns their indices. */
  static int[] takeWhole(int[] gpus, int count) {
    int[] taken = new int[count];
    int k = 0;
    for (int i = 0; i < gpus.length && k < count; i++) {
      if (gpus[i] == 1000) {
        gpus[i] = 0;
        taken[k++] = i;
      }
    }
    if (k < count) {
      throw new IllegalStateException("not enough free GPUs");
    }
    return taken;
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
