package io.hyperframes.schedule;

import java.util.Arrays;

/**
 * The fragmentation metric of a time replay ({@link Replay.Fragmentation}): each node's
 * fragmented GPU thousandths under the target workload, their sum, its integral over time and
 * the record of its changes. Nodes whose room changed are marked and recomputed once, before
 * time moves on.
 */
final class FragmentationMeter {
  private final ClusterState state;
  private final TargetWorkload target;
  /** Fragmented GPU thousandths of each node. */
  private final double[] nodeFrag;
  private double fragSum;
  private double fragArea;
  private double[] fragT = new double[64];
  private double[] fragD = new double[64];
  private int fragN;
  private final boolean[] dirty;
  private final int[] dirtyList;
  private int dirtyCount;

  /** Measures {@code state} under {@code target}, starting at time 0. */
  FragmentationMeter(ClusterState state, TargetWorkload target) {
    this.state = state;
    this.target = target;
    int nodes = state.nodes.length;
    nodeFrag = new double[nodes];
    dirty = new boolean[nodes];
    dirtyList = new int[nodes];
    for (int i = 0; i < nodes; i++) {
      refresh(i, 0);
    }
  }

  /** Marks node {@code n} changed: its fragmentation is recomputed before time moves on. */
  void touch(int n) {
    if (!dirty[n]) {
      dirty[n] = true;
      dirtyList[dirtyCount++] = n;
    }
  }

  /** Recomputes the fragmentation of the nodes changed at this instant, {@code now}. */
  void flush(double now) {
    for (int i = 0; i < dirtyCount; i++) {
      int n = dirtyList[i];
      dirty[n] = false;
      refresh(n, now);
    }
    dirtyCount = 0;
  }

  /** Time moves on by {@code seconds} at the current amount. */
  void advance(double seconds) {
    fragArea += fragSum * seconds;
  }

  /** The metric over [0, {@code makespan}]. */
  Replay.Fragmentation result(double makespan) {
    double share = makespan > 0 && state.capacityMilli > 0
        ? fragArea / (state.capacityMilli * makespan) : 0;
    double[] deltas = new double[fragN];
    for (int i = 0; i < fragN; i++) {
      deltas[i] = fragD[i] / 1000;
    }
    return new Replay.Fragmentation(share, Arrays.copyOf(fragT, fragN), deltas);
  }

  /** Node {@code n}'s fragmentation now (0 while it is down), recorded when it changed. */
  private void refresh(int n, double now) {
    double f = state.down[n] ? 0 : Policies.fragmentation(target, state.cpuLeft[n],
        state.gpuLeft[n], state.nodes[n].model());
    double d = f - nodeFrag[n];
    if (d == 0) {
      return;
    }
    nodeFrag[n] = f;
    fragSum += d;
    if (fragN > 0 && fragT[fragN - 1] == now) {
      fragD[fragN - 1] += d;
      return;
    }
    if (fragN == fragT.length) {
      fragT = Arrays.copyOf(fragT, 2 * fragN);
      fragD = Arrays.copyOf(fragD, 2 * fragN);
    }
    fragT[fragN] = now;
    fragD[fragN++] = d;
  }
}
