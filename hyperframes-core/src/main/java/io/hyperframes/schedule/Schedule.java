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

  /**
   * A replay to configure. The builder is immutable (each call returns a new builder) and each
   * option may be set once ({@link IllegalStateException} naming it); values are checked and
   * files read when the replay runs, with messages that name the option and the value.
   */
  public static Builder builder() {
    return new Builder();
  }

  /**
   * Options of a replay, for its three kinds (docs/scheduling.md):
   *
   * <ul>
   *   <li>{@link #run()}: <b>allocation</b>, the GPU-sharing experiment above; a trace of tasks
   *       ({@link #trace} of an openb pod list, or {@link #pods}), {@link #placement} or
   *       {@link #policy}, {@link #inflate}.
   *   <li>{@link #replay()} and {@link #colocate()}: <b>time</b> ({@link Replay}); jobs at
   *       their trace times ({@link #trace} of a Philly or openb file, {@link #jobs}, {@link
   *       #job}), a {@link #queue} policy (default FIFO), a placement (default best-fit),
   *       {@link #disruptions}; {@link #colocate()} adds inference services ({@link #serving})
   *       whose replicas reserve GPUs beside the jobs ({@link ServingReplay}).
   *   <li>{@link #goodput()}: <b>goodput</b> ({@link GoodputReplay}); a Pollux workload
   *       ({@link #trace}), {@link #applications}, {@link #rounds} (default Tiresias), {@link
   *       #interval}.
   * </ul>
   *
   * <p>The cluster is {@link #cluster(java.nio.file.Path)} (an openb node list), {@link
   * #cluster(int, int)} (uniform nodes) or {@link #nodes}. Options that the chosen kind does not
   * read are an {@link IllegalStateException} when it runs, naming them. Immutable: a builder
   * may be kept and run again, or extended in two directions.
   *
   * <pre>{@code
   * Replay.Result r = HyperFrames.schedule().trace(Path.of("philly.csv")).cluster(100, 8)
   *     .queue(QueuePolicy.easyBackfill()).replay();
   * }</pre>
   */
  public static final class Builder {
    /** The cluster as given: a node list, a node-list file, or uniform nodes. */
    private Object cluster;
    private List<GpuPod> pods;
    private java.nio.file.Path trace;
    /** The placement: a {@link Placement}, or a policy name resolved against the trace. */
    private Object placement;
    private Double inflate;
    private Long seed;
    private List<GpuJob> jobs;
    private List<GpuJob> extra = List.of();
    private java.nio.file.Path applications;
    private java.util.function.Supplier<? extends RoundPolicy> rounds;
    private Integer interval;
    private QueuePolicy queue;
    private Replay.Disruptions disruptions;
    /** The inference services: each a {@link ServingReplay.Load} or a service with its file. */
    private List<Object> services = List.of();
    private ReplayMonitor monitor;

    private Builder() {}

    private Builder copy() {
      Builder b = new Builder();
      b.cluster = cluster;
      b.pods = pods;
      b.trace = trace;
      b.placement = placement;
      b.inflate = inflate;
      b.seed = seed;
      b.jobs = jobs;
      b.extra = extra;
      b.applications = applications;
      b.rounds = rounds;
      b.interval = interval;
      b.queue = queue;
      b.disruptions = disruptions;
      b.services = services;
      b.monitor = monitor;
      return b;
    }

    private Builder with(Object current, String option, Object shown,
        java.util.function.Consumer<Builder> change) {
      once(current != null, option, shown);
      return changed(change);
    }

    /** A copy of this builder with {@code change} made to it. */
    private Builder changed(java.util.function.Consumer<Builder> change) {
      Builder b = copy();
      change.accept(b);
      return b;
    }

    private static void once(boolean set, String option, Object old) {
      checkState(!set, "%s: already set to %s", option, old);
    }

    private static <T> List<T> plus(List<T> list, T item) {
      List<T> out = new ArrayList<>(list);
      out.add(item);
      return List.copyOf(out);
    }

    /**
     * The trace, its kind recognised by its header when the replay runs: an openb pod list
     * ({@link Traces#openbPods}: the tasks of {@link #run()}, or single-task jobs of {@link
     * #replay()}), a Philly job list ({@link Traces#philly}, split by the cluster's largest GPU
     * count per node) or a Pollux workload ({@link Traces#polluxWorkload}, for {@link
     * #goodput()}). A file that cannot be read or is of none of these kinds (an Azure LLM trace
     * is given to {@link #serving} instead) is an {@link IllegalArgumentException} when the
     * replay runs.
     */
    public Builder trace(java.nio.file.Path file) {
      checkArgument(file != null, "trace: file must be given");
      return with(trace, "trace", trace, b -> b.trace = file);
    }

    /**
     * A uniform cluster: {@code count} nodes (1 to 1 000 000) of {@code gpusPerNode} GPUs (1 to
     * 64), no CPU or memory limit.
     */
    public Builder cluster(int count, int gpusPerNode) {
      return withCluster(new Uniform(count, gpusPerNode));
    }

    /** The cluster. */
    public Builder nodes(List<GpuNode> value) {
      checkArgument(value != null, "nodes: must be given");
      return withCluster(List.copyOf(value));
    }

    /** The cluster as a node list of that trace ({@link Traces#openbNodes}), read when it runs. */
    public Builder cluster(java.nio.file.Path file) {
      checkArgument(file != null, "cluster: file must be given");
      return withCluster(file);
    }

    private Builder withCluster(Object value) {
      return with(cluster, "nodes", cluster instanceof List<?> l ? l.size() + " nodes"
          : cluster, b -> b.cluster = value);
    }

    /** The jobs of a time replay. */
    public Builder jobs(List<GpuJob> value) {
      checkArgument(value != null, "jobs: must be given");
      return with(jobs, "jobs", jobs == null ? null : jobs.size() + " jobs",
          b -> b.jobs = List.copyOf(value));
    }

    /** One more job of a time replay (a plan's: {@link GpuJob#fromPlan}); may be repeated. */
    public Builder job(GpuJob value) {
      checkArgument(value != null, "job: must be given");
      return changed(b -> b.extra = plus(extra, value));
    }

    /** The queue policy of a time replay (default {@link QueuePolicy#fifo()}). */
    public Builder queue(QueuePolicy value) {
      checkArgument(value != null, "queue: must be given");
      return with(queue, "queue", queue == null ? null : queue.name(), b -> b.queue = value);
    }

    /** Failures and restart cost of a time replay (default {@link Replay.Disruptions#NONE}). */
    public Builder disruptions(Replay.Disruptions value) {
      checkArgument(value != null, "disruptions: must be given");
      return with(disruptions, "disruptions", disruptions, b -> b.disruptions = value);
    }

    /** An inference service and its requests, for {@link #colocate()}; may be repeated. */
    public Builder serving(ServingReplay.Load value) {
      checkArgument(value != null, "serving: must be given");
      return changed(b -> b.services = plus(services, value));
    }

    /**
     * An inference service and its requests from an Azure LLM trace ({@link Traces#azureLlm}),
     * read when the replay runs.
     */
    public Builder serving(InferenceService service, java.nio.file.Path requests) {
      checkArgument(service != null && requests != null, "serving: service and requests must"
          + " be given");
      return changed(b -> b.services = plus(services, new ServingFile(service, requests)));
    }

    /**
     * The application profiles of a goodput replay ({@link ApplicationProfile#readAll}), read
     * when it runs.
     */
    public Builder applications(java.nio.file.Path index) {
      checkArgument(index != null, "applications: file must be given");
      return with(applications, "applications", applications, b -> b.applications = index);
    }

    /** The round policy of a goodput replay (default {@link RoundPolicy#tiresias()}). */
    public Builder rounds(java.util.function.Supplier<? extends RoundPolicy> value) {
      checkArgument(value != null, "rounds: must be given");
      return with(rounds, "rounds", rounds, b -> b.rounds = value);
    }

    /** The scheduling interval of a goodput replay in seconds, at least 1 (default 60). */
    public Builder interval(int seconds) {
      return with(interval, "interval", interval, b -> b.interval = seconds);
    }

    /** Told the progress and polled for cancellation by time and goodput replays. */
    public Builder monitor(ReplayMonitor value) {
      checkArgument(value != null, "monitor: must be given");
      return with(monitor, "monitor", monitor, b -> b.monitor = value);
    }

    /** The trace. */
    public Builder pods(List<GpuPod> value) {
      checkArgument(value != null, "pods: must be given");
      return with(pods, "pods", pods == null ? null : pods.size() + " tasks",
          b -> b.pods = List.copyOf(value));
    }

    /**
     * The placement policy by name: random, bestfit, or fgd (its target workload from the
     * trace's tasks), resolved when the replay runs.
     */
    public Builder policy(String name) {
      checkArgument(name != null, "policy: must be given");
      return withPlacement(name);
    }

    /** The placement policy. */
    public Builder placement(Placement value) {
      checkArgument(value != null, "placement: must be given");
      return withPlacement(value);
    }

    private Builder withPlacement(Object value) {
      return with(placement, "placement", placement instanceof Placement p ? p.name()
          : placement, b -> b.placement = value);
    }

    /**
     * Demand to reach, as a multiple of the cluster's GPU capacity in (0, 10], by appending
     * copies of the trace's tasks (unset: the trace alone; the trace is never cut).
     */
    public Builder inflate(double ratio) {
      return with(inflate, "inflate", inflate, b -> b.inflate = ratio);
    }

    /** The seed (default 42). */
    public Builder seed(long value) {
      return with(seed, "seed", seed, b -> b.seed = value);
    }

    /** Time replay of the jobs (no inference services: see {@link #colocate()}). */
    public Replay.Result replay() {
      checkState(services.isEmpty(), "serving: set, so replay with colocate()");
      Inputs in = resolve();
      List<GpuJob> all = timeJobs(in, false);
      return Replay.run(in.nodes, all, in.placement == null ? Placement.bestFit()
          : in.placement, queue == null ? QueuePolicy.fifo() : queue, disruptions == null
              ? Replay.Disruptions.NONE : disruptions, seed == null ? 42 : seed,
          monitor == null ? ReplayMonitor.NONE : monitor);
    }

    /** Time replay of the jobs and the replicas of the inference services ({@link #serving}). */
    public ServingReplay.Colocated colocate() {
      checkState(!services.isEmpty(), "serving: no inference service set (use replay())");
      Inputs in = resolve();
      List<GpuJob> all = timeJobs(in, true);
      List<ServingReplay.Load> loads = new ArrayList<>();
      for (Object s : services) {
        if (s instanceof ServingFile f) {
          loads.add(new ServingReplay.Load(f.service(), Traces.azureLlm(f.requests()).items()));
        } else {
          loads.add((ServingReplay.Load) s);
        }
      }
      return ServingReplay.colocate(in.nodes, all, loads, in.placement == null
          ? Placement.bestFit() : in.placement, queue == null ? QueuePolicy.fifo() : queue,
          disruptions == null ? Replay.Disruptions.NONE : disruptions, seed == null ? 42 : seed,
          monitor == null ? ReplayMonitor.NONE : monitor);
    }

    /** The jobs of a time replay, checked for options it does not read; may be none if allowed. */
    private List<GpuJob> timeJobs(Inputs in, boolean noneAllowed) {
      unused("time replay", inflate != null, "inflate", in.goodputJobs != null,
          "a Pollux workload", applications != null, "applications", rounds != null, "rounds",
          interval != null, "interval");
      List<GpuJob> all = new ArrayList<>();
      if (in.philly != null) {
        int widest = in.nodes.stream().mapToInt(GpuNode::gpus).max().orElse(0);
        checkState(widest > 0, "nodes: no node has a GPU");
        all.addAll(Traces.philly(in.philly, widest).items());
      } else if (jobs != null) {
        all.addAll(jobs);
      } else if (in.pods != null) {
        in.pods.forEach(p -> all.add(GpuJob.of(p)));
      }
      all.addAll(extra);
      checkState(noneAllowed || !all.isEmpty(), "jobs: not set (trace, jobs or job)");
      return all;
    }

    /** A goodput replay of the Pollux workload on the cluster (every node at most 9 GPUs). */
    public GoodputReplay.Result goodput() {
      Inputs in = resolve();
      checkState(in.goodputJobs != null, "trace: no Pollux workload set");
      checkState(applications != null, "applications: not set");
      unused("goodput replay", inflate != null, "inflate", placement != null, "placement",
          queue != null, "queue", disruptions != null, "disruptions", !services.isEmpty(),
          "serving", jobs != null || in.philly != null || !extra.isEmpty(), "jobs",
          seed != null, "seed");
      checkArgument(interval == null || interval >= 1, "interval: must be >= 1, got %s",
          interval);
      int[] g = in.nodes.stream().mapToInt(GpuNode::gpus).toArray();
      return GoodputReplay.run(g, in.goodputJobs, ApplicationProfile.readAll(applications),
          rounds == null ? RoundPolicy::tiresias : rounds, interval == null ? 60 : interval,
          monitor == null ? ReplayMonitor.NONE : monitor);
    }

    private static void unused(String kind, Object... flags) {
      List<String> set = new ArrayList<>();
      for (int i = 0; i < flags.length; i += 2) {
        if ((Boolean) flags[i]) {
          set.add((String) flags[i + 1]);
        }
      }
      checkState(set.isEmpty(), "%s: does not read %s", kind, String.join(", ", set));
    }

    /** {@link #cluster(int, int)} as given. */
    private record Uniform(int count, int gpusPerNode) {
      @Override
      public String toString() {
        return count + " nodes of " + gpusPerNode + " GPUs";
      }
    }

    /** {@link #serving(InferenceService, java.nio.file.Path)} as given. */
    private record ServingFile(InferenceService service, java.nio.file.Path requests) {}

    /** What the options name, files read and values checked, as a replay runs. */
    private record Inputs(List<GpuNode> nodes, List<GpuPod> pods, java.nio.file.Path philly,
        List<GoodputReplay.Job> goodputJobs, Placement placement) {}

    private Inputs resolve() {
      checkState(cluster != null, "nodes: not set");
      List<GpuNode> nodes;
      if (cluster instanceof Uniform u) {
        nodes = GpuNode.uniform(u.count(), u.gpusPerNode());
      } else if (cluster instanceof java.nio.file.Path file) {
        nodes = Traces.openbNodes(file).items();
      } else {
        nodes = castList(cluster);
      }
      checkArgument(!nodes.isEmpty(), "nodes: at least one node");
      List<GpuPod> tasks = pods;
      java.nio.file.Path philly = null;
      List<GoodputReplay.Job> goodputJobs = null;
      if (trace != null) {
        switch (Traces.kind(trace)) {
          case OPENB -> {
            checkState(pods == null, "pods: already set, and trace %s is a pod list", trace);
            tasks = Traces.openbPods(trace).items();
          }
          case PHILLY -> {
            checkState(jobs == null, "jobs: already set, and trace %s is a job list", trace);
            philly = trace;
          }
          case POLLUX -> goodputJobs = Traces.polluxWorkload(trace).items();
        }
      }
      checkArgument(tasks == null || !tasks.isEmpty(), "pods: at least one task");
      checkArgument(jobs == null || !jobs.isEmpty(), "jobs: at least one job");
      checkArgument(inflate == null || (Double.isFinite(inflate) && inflate > 0
          && inflate <= 10), "inflate: must be in (0, 10], got %s", inflate);
      Placement p = null;
      if (placement instanceof String name) {
        checkState(tasks != null || !"fgd".equalsIgnoreCase(name),
            "policy fgd: needs a trace of tasks (its target workload comes from it)");
        p = Placement.named(name, tasks == null ? null : TargetWorkload.of(tasks));
      } else if (placement != null) {
        p = (Placement) placement;
      }
      return new Inputs(List.copyOf(nodes), tasks, philly, goodputJobs, p);
    }

    @SuppressWarnings("unchecked")
    private static List<GpuNode> castList(Object list) {
      return (List<GpuNode>) list;
    }

    /** Replays the trace's tasks (the allocation experiment of the class comment). */
    public ScheduleResult run() {
      Inputs in = resolve();
      checkState(in.pods != null, "pods: not set");
      checkState(in.placement != null, "placement: not set");
      unused("allocation replay", jobs != null || in.philly != null || !extra.isEmpty(), "jobs",
          queue != null, "queue", disruptions != null, "disruptions", !services.isEmpty(),
          "serving", in.goodputJobs != null, "a Pollux workload", applications != null,
          "applications", rounds != null, "rounds", interval != null, "interval",
          monitor != null, "monitor");
      long s = seed == null ? 42 : seed;
      SplittableRandom rng = new SplittableRandom(s);
      ClusterState state = new ClusterState(in.nodes);
      List<GpuPod> order = arrivals(in.pods, inflate != null ? inflate : 0, state.capacityMilli,
          rng);
      int[] rank = permutation(in.nodes.size(), rng);
      return Schedule.replay(state, order, rank, in.placement, rng, s);
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
    int k = feasibleNodes(state, pod, feasible);
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
    return take(state, view, placement, rng, pod, best);
  }

  /**
   * Places {@code pod} on a node drawn uniformly among those it fits on, with one draw ({@link
   * #place} with Random-fit draws a score for every feasible node: the same distribution, up to
   * ties of those scores, at a cost that grows with the feasible nodes); a single feasible node
   * is taken without a draw. A task of whole GPUs and nothing else is counted and picked from
   * {@link ClusterState#atLeast} without visiting its nodes. Returns null when no node fits.
   */
  static Placed placeUniform(ClusterState state, ClusterState.View view, Placement placement,
      SplittableRandom rng, GpuPod pod, int[] feasible) {
    int best;
    if (pod.gpus() > 0 && pod.gpuMilli() == 1000 && pod.cpuMilli() == 0
        && pod.memoryMib() == 0 && pod.gpuModels().isEmpty()) {
      // Every node in atLeast[gpus] fits: healthy, with that many fully free GPUs.
      if (pod.gpus() >= state.atLeast.length) {
        return null;
      }
      long[] bits = state.atLeast[pod.gpus()];
      int k = 0;
      for (long w : bits) {
        k += Long.bitCount(w);
      }
      if (k == 0) {
        return null;
      }
      best = nthSetBit(bits, k == 1 ? 0 : rng.nextInt(k));
    } else {
      int k = feasibleNodes(state, pod, feasible);
      if (k == 0) {
        return null;
      }
      best = feasible[k == 1 ? 0 : rng.nextInt(k)];
    }
    return take(state, view, placement, rng, pod, best);
  }

  /**
   * Writes the nodes {@code pod} fits on now into {@code feasible}, in index order; returns how
   * many. A whole-GPU task looks only at the nodes with that many fully free GPUs.
   */
  private static int feasibleNodes(ClusterState state, GpuPod pod, int[] feasible) {
    int k = 0;
    if (pod.gpus() > 0 && pod.gpuMilli() == 1000) {
      if (pod.gpus() >= state.atLeast.length) {
        return 0;
      }
      long[] bits = state.atLeast[pod.gpus()];
      for (int w = 0; w < bits.length; w++) {
        for (long word = bits[w]; word != 0; word &= word - 1) {
          int i = (w << 6) + Long.numberOfTrailingZeros(word);
          if (state.fits(i, pod)) {
            feasible[k++] = i;
          }
        }
      }
      return k;
    }
    for (int i = 0; i < state.nodes.length; i++) {
      if (state.fits(i, pod)) {
        feasible[k++] = i;
      }
    }
    return k;
  }

  /** Places {@code pod} on node {@code best}, a shared task on the GPU the placement picks. */
  private static Placed take(ClusterState state, ClusterState.View view, Placement placement,
      SplittableRandom rng, GpuPod pod, int best) {
    view.n = best;
    int gpu = pod.gpus() == 1 && pod.gpuMilli() < 1000 ? placement.shareGpu(view, pod, rng) : -1;
    return new Placed(best, state.place(best, pod, gpu));
  }

  /** The index of the {@code r}-th (from 0) set bit of {@code bits}, which has more than r. */
  static int nthSetBit(long[] bits, int r) {
    for (int w = 0; w < bits.length; w++) {
      int c = Long.bitCount(bits[w]);
      if (r < c) {
        long word = bits[w];
        for (int i = 0; i < r; i++) {
          word &= word - 1;
        }
        return (w << 6) + Long.numberOfTrailingZeros(word);
      }
      r -= c;
    }
    throw new AssertionError("fewer set bits than " + r);
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
