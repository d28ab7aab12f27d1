package io.hyperframes.schedule;

import static com.google.common.base.Preconditions.checkArgument;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.PriorityQueue;
import java.util.SplittableRandom;

/**
 * A time-based replay: jobs arrive at their times, wait in a queue, start when all their members
 * can be placed at once (gang scheduling: a job never starts half-placed), hold their resources
 * for their duration and leave. The queue is strict: its head blocks the jobs behind it (no
 * backfilling), ordered by arrival ({@link Order#FIFO}) or by duration ({@link Order#SJF},
 * shortest first, arrival on ties; durations are taken as known, as SJF assumes). Members are
 * placed by a {@link Placement}. Deterministic for a seed.
 */
public final class Replay {
  private Replay() {}

  /** Queue orders. */
  public enum Order {
    /** First come, first served. */
    FIFO,
    /** Shortest job first. */
    SJF
  }

  /**
   * One job's fate.
   *
   * @param job the job
   * @param startSeconds when it started (NaN if never)
   * @param finishSeconds when it finished (NaN if never)
   */
  public record JobRecord(GpuJob job, double startSeconds, double finishSeconds) {
    /** Completion time minus arrival. */
    public double jctSeconds() {
      return finishSeconds - job.arrivalSeconds();
    }

    /** Start minus arrival. */
    public double queueingSeconds() {
      return startSeconds - job.arrivalSeconds();
    }
  }

  /**
   * What the replay did.
   *
   * @param jobs every job, in arrival order
   * @param unschedulable jobs that can never start: larger than the empty cluster, or not
   *     placeable on it by the policy, member by member
   * @param makespanSeconds last finish time
   * @param utilisation GPU thousandths held × time over capacity × makespan
   */
  public record Result(List<JobRecord> jobs, int unschedulable, double makespanSeconds,
      double utilisation) {
    public Result {
      jobs = List.copyOf(jobs);
    }

    /** JCT percentile ({@code q} in [0, 1]) over the jobs that finished. */
    public double jctPercentileSeconds(double q) {
      checkArgument(q >= 0 && q <= 1, "q: must be in [0, 1], got %s", q);
      double[] v = jobs.stream().filter(j -> !Double.isNaN(j.finishSeconds()))
          .mapToDouble(JobRecord::jctSeconds).sorted().toArray();
      return v.length == 0 ? Double.NaN : v[(int) Math.min(v.length - 1, Math.floor(q * v.length))];
    }

    /**
     * GPUs allocated over time: {bin start seconds, mean GPUs held} over {@code bins} equal bins
     * of [0, makespan].
     */
    public double[][] allocatedGpus(int bins) {
      int n = 0;
      for (JobRecord j : jobs) {
        if (!Double.isNaN(j.startSeconds())) {
          n++;
        }
      }
      double[] t = new double[2 * n];
      double[] d = new double[2 * n];
      int k = 0;
      for (JobRecord j : jobs) {
        if (!Double.isNaN(j.startSeconds())) {
          double g = j.job().gpuMilli() / 1000.0;
          t[k] = j.startSeconds();
          d[k++] = g;
          t[k] = j.finishSeconds();
          d[k++] = -g;
        }
      }
      return Timelines.bin(t, d, makespanSeconds, bins);
    }

    /** Mean JCT over the jobs that finished. */
    public double meanJctSeconds() {
      return jobs.stream().filter(j -> !Double.isNaN(j.finishSeconds()))
          .mapToDouble(JobRecord::jctSeconds).average().orElse(Double.NaN);
    }
  }

  /** Replays {@code jobs} on {@code nodes}. */
  public static Result run(List<GpuNode> nodes, List<GpuJob> jobs, Placement placement,
      Order order, long seed) {
    return run(nodes, jobs, placement, order, seed, ReplayMonitor.NONE);
  }

  /**
   * Replays {@code jobs} on {@code nodes}, telling {@code monitor} the share of jobs placed or
   * found unschedulable and polling it for cancellation every 1 024 events.
   */
  public static Result run(List<GpuNode> nodes, List<GpuJob> jobs, Placement placement,
      Order order, long seed, ReplayMonitor monitor) {
    checkArgument(monitor != null, "monitor: must be given (ReplayMonitor.NONE)");
    checkArgument(nodes != null && !nodes.isEmpty(), "nodes: at least one node");
    checkArgument(jobs != null && !jobs.isEmpty(), "jobs: at least one job");
    checkArgument(placement != null && order != null, "placement and order: must be given");
    SplittableRandom rng = new SplittableRandom(seed);
    ClusterState state = new ClusterState(nodes);
    ClusterState.View view = state.new View();
    int[] feasible = new int[nodes.size()];
    int[] rank = new int[nodes.size()];
    for (int i = 0; i < rank.length; i++) {
      rank[i] = i;
    }
    List<GpuJob> arrivals = new ArrayList<>(jobs);
    arrivals.sort(Comparator.comparingDouble(GpuJob::arrivalSeconds)
        .thenComparing(GpuJob::name));
    double[] start = new double[arrivals.size()];
    double[] finish = new double[arrivals.size()];
    Arrays.fill(start, Double.NaN);
    Arrays.fill(finish, Double.NaN);
    Comparator<Integer> queueOrder = order == Order.FIFO ? Comparator.naturalOrder()
        : Comparator.<Integer>comparingDouble(i -> arrivals.get(i).durationSeconds())
            .thenComparing(Comparator.naturalOrder());
    PriorityQueue<Integer> queue = new PriorityQueue<>(queueOrder);
    // Running jobs by finish time: (finish, job index, placements).
    PriorityQueue<Running> running = new PriorityQueue<>(Comparator
        .comparingDouble(Running::finish).thenComparingInt(Running::job));
    ClusterState empty = new ClusterState(nodes);
    int unschedulable = 0;
    int next = 0;
    double now = 0;
    double busy = 0;
    double last = 0;
    long events = 0;
    int placedCount = 0;
    int reported = 0;
    while (next < arrivals.size() || !queue.isEmpty() || !running.isEmpty()) {
      double tArrive = next < arrivals.size() ? arrivals.get(next).arrivalSeconds()
          : Double.POSITIVE_INFINITY;
      double tFinish = running.isEmpty() ? Double.POSITIVE_INFINITY : running.peek().finish();
      if (tArrive == Double.POSITIVE_INFINITY && tFinish == Double.POSITIVE_INFINITY) {
        // Only jobs that can never start are left.
        break;
      }
      double t = Math.min(tArrive, tFinish);
      if ((++events & 1023) == 0) {
        if (monitor.cancelled()) {
          throw new java.util.concurrent.CancellationException("replay cancelled at " + t
              + " s");
        }
        int done = placedCount + unschedulable;
        if (100L * done / arrivals.size() > 100L * reported / arrivals.size()) {
          reported = done;
          monitor.progress((double) done / arrivals.size());
        }
      }
      busy += (double) state.allocatedMilli * (t - now);
      now = t;
      while (!running.isEmpty() && running.peek().finish() <= now) {
        Running r = running.poll();
        List<GpuPod> members = arrivals.get(r.job()).members();
        for (int m = 0; m < members.size(); m++) {
          state.release(r.nodes()[m], members.get(m), r.gpus()[m]);
        }
        finish[r.job()] = now;
        last = now;
      }
      while (next < arrivals.size() && arrivals.get(next).arrivalSeconds() <= now) {
        if (fitsEmpty(empty, arrivals.get(next))) {
          queue.add(next);
        } else {
          unschedulable++;
        }
        next++;
      }
      while (!queue.isEmpty()) {
        int j = queue.peek();
        Running placed = tryStart(state, view, rank, placement, rng, arrivals.get(j), j, now,
            feasible);
        if (placed == null && running.isEmpty()) {
          // Not even the empty cluster takes it under this policy (its members, placed one by
          // one, leave no room for the last): it would block the queue forever.
          queue.poll();
          unschedulable++;
          continue;
        }
        if (placed == null) {
          break;
        }
        queue.poll();
        start[j] = now;
        placedCount++;
        running.add(placed);
      }
    }
    monitor.progress(1);
    List<JobRecord> out = new ArrayList<>();
    for (int i = 0; i < arrivals.size(); i++) {
      out.add(new JobRecord(arrivals.get(i), start[i], finish[i]));
    }
    double util = last > 0 && state.capacityMilli > 0 ? busy / (state.capacityMilli * last) : 0;
    return new Result(out, unschedulable, last, util);
  }

  private record Running(double finish, int job, int[] nodes, int[][] gpus) {}

  /** Whether the job could start on the empty cluster (else it waits forever). */
  private static boolean fitsEmpty(ClusterState empty, GpuJob job) {
    List<int[]> taken = new ArrayList<>();
    List<Integer> where = new ArrayList<>();
    boolean ok = true;
    for (GpuPod p : job.members()) {
      int n = -1;
      for (int i = 0; i < empty.nodes.length; i++) {
        if (empty.fits(i, p)) {
          n = i;
          break;
        }
      }
      if (n < 0) {
        ok = false;
        break;
      }
      int share = -1;
      if (p.gpus() == 1 && p.gpuMilli() < 1000) {
        for (int g = 0; g < empty.gpuLeft[n].length; g++) {
          if (empty.gpuLeft[n][g] >= p.gpuMilli()) {
            share = g;
            break;
          }
        }
      }
      taken.add(empty.place(n, p, share));
      where.add(n);
    }
    for (int m = taken.size() - 1; m >= 0; m--) {
      empty.release(where.get(m), job.members().get(m), taken.get(m));
    }
    return ok;
  }

  /** Places every member or none (gang); the placement if all fit. */
  private static Running tryStart(ClusterState state, ClusterState.View view, int[] rank,
      Placement placement, SplittableRandom rng, GpuJob job, int index, double now,
      int[] feasible) {
    int k = job.members().size();
    int[] nodes = new int[k];
    int[][] gpus = new int[k][];
    for (int m = 0; m < k; m++) {
      Schedule.Placed p = Schedule.place(state, view, rank, placement, rng, job.members().get(m),
          feasible);
      if (p == null) {
        for (int r = m - 1; r >= 0; r--) {
          state.release(nodes[r], job.members().get(r), gpus[r]);
        }
        return null;
      }
      nodes[m] = p.node();
      gpus[m] = p.gpus();
    }
    return new Running(now + job.durationSeconds(), index, nodes, gpus);
  }
}
