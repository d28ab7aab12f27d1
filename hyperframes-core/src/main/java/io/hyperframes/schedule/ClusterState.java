package io.hyperframes.schedule;

import java.util.List;
import java.util.Set;

/** What is left of every node; the one mutable structure of a replay. */
final class ClusterState {
  final GpuNode[] nodes;
  final long[] cpuLeft;
  final long[] memLeft;
  final int[][] gpuLeft;
  /** Σ of {@link #gpuLeft} per node, kept with it (Best-fit scores every feasible node by it). */
  final long[] gpuLeftSum;
  final long capacityMilli;
  long allocatedMilli;
  /** Nodes that failed and are not repaired yet: nothing fits on them. */
  final boolean[] down;
  /** Fully free GPUs of each node, and how many healthy nodes have k of them. */
  final int[] wholeFree;
  final int[] nodesWithFree;
  /**
   * Bit sets over node indices: {@code atLeast[s]} holds the healthy nodes with at least s fully
   * free GPUs (s ≥ 1; entry 0 unused). A whole-GPU task's feasible nodes are among them, in
   * index order, so the placement walks those instead of every node.
   */
  final long[][] atLeast;

  ClusterState(List<GpuNode> list) {
    nodes = list.toArray(GpuNode[]::new);
    cpuLeft = new long[nodes.length];
    memLeft = new long[nodes.length];
    gpuLeft = new int[nodes.length][];
    gpuLeftSum = new long[nodes.length];
    long cap = 0;
    for (int i = 0; i < nodes.length; i++) {
      cpuLeft[i] = nodes[i].cpuMilli();
      memLeft[i] = nodes[i].memoryMib();
      gpuLeft[i] = new int[nodes[i].gpus()];
      java.util.Arrays.fill(gpuLeft[i], 1000);
      gpuLeftSum[i] = 1000L * nodes[i].gpus();
      cap += 1000L * nodes[i].gpus();
    }
    capacityMilli = cap;
    down = new boolean[nodes.length];
    int widest = 0;
    for (GpuNode node : nodes) {
      widest = Math.max(widest, node.gpus());
    }
    wholeFree = new int[nodes.length];
    nodesWithFree = new int[widest + 1];
    atLeast = new long[widest + 1][(nodes.length + 63) >>> 6];
    for (int i = 0; i < nodes.length; i++) {
      wholeFree[i] = nodes[i].gpus();
      nodesWithFree[wholeFree[i]]++;
      mark(i, 0, wholeFree[i], true);
    }
  }

  private ClusterState(ClusterState other) {
    nodes = other.nodes;
    cpuLeft = other.cpuLeft.clone();
    memLeft = other.memLeft.clone();
    gpuLeft = new int[other.gpuLeft.length][];
    for (int i = 0; i < gpuLeft.length; i++) {
      gpuLeft[i] = other.gpuLeft[i].clone();
    }
    gpuLeftSum = other.gpuLeftSum.clone();
    capacityMilli = other.capacityMilli;
    allocatedMilli = other.allocatedMilli;
    down = other.down.clone();
    wholeFree = other.wholeFree.clone();
    nodesWithFree = other.nodesWithFree.clone();
    atLeast = new long[other.atLeast.length][];
    for (int s = 0; s < atLeast.length; s++) {
      atLeast[s] = other.atLeast[s].clone();
    }
  }

  /** Sets (or clears) node {@code n} in {@link #atLeast} for every s in (from, to]. */
  private void mark(int n, int from, int to, boolean set) {
    long bit = 1L << n;
    for (int s = from + 1; s <= to; s++) {
      if (set) {
        atLeast[s][n >>> 6] |= bit;
      } else {
        atLeast[s][n >>> 6] &= ~bit;
      }
    }
  }

  /** Re-counts node {@code n}'s fully free GPUs after a change. */
  private void recount(int n) {
    int c = 0;
    for (int g : gpuLeft[n]) {
      if (g == 1000) {
        c++;
      }
    }
    if (!down[n]) {
      nodesWithFree[wholeFree[n]]--;
      nodesWithFree[c]++;
      if (c > wholeFree[n]) {
        mark(n, wholeFree[n], c, true);
      } else {
        mark(n, c, wholeFree[n], false);
      }
    }
    wholeFree[n] = c;
  }

  /** Marks node {@code n} failed ({@code true}) or repaired. */
  void setDown(int n, boolean failed) {
    if (down[n] == failed) {
      return;
    }
    down[n] = failed;
    nodesWithFree[wholeFree[n]] += failed ? -1 : 1;
    mark(n, 0, wholeFree[n], !failed);
  }

  /** Puts node {@code n} back as it was (a scratch change undone). */
  void restore(int n, long cpu, long mem, int[] gpus) {
    cpuLeft[n] = cpu;
    memLeft[n] = mem;
    gpuLeft[n] = gpus;
    long sum = 0;
    for (int g : gpus) {
      sum += g;
    }
    gpuLeftSum[n] = sum;
    recount(n);
  }

  /**
   * Whether the healthy nodes have enough fully free GPUs for {@code job}'s whole-GPU members
   * at all: for every member size s, at least as many slots of s free GPUs (Σ over nodes of
   * ⌊free / s⌋) as members of size s or more. Necessary, not sufficient (CPU, memory, models
   * and shared GPUs are left to the placement); exact for a single whole-GPU member without
   * other requests.
   */
  boolean mayFit(GpuJob job) {
    return mayFit(job.members());
  }

  /** {@link #mayFit(GpuJob)} for a job of these members. */
  boolean mayFit(List<GpuPod> members) {
    // Indexed loops: the members are an ImmutableList, whose iterators showed up as a quarter
    // of a replay's allocations.
    for (int m = 0; m < members.size(); m++) {
      GpuPod p = members.get(m);
      if (p.gpus() == 0 || p.gpuMilli() < 1000) {
        continue;
      }
      int s = p.gpus();
      if (s >= nodesWithFree.length) {
        return false;
      }
      int need = 0;
      for (int x = 0; x < members.size(); x++) {
        GpuPod q = members.get(x);
        if (q.gpuMilli() == 1000 && q.gpus() >= s) {
          need++;
        }
      }
      long have = 0;
      for (int k = s; k < nodesWithFree.length && have < need; k++) {
        have += (long) nodesWithFree[k] * (k / s);
      }
      if (have < need) {
        return false;
      }
    }
    return true;
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
    if (pod.gpuMilli() == 1000) {
      // Whole GPUs: the count kept up to date by place and release.
      return wholeFree[n] >= pod.gpus();
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
    gpuLeftSum[n] -= (long) taken.length * pod.gpuMilli();
    if (pod.gpus() > 0) {
      recount(n);
    }
    return taken;
  }

  /** Takes again exactly what {@link #place} took and {@link #release} gave back. */
  void placeAt(int n, GpuPod pod, int[] taken) {
    cpuLeft[n] -= pod.cpuMilli();
    memLeft[n] -= pod.memoryMib();
    for (int g : taken) {
      if (gpuLeft[n][g] < pod.gpuMilli()) {
        throw new IllegalStateException("GPU " + g + " of " + nodes[n].name() + " was taken");
      }
      gpuLeft[n][g] -= pod.gpuMilli();
    }
    allocatedMilli += pod.totalGpuMilli();
    gpuLeftSum[n] -= (long) taken.length * pod.gpuMilli();
    if (pod.gpus() > 0) {
      recount(n);
    }
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
    gpuLeftSum[n] += (long) taken.length * pod.gpuMilli();
    if (pod.gpus() > 0) {
      recount(n);
    }
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
      return gpuLeftSum[n];
    }
  }
}
