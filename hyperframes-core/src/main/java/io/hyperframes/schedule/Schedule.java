package io.hyperframes.schedule;

import static com.google.common.base.Preconditions.checkArgument;
import static com.google.common.base.Preconditions.checkState;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.SplittableRandom;

/**
 * Replays a trace of GPU tasks on a cluster under a placement policy, the experiment of the
 * published GPU-sharing simulator (hkust-adsl/kubernetes-scheduler-simulator @ 8f3d641; Weng et
 * al., USENIX ATC 2023, §6): every task of the trace arrives once, in a seeded random order; with
 * {@link Builder#inflate} copies drawn uniformly with replacement from the trace follow until
 * the demand would pass that multiple of the cluster's GPU capacity (the first copy that would
 * pass it is dropped; the check adds one GPU's thousandths, as the simulator's does); tasks do not
 * depart; a task that finds no feasible node fails and is not retried. Deterministic for a seed.
 *
 * <pre>{@code
 * ScheduleResult r = Schedule.builder().nodes(nodes).pods(pods)
 *     .placement(Placement.fragmentationGradientDescent(TargetWorkload.of(pods)))
 *     .inflate(1.3).seed(42).run();
 * }</pre>
 */
public final class Schedule {
  private Schedule() {}

  /** A replay to configure; every option may be set once. */
  public static Builder builder() {
    return new Builder();
  }

  /** Options of a replay. */
  public static final class Builder {
    private List<GpuNode> nodes;
    private List<GpuPod> pods;
    private Placement placement;
    private double inflate = 1.0;
    private boolean inflateSet;
    private Long seed;

    private Builder() {}

    /** The cluster. */
    public Builder nodes(List<GpuNode> value) {
      checkState(nodes == null, "nodes: already set");
      checkArgument(value != null && !value.isEmpty(), "nodes: at least one node");
      nodes = List.copyOf(value);
      return this;
    }

    /** The trace. */
    public Builder pods(List<GpuPod> value) {
      checkState(pods == null, "pods: already set");
      checkArgument(value != null && !value.isEmpty(), "pods: at least one task");
      pods = List.copyOf(value);
      return this;
    }

    /** The trace as a file of Alibaba's GPU-sharing trace format ({@link Traces#openbPods}). */
    public Builder trace(java.nio.file.Path file) {
      return pods(Traces.openbPods(file).items());
    }

    /** The cluster as a node list of that trace ({@link Traces#openbNodes}). */
    public Builder cluster(java.nio.file.Path file) {
      return nodes(Traces.openbNodes(file).items());
    }

    /**
     * The placement policy by name: random, bestfit, or fgd (its target workload from the trace,
     * which must be set first).
     */
    public Builder policy(String name) {
      checkState(pods != null || !"fgd".equalsIgnoreCase(name),
          "policy fgd: set the trace first (its target workload comes from it)");
      return placement(Placement.named(name, pods == null ? null : TargetWorkload.of(pods)));
    }

    /** The placement policy. */
    public Builder placement(Placement value) {
      checkState(placement == null, "placement: already set to %s", placement);
      checkArgument(value != null, "placement: must be given");
      placement = value;
      return this;
    }

    /**
     * Demand to reach, as a multiple of the cluster's GPU capacity, by appending copies of the
     * trace's tasks (unset: the trace alone; the trace is never cut).
     */
    public Builder inflate(double ratio) {
      checkState(!inflateSet, "inflate: already set to %s", inflate);
      checkArgument(Double.isFinite(ratio) && ratio > 0 && ratio <= 10,
          "inflate: must be in (0, 10], got %s", ratio);
      inflate = ratio;
      inflateSet = true;
      return this;
    }

    /** The seed (default 42). */
    public Builder seed(long value) {
      checkState(seed == null, "seed: already set to %s", seed);
      seed = value;
      return this;
    }

    /** Replays the trace. */
    public ScheduleResult run() {
      checkState(nodes != null, "nodes: not set");
      checkState(pods != null, "pods: not set");
      checkState(placement != null, "placement: not set");
      long s = seed == null ? 42 : seed;
      SplittableRandom rng = new SplittableRandom(s);
      ClusterState state = new ClusterState(nodes);
      List<GpuPod> order = arrivals(pods, inflateSet ? inflate : 0, state.capacityMilli, rng);
      int[] rank = permutation(nodes.size(), rng);
      return replay(state, order, rank, placement, rng, s);
    }
  }

  /** The trace by name, shuffled, then the inflation copies (none when inflate ≤ 0). */
  static List<GpuPod> arrivals(List<GpuPod> pods, double inflate, long capacity,
      SplittableRandom rng) {
    List<GpuPod> sorted = new ArrayList<>(pods);
    sorted.sort(Comparator.comparing(GpuPod::name));
    List<GpuPod> order = new ArrayList<>(sorted);
    for (int i = order.size() - 1; i > 0; i--) {
      java.util.Collections.swap(order, i, rng.nextInt(i + 1));
    }
    long total = 0;
    for (GpuPod p : sorted) {
      total += p.totalGpuMilli();
    }
    double target = inflate * capacity;
    // A trace without GPU demand cannot be inflated towards a GPU target: copies add nothing.
    if (inflate > 0 && total < target && capacity > 0 && total > 0) {
      for (int i = 0; ; i++) {
        GpuPod p = sorted.get(rng.nextInt(sorted.size()));
        if (total + p.gpuMilli() > target) {
          break;
        }
        total += p.totalGpuMilli();
        order.add(p.withName(p.name() + "-copy-" + i));
      }
    }
    return order;
  }

  private static int[] permutation(int n, SplittableRandom rng) {
    int[] p = new int[n];
    for (int i = 0; i < n; i++) {
      p[i] = i;
    }
    for (int i = n - 1; i > 0; i--) {
      int j = rng.nextInt(i + 1);
      int t = p[i];
      p[i] = p[j];
      p[j] = t;
    }
    return p;
  }

  static ScheduleResult replay(ClusterState state, List<GpuPod> order, int[] rank,
      Placement placement, SplittableRandom rng, long seed) {
    ClusterState.View view = state.new View();
    int[] feasible = new int[state.nodes.length];
    long arrived = 0;
    int placed = 0;
    int failed = 0;
    int columns = (int) Math.ceil(100.0 * sumDemand(order) / Math.max(1, state.capacityMilli))
        + 2;
    double[] sum = new double[columns];
    int[] count = new int[columns];
    for (GpuPod pod : order) {
      arrived += pod.totalGpuMilli();
      if (place(state, view, rank, placement, rng, pod, feasible) == null) {
        failed++;
      } else {
        placed++;
      }
      if (state.capacityMilli > 0) {
        int column = (int) Math.round(100.0 * arrived / state.capacityMilli);
        if (column < columns) {
          sum[column] += 100.0 * state.allocatedMilli / state.capacityMilli;
          count[column]++;
        }
      }
    }
    double[] curve = new double[columns];
    Arrays.fill(curve, Double.NaN);
    for (int c = 0; c < columns; c++) {
      if (count[c] > 0) {
        curve[c] = sum[c] / count[c];
      }
    }
    return new ScheduleResult(placement.name(), seed, order.size(), placed, failed,
        state.capacityMilli, arrived, state.allocatedMilli, curve);
  }

  /**
   * Places {@code pod} where {@code placement} scores highest among the nodes it fits on (ties:
   * the lowest {@code rank}; a single feasible node is taken without scoring, as the published
   * simulator's scheduler does); returns the node and the GPUs taken, or null when no node fits.
   * {@code feasible} is scratch space of one entry per node.
   */
  static Placed place(ClusterState state, ClusterState.View view, int[] rank,
      Placement placement, SplittableRandom rng, GpuPod pod, int[] feasible) {
    int k = 0;
    for (int i = 0; i < state.nodes.length; i++) {
      if (state.fits(i, pod)) {
        feasible[k++] = i;
      }
    }
    if (k == 0) {
      return null;
    }
    int best = feasible[0];
    if (k > 1) {
      int bestScore = Integer.MIN_VALUE;
      for (int j = 0; j < k; j++) {
        view.n = feasible[j];
        int score = placement.score(view, pod, rng);
        if (score > bestScore || (score == bestScore && rank[feasible[j]] < rank[best])) {
          bestScore = score;
          best = feasible[j];
        }
      }
    }
    view.n = best;
    int gpu = pod.gpus() == 1 && pod.gpuMilli() < 1000 ? placement.shareGpu(view, pod, rng) : -1;
    return new Placed(best, state.place(best, pod, gpu));
  }

  /** Where a task went: its node and the GPUs it took there. */
  record Placed(int node, int[] gpus) {}

  private static long sumDemand(List<GpuPod> order) {
    long t = 0;
    for (GpuPod p : order) {
      t += p.totalGpuMilli();
    }
    return t;
  }
}
