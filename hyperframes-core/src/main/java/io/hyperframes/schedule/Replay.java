package io.hyperframes.schedule;

import static com.google.common.base.Preconditions.checkArgument;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.PriorityQueue;
import java.util.Set;
import java.util.SplittableRandom;

/**
 * A time-based replay: jobs arrive at their times, wait in a queue, start when all their members
 * can be placed at once (gang scheduling: a job never starts half-placed), hold their resources
 * while they run and leave when their duration of running is done. A {@link QueuePolicy} orders
 * the queue and decides at every event which jobs start (strict FIFO or SJF, EASY backfilling,
 * priorities with preemption, quotas with borrowing, or your own); members are placed by a
 * {@link Placement}. With {@link Disruptions}, nodes fail and are repaired and jobs fail; a
 * stopped job (preempted or failed) resumes from where it stopped after a restart cost.
 * Deterministic for a seed.
 */
public final class Replay {
  private Replay() {}

  /** Queue orders of the strict policies ({@link QueuePolicy#fifo()}, {@link QueuePolicy#sjf()}). */
  public enum Order {
    /** First come, first served. */
    FIFO,
    /** Shortest job first. */
    SJF
  }

  /**
   * Failures and the cost of stopping.
   *
   * @param restartSeconds running time a preempted or failed job spends again before it makes
   *     progress (restoring a checkpoint), ≥ 0
   * @param nodeMtbfSeconds mean time between failures of each node (exponential);
   *     {@code +Infinity}: nodes never fail
   * @param repairSeconds how long a failed node stays down, ≥ 0
   * @param jobFailureProbability chance that a run of a job fails (at a uniform point of it) for
   *     reasons of its own, in [0, 1)
   */
  public record Disruptions(double restartSeconds, double nodeMtbfSeconds, double repairSeconds,
      double jobFailureProbability) {
    /** Nothing fails; preemption costs nothing. */
    public static final Disruptions NONE = new Disruptions(0, Double.POSITIVE_INFINITY, 0, 0);

    public Disruptions {
      checkArgument(Double.isFinite(restartSeconds) && restartSeconds >= 0,
          "disruptions.restartSeconds: must be finite and >= 0, got %s", restartSeconds);
      checkArgument(nodeMtbfSeconds > 0, "disruptions.nodeMtbfSeconds: must be > 0, got %s",
          nodeMtbfSeconds);
      checkArgument(Double.isFinite(repairSeconds) && repairSeconds >= 0,
          "disruptions.repairSeconds: must be finite and >= 0, got %s", repairSeconds);
      checkArgument(jobFailureProbability >= 0 && jobFailureProbability < 1,
          "disruptions.jobFailureProbability: must be in [0, 1), got %s",
          jobFailureProbability);
    }
  }

  /**
   * One job's fate.
   *
   * @param job the job
   * @param startSeconds when it first started (NaN if never)
   * @param finishSeconds when it finished (NaN if never)
   * @param preemptions times a policy stopped it
   * @param failures times it was stopped by its own failure or its node's
   * @param resizes times an elastic job was restarted on another GPU count
   */
  public record JobRecord(GpuJob job, double startSeconds, double finishSeconds, int preemptions,
      int failures, int resizes) {
    /** Completion time minus arrival. */
    public double jctSeconds() {
      return finishSeconds - job.arrivalSeconds();
    }

    /** First start minus arrival. */
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
   * @param runs every stretch of running of every job of positive length (a job stopped by a
   *     preemption or a failure has several), in the order they ended
   * @param fragmentation idle GPUs that the jobs' task mix could not use, over time
   */
  public record Result(List<JobRecord> jobs, int unschedulable, double makespanSeconds,
      double utilisation, List<Run> runs, Fragmentation fragmentation) {
    public Result {
      jobs = List.copyOf(jobs);
      runs = List.copyOf(runs);
      checkArgument(fragmentation != null, "fragmentation: must be given");
    }

    /**
     * Fragmented GPUs over time: {bin start seconds, mean fragmented GPUs} over {@code bins}
     * equal bins of [0, makespan].
     */
    public double[][] fragmentedGpus(int bins) {
      return Timelines.bin(fragmentation.times(), fragmentation.deltaGpus(), makespanSeconds,
          bins);
    }

    /**
     * A stretch of running.
     *
     * @param job index of the job in {@link #jobs()}
     * @param beginSeconds when it started
     * @param endSeconds when it finished, failed, was preempted or resized
     * @param gpuMilli GPU thousandths it held (an elastic job's vary from run to run)
     */
    public record Run(int job, double beginSeconds, double endSeconds, long gpuMilli) {}

    /** JCT percentile ({@code q} in [0, 1]) over the jobs that finished. */
    public double jctPercentileSeconds(double q) {
      checkArgument(q >= 0 && q <= 1, "q: must be in [0, 1], got %s", q);
      double[] v = jobs.stream().filter(j -> !Double.isNaN(j.finishSeconds()))
          .mapToDouble(JobRecord::jctSeconds).sorted().toArray();
      return v.length == 0 ? Double.NaN : v[(int) Math.min(v.length - 1, Math.floor(q * v.length))];
    }

    /**
     * GPUs allocated over time: {bin start seconds, mean GPUs held} over {@code bins} equal bins
     * of [0, makespan], from the {@link #runs()} (a stopped job holds nothing until it resumes).
     */
    public double[][] allocatedGpus(int bins) {
      double[] t = new double[2 * runs.size()];
      double[] d = new double[2 * runs.size()];
      int k = 0;
      for (Run r : runs) {
        double g = r.gpuMilli() / 1000.0;
        t[k] = r.beginSeconds();
        d[k++] = g;
        t[k] = r.endSeconds();
        d[k++] = -g;
      }
      return Timelines.bin(t, d, makespanSeconds, bins);
    }

    /** Mean JCT over the jobs that finished. */
    public double meanJctSeconds() {
      return jobs.stream().filter(j -> !Double.isNaN(j.finishSeconds()))
          .mapToDouble(JobRecord::jctSeconds).average().orElse(Double.NaN);
    }

    /** Preemptions over all jobs. */
    public int preemptions() {
      return jobs.stream().mapToInt(JobRecord::preemptions).sum();
    }

    /** Failures over all jobs. */
    public int failures() {
      return jobs.stream().mapToInt(JobRecord::failures).sum();
    }

    /** Resizes of elastic jobs over all jobs. */
    public int resizes() {
      return jobs.stream().mapToInt(JobRecord::resizes).sum();
    }

    /**
     * Finish-time fairness (Mahajan et al., "Themis", NSDI 2020, §3.1): for each finished job
     * ρ = its JCT over the time it would take on an equal share of the cluster, 1/n of
     * {@code capacityGpus} for n tenants (its duration, stretched by gpus / share when it asks
     * for more than the share). Returns the largest ρ over tenants' jobs, 1 or less when every
     * job did at least as well as on its own share; NaN when no job finished.
     */
    public double maxFinishTimeFairness(double capacityGpus) {
      checkArgument(capacityGpus > 0, "capacityGpus: must be > 0, got %s", capacityGpus);
      long tenants = jobs.stream().map(j -> j.job().tenant()).distinct().count();
      double share = capacityGpus / Math.max(1, tenants);
      double worst = Double.NaN;
      for (JobRecord j : jobs) {
        if (!Double.isNaN(j.finishSeconds())) {
          double gpus = j.job().gpuMilli() / 1000.0;
          double alone = j.job().durationSeconds() * Math.max(1, gpus / share);
          double rho = j.jctSeconds() / alone;
          worst = Double.isNaN(worst) ? rho : Math.max(worst, rho);
        }
      }
      return worst;
    }

    /**
     * Jain's fairness index (Jain, Chiu and Hawe 1984) over tenants of their mean service
     * rate, 1 / mean slowdown (slowdown = JCT / duration): 1 when every tenant's jobs are slowed
     * alike, 1/n when one tenant gets everything. NaN with fewer than two tenants.
     */
    public double jainFairness() {
      Map<String, double[]> byTenant = new LinkedHashMap<>();
      for (JobRecord j : jobs) {
        if (!Double.isNaN(j.finishSeconds())) {
          double[] a = byTenant.computeIfAbsent(j.job().tenant(), k -> new double[2]);
          a[0] += j.jctSeconds() / j.job().durationSeconds();
          a[1]++;
        }
      }
      if (byTenant.size() < 2) {
        return Double.NaN;
      }
      double sum = 0;
      double squares = 0;
      for (double[] a : byTenant.values()) {
        double rate = a[1] / a[0];
        sum += rate;
        squares += rate * rate;
      }
      return sum * sum / (byTenant.size() * squares);
    }
  }

  /**
   * GPU fragmentation over a replay (Weng et al., "Beware of Fragmentation", USENIX ATC 2023,
   * §3.2): at every moment, each healthy node's idle GPUs that a task drawn from the target
   * workload could not use (all of them for a type that does not fit the node, else the GPUs
   * too small for it), weighted by the type's share; the target workload is the replay's own
   * task mix ({@link TargetWorkload#of}, every member of every job).
   *
   * @param meanShare fragmented GPUs averaged over [0, makespan], over the cluster's GPUs
   * @param times when the fragmented amount changed (do not modify)
   * @param deltaGpus by how many GPUs it changed then (do not modify)
   */
  public record Fragmentation(double meanShare, double[] times, double[] deltaGpus) {
    public Fragmentation {
      checkArgument(times != null && deltaGpus != null && times.length == deltaGpus.length,
          "fragmentation: times and deltaGpus of one length");
    }
  }

  /** Replays {@code jobs} on {@code nodes} in a strict queue. */
  public static Result run(List<GpuNode> nodes, List<GpuJob> jobs, Placement placement,
      Order order, long seed) {
    return run(nodes, jobs, placement, order, seed, ReplayMonitor.NONE);
  }

  /** Replays {@code jobs} on {@code nodes} in a strict queue, watched by {@code monitor}. */
  public static Result run(List<GpuNode> nodes, List<GpuJob> jobs, Placement placement,
      Order order, long seed, ReplayMonitor monitor) {
    checkArgument(order != null, "order: must be given");
    return run(nodes, jobs, placement, order == Order.FIFO ? QueuePolicy.fifo()
        : QueuePolicy.sjf(), Disruptions.NONE, seed, monitor);
  }

  /**
   * Replays {@code jobs} on {@code nodes} under {@code policy}, telling {@code monitor} the share
   * of jobs finished or found unschedulable and polling it for cancellation every 1 024 events.
   *
   * @throws IllegalArgumentException on missing arguments, or a policy that starts a job that is
   *     not waiting or preempts one that is not running
   */
  public static Result run(List<GpuNode> nodes, List<GpuJob> jobs, Placement placement,
      QueuePolicy policy, Disruptions disruptions, long seed, ReplayMonitor monitor) {
    checkArgument(nodes != null && !nodes.isEmpty(), "nodes: at least one node");
    checkArgument(jobs != null && !jobs.isEmpty(), "jobs: at least one job");
    checkArgument(placement != null && policy != null, "placement and policy: must be given");
    checkArgument(disruptions != null, "disruptions: must be given (Disruptions.NONE)");
    checkArgument(monitor != null, "monitor: must be given (ReplayMonitor.NONE)");
    return new Engine(nodes, jobs, placement, policy, disruptions, seed, monitor).run();
  }

  /** One replay's state. */
  private static final class Engine implements QueuePolicy.Queue {
    final List<GpuJob> arrivals;
    final Map<GpuJob, Integer> index;
    final ClusterState state;
    final ClusterState.View view;
    final ClusterState empty;
    final int[] rank;
    final int[] feasible;
    final Placement placement;
    /**
     * Random-fit draws its node once among the feasible ones (Schedule.placeUniform) instead of
     * a score per feasible node: the same policy, and a fifth of a Random-fit replay less.
     */
    final boolean uniform;
    final QueuePolicy policy;
    final Disruptions disruptions;
    final SplittableRandom rng;
    final SplittableRandom failureRng;
    final ReplayMonitor monitor;
    final double[] start;
    final double[] finish;
    final double[] remaining;
    final int[] preemptions;
    final int[] failures;
    final int[] resizes;
    final RankedSet waiting;
    /** The run of each job now running (null when not), and the runs in no order. */
    final Run[] runOf;
    final Running running = new Running();
    // End, then submission; written out rather than composed from Comparator's key extractors,
    // which cost a tenth of a backfilling replay in their lambdas (ReplayBenchmark, -prof stack).
    final PriorityQueue<Run> ends = new PriorityQueue<>((a, b) -> {
      int c = Double.compare(a.end(), b.end());
      return c != 0 ? c : Integer.compare(a.job(), b.job());
    });
    /** Node events: time, node, +1 failure / -1 repair. */
    final PriorityQueue<double[]> nodeEvents = new PriorityQueue<>(
        Comparator.comparingDouble((double[] e) -> e[0]).thenComparingDouble(e -> e[1]));
    /** Jobs started during the current policy call, in order. */
    final IntList started = new IntList();
    /** Started during the current policy call (still in {@code waiting} until it returns). */
    boolean[] startedNow;
    /** Jobs stopped during the current policy call, back to the queue when it returns. */
    final IntList stopped = new IntList();
    final List<Result.Run> spans = new ArrayList<>();
    final TargetWorkload target;
    /** Fragmented GPU thousandths of each node, their sum and its integral over time. */
    final double[] nodeFrag;
    double fragSum;
    double fragArea;
    double[] fragT = new double[64];
    double[] fragD = new double[64];
    int fragN;
    final boolean[] dirty;
    final int[] dirtyList;
    int dirtyCount;
    double now;
    boolean inSchedule;
    long downMilli;
    int downNodes;

    Engine(List<GpuNode> nodes, List<GpuJob> jobs, Placement placement, QueuePolicy policy,
        Disruptions disruptions, long seed, ReplayMonitor monitor) {
      this.placement = placement;
      this.uniform = placement instanceof Policies.RandomFit;
      this.policy = policy;
      this.disruptions = disruptions;
      this.monitor = monitor;
      this.rng = new SplittableRandom(seed);
      // Its own stream, so that failures do not shift the placement's draws.
      this.failureRng = new SplittableRandom(seed ^ 0x9E3779B97F4A7C15L);
      state = new ClusterState(nodes);
      view = state.new View();
      empty = new ClusterState(nodes);
      rank = new int[nodes.size()];
      for (int i = 0; i < rank.length; i++) {
        rank[i] = i;
      }
      feasible = new int[nodes.size()];
      arrivals = new ArrayList<>(jobs);
      arrivals.sort(QueuePolicy.ARRIVAL);
      index = new IdentityHashMap<>(arrivals.size());
      for (int i = 0; i < arrivals.size(); i++) {
        checkArgument(index.put(arrivals.get(i), i) == null,
            "jobs: the same job object %s twice", arrivals.get(i).name());
      }
      int n = arrivals.size();
      start = new double[n];
      finish = new double[n];
      remaining = new double[n];
      preemptions = new int[n];
      failures = new int[n];
      resizes = new int[n];
      startedNow = new boolean[n];
      runOf = new Run[n];
      Arrays.fill(start, Double.NaN);
      Arrays.fill(finish, Double.NaN);
      for (int i = 0; i < n; i++) {
        remaining[i] = arrivals.get(i).durationSeconds();
      }
      Comparator<GpuJob> order = policy.order();
      checkArgument(order != null, "policy %s: order() returned null", policy.name());
      // Arrivals are sorted by ARRIVAL already: its ranks are the indices; a strict queue's
      // key is read once per job.
      if (order == QueuePolicy.ARRIVAL
          || policy instanceof QueuePolicies.Strict st && st.key() == null) {
        waiting = new RankedSet(n);
      } else if (policy instanceof QueuePolicies.Strict st) {
        double[] key = new double[n];
        for (int i = 0; i < n; i++) {
          key[i] = st.key().applyAsDouble(arrivals.get(i));
        }
        waiting = new RankedSet(key);
      } else {
        waiting = new RankedSet(n, (a, b) -> order.compare(arrivals.get(a), arrivals.get(b)));
      }
      List<GpuPod> members = new ArrayList<>();
      for (GpuJob j : arrivals) {
        members.addAll(j.members());
      }
      target = TargetWorkload.of(members);
      nodeFrag = new double[nodes.size()];
      dirty = new boolean[nodes.size()];
      dirtyList = new int[nodes.size()];
      for (int i = 0; i < nodes.size(); i++) {
        refresh(i);
      }
      if (Double.isFinite(disruptions.nodeMtbfSeconds())) {
        for (int i = 0; i < nodes.size(); i++) {
          nodeEvents.add(new double[] {exponential(disruptions.nodeMtbfSeconds()), i, 1});
        }
      }
    }

    private double exponential(double mean) {
      return -mean * Math.log(1 - failureRng.nextDouble());
    }

    Result run() {
      int next = 0;
      double busy = 0;
      double last = 0;
      long events = 0;
      int done = 0;
      int reported = 0;
      int unschedulable = 0;
      int n = arrivals.size();
      while (next < n || !waiting.isEmpty() || !running.isEmpty()) {
        double tArrive = next < n ? arrivals.get(next).arrivalSeconds()
            : Double.POSITIVE_INFINITY;
        double tEnd = ends.isEmpty() ? Double.POSITIVE_INFINITY : ends.peek().end();
        double tNode = nodeEvents.isEmpty() ? Double.POSITIVE_INFINITY : nodeEvents.peek()[0];
        double t = Math.min(tArrive, Math.min(tEnd, tNode));
        if (t == Double.POSITIVE_INFINITY) {
          // Only jobs that can never start are left.
          unschedulable += waiting.size();
          waiting.clear();
          break;
        }
        if ((++events & 1023) == 0) {
          if (monitor.cancelled()) {
            throw new java.util.concurrent.CancellationException("replay cancelled at " + t
                + " s");
          }
          if (100L * done / n > 100L * reported / n) {
            reported = done;
            monitor.progress((double) done / n);
          }
        }
        flush();
        busy += (double) state.allocatedMilli * (t - now);
        fragArea += fragSum * (t - now);
        now = t;
        // GPUs freed at this instant: a policy may grow running jobs even with nothing waiting.
        boolean freed = !ends.isEmpty() && ends.peek().end() <= now;
        while (!ends.isEmpty() && ends.peek().end() <= now) {
          Run r = ends.poll();
          if (runOf[r.job()] != r) {
            continue;
          }
          release(r);
          if (r.fails()) {
            failures[r.job()]++;
            requeue(r);
          } else {
            finish[r.job()] = now;
            last = now;
            done++;
          }
        }
        while (!nodeEvents.isEmpty() && nodeEvents.peek()[0] <= now) {
          double[] e = nodeEvents.poll();
          int node = (int) e[1];
          if (e[2] > 0) {
            state.setDown(node, true);
            for (Run r : running.copy()) {
              if (r.on(node)) {
                release(r);
                failures[r.job()]++;
                requeue(r);
              }
            }
            touch(node);
            downMilli += 1000L * state.nodes[node].gpus();
            downNodes++;
            nodeEvents.add(new double[] {now + disruptions.repairSeconds(), node, -1});
          } else {
            state.setDown(node, false);
            touch(node);
            downMilli -= 1000L * state.nodes[node].gpus();
            downNodes--;
            nodeEvents.add(new double[] {now + exponential(disruptions.nodeMtbfSeconds()), node,
                1});
          }
        }
        while (next < n && arrivals.get(next).arrivalSeconds() <= now) {
          if (fitsEmptyCached(arrivals.get(next))) {
            waiting.add(next);
          } else {
            unschedulable++;
            done++;
          }
          next++;
        }
        if (waiting.isEmpty() && freed && policy.growsRunningJobs() && !running.isEmpty()) {
          schedule();
        }
        while (!waiting.isEmpty()) {
          schedule();
          if (!running.isEmpty() || waiting.isEmpty() || anyDown()) {
            break;
          }
          // Nothing runs on the whole, healthy cluster and the policy started nothing: its
          // first waiting job cannot be placed even alone (its members, placed one by one,
          // leave no room for the last) and would block the queue forever.
          waiting.pollFirst();
          unschedulable++;
          done++;
        }
      }
      flush();
      monitor.progress(1);
      List<JobRecord> out = new ArrayList<>();
      for (int i = 0; i < n; i++) {
        out.add(new JobRecord(arrivals.get(i), start[i], finish[i], preemptions[i],
            failures[i], resizes[i]));
      }
      double util = last > 0 && state.capacityMilli > 0 ? busy / (state.capacityMilli * last)
          : 0;
      double fragShare = last > 0 && state.capacityMilli > 0
          ? fragArea / (state.capacityMilli * last) : 0;
      return new Result(out, unschedulable, last, Math.min(1, util), spans,
          new Fragmentation(fragShare, Arrays.copyOf(fragT, fragN), deltas()));
    }

    /** Answers of {@link #fitsEmpty} by the members' requests: the empty cluster never changes. */
    private final Map<List<Request>, Boolean> fitsEmptyByShape = new HashMap<>();

    /** What a member asks for, without its name and times. */
    private record Request(long cpuMilli, long memoryMib, int gpus, int gpuMilli,
        Set<String> gpuModels) {}

    private boolean fitsEmptyCached(GpuJob job) {
      List<GpuPod> pods = job.isElastic() ? job.shape(job.minGpus()) : job.members();
      if (sameWholeGpuMembers(pods)) {
        // Members of s whole GPUs and nothing else fit the empty cluster exactly when its nodes
        // have as many slots of s GPUs as there are members: ClusterState.mayFit's count.
        return empty.mayFit(pods);
      }
      List<Request> key = new ArrayList<>(pods.size());
      for (GpuPod p : pods) {
        key.add(new Request(p.cpuMilli(), p.memoryMib(), p.gpus(), p.gpuMilli(), p.gpuModels()));
      }
      return fitsEmptyByShape.computeIfAbsent(key, k -> fitsEmpty(empty, job));
    }

    /** Whether every member asks for the same number of whole GPUs, of any model, only. */
    private static boolean sameWholeGpuMembers(List<GpuPod> pods) {
      int s = pods.get(0).gpus();
      for (int m = 0; m < pods.size(); m++) {
        GpuPod p = pods.get(m);
        if (p.gpus() != s || s == 0 || p.gpuMilli() != 1000 || p.cpuMilli() != 0
            || p.memoryMib() != 0 || !p.gpuModels().isEmpty()) {
          return false;
        }
      }
      return true;
    }

    /** Marks node {@code n} changed: its fragmentation is recomputed before time moves on. */
    private void touch(int n) {
      if (!dirty[n]) {
        dirty[n] = true;
        dirtyList[dirtyCount++] = n;
      }
    }

    /** Recomputes the fragmentation of the nodes changed at this instant. */
    private void flush() {
      for (int i = 0; i < dirtyCount; i++) {
        int n = dirtyList[i];
        dirty[n] = false;
        refresh(n);
      }
      dirtyCount = 0;
    }

    /** Node {@code n}'s fragmentation now (0 while it is down), recorded when it changed. */
    private void refresh(int n) {
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

    /** The recorded changes in GPUs. */
    private double[] deltas() {
      double[] out = new double[fragN];
      for (int i = 0; i < fragN; i++) {
        out[i] = fragD[i] / 1000;
      }
      return out;
    }

    private boolean anyDown() {
      return downNodes > 0;
    }

    private void schedule() {
      if (policy instanceof QueuePolicies.Strict) {
        // The built-in strict queues, without the policy interface's bookkeeping: the head
        // starts or blocks the rest.
        int j;
        while ((j = waiting.first()) >= 0 && place(j)) {
          waiting.remove(j);
        }
        return;
      }
      inSchedule = true;
      try {
        policy.schedule(this);
      } finally {
        inSchedule = false;
      }
      for (int k = 0; k < started.size; k++) {
        int j = started.at[k];
        waiting.remove(j);
        startedNow[j] = false;
      }
      for (int k = 0; k < stopped.size; k++) {
        waiting.add(stopped.at[k]);
      }
      started.clear();
      stopped.clear();
    }

    private void release(Run r) {
      List<GpuPod> members = r.pods();
      for (int m = 0; m < members.size(); m++) {
        state.release(r.nodes()[m], members.get(m), r.gpus()[m]);
        touch(r.nodes()[m]);
      }
      endRun(r);
    }

    /** The run's bookkeeping once its resources are given back. */
    private void endRun(Run r) {
      if (now > r.begin()) {
        spans.add(new Result.Run(r.job(), r.begin(), now, r.milli()));
      }
      running.remove(r);
      runOf[r.job()] = null;
    }

    /** Back to the queue after a stop: progress kept, the restart cost added. */
    private void requeue(Run r) {
      remaining[r.job()] = Math.max(0, remaining[r.job()] - (now - r.begin()) * r.speed())
          + disruptions.restartSeconds();
      if (inSchedule) {
        stopped.add(r.job());
      } else {
        waiting.add(r.job());
      }
    }

    @Override
    public double now() {
      return now;
    }

    /** The job last handed out by {@link #waiting()}, so that asking about it skips the map. */
    private GpuJob lastJob;
    private int lastIndex;

    /** The index of {@code job} in this replay; -1 when it is not one of its jobs. */
    private int indexOf(GpuJob job) {
      if (job == lastJob && job != null) {
        return lastIndex;
      }
      Integer i = index.get(job);
      return i == null ? -1 : i;
    }

    @Override
    public Iterable<GpuJob> waiting() {
      // Ranks, not boxed indices: a backfilling policy walks the whole queue at every event.
      return () -> new Iterator<>() {
        int rank = waiting.firstRank();

        @Override
        public boolean hasNext() {
          return rank >= 0;
        }

        @Override
        public GpuJob next() {
          if (rank < 0) {
            throw new java.util.NoSuchElementException();
          }
          int i = waiting.jobAt(rank);
          rank = waiting.nextRank(rank);
          lastJob = arrivals.get(i);
          lastIndex = i;
          return lastJob;
        }
      };
    }

    @Override
    public List<QueuePolicy.RunningJob> running() {
      List<QueuePolicy.RunningJob> out = new ArrayList<>(running.size());
      List<Run> runs = running.copy();
      // Submission order, so that policies break ties the same way whatever the storage.
      runs.sort(Comparator.comparingInt(Run::job));
      for (Run r : runs) {
        out.add(new QueuePolicy.RunningJob(arrivals.get(r.job()), r.begin(),
            r.expectedFinish(), width(r.pods())));
      }
      return out;
    }

    @Override
    public long freeGpuMilli() {
      // A failed node holds nothing (its jobs were stopped), so its capacity is all it removes.
      return state.capacityMilli - state.allocatedMilli - downMilli;
    }

    @Override
    public QueuePolicy.Reservation reservation(long gpuMilli) {
      checkArgument(gpuMilli > 0, "reservation: gpuMilli must be positive, got %s", gpuMilli);
      long free = freeGpuMilli();
      for (int k = 0, n = running.byFinishSize(); k < n; k++) {
        Run r = running.byFinish(k);
        free += r.milli();
        if (free >= gpuMilli) {
          return new QueuePolicy.Reservation(r.expectedFinish(), free - gpuMilli);
        }
      }
      return QueuePolicy.Reservation.NEVER;
    }

    @Override
    public long capacityGpuMilli() {
      return state.capacityMilli;
    }

    @Override
    public double remainingSeconds(GpuJob job) {
      int i = indexOf(job);
      checkArgument(i >= 0, "job %s: not in this replay", job == null ? null : job.name());
      Run r = runOf[i];
      return r == null ? remaining[i]
          : Math.max(0, remaining[i] - (now - r.begin()) * r.speed()) / r.speed();
    }

    @Override
    public boolean tryStart(GpuJob job) {
      int i = waitingIndex(job);
      return place(i) && markStarted(i);
    }

    /** The index of {@code job}, which must be waiting and not started in this call. */
    private int waitingIndex(GpuJob job) {
      int i = indexOf(job);
      checkArgument(i >= 0 && waiting.contains(i) && !startedNow[i],
          "policy %s: job %s is not waiting", policy.name(), job == null ? null : job.name());
      return i;
    }

    /** Job {@code i} started during this policy call; always true. */
    private boolean markStarted(int i) {
      started.add(i);
      startedNow[i] = true;
      return true;
    }

    @Override
    public List<GpuJob> tryStartPreempting(GpuJob job,
        java.util.function.Predicate<QueuePolicy.RunningJob> mayPreempt,
        Comparator<QueuePolicy.RunningJob> victimOrder) {
      checkArgument(mayPreempt != null && victimOrder != null,
          "policy %s: mayPreempt and victimOrder must be given", policy.name());
      checkArgument(inSchedule, "policy %s: tryStartPreempting outside schedule()",
          policy.name());
      int i = waitingIndex(job);
      if (place(i)) {
        markStarted(i);
        return List.of();
      }
      // Candidates, by node, in the victim order.
      List<QueuePolicy.RunningJob> seen = new ArrayList<>();
      Map<QueuePolicy.RunningJob, Run> runFor = new IdentityHashMap<>();
      for (Run r : running.copy()) {
        if (startedNow[r.job()]) {
          continue;
        }
        QueuePolicy.RunningJob rj = new QueuePolicy.RunningJob(arrivals.get(r.job()), r.begin(),
            r.expectedFinish(), width(r.pods()));
        if (mayPreempt.test(rj)) {
          seen.add(rj);
          runFor.put(rj, r);
        }
      }
      if (seen.isEmpty()) {
        return null;
      }
      seen.sort(victimOrder.thenComparingInt(rj -> runFor.get(rj).job()));
      List<List<Run>> onNode = new ArrayList<>();
      for (int n = 0; n < state.nodes.length; n++) {
        onNode.add(new ArrayList<>());
      }
      for (QueuePolicy.RunningJob rj : seen) {
        Run r = runFor.get(rj);
        for (int m = 0; m < r.nodes().length; m++) {
          List<Run> l = onNode.get(r.nodes()[m]);
          if (l.isEmpty() || l.get(l.size() - 1) != r) {
            l.add(r);
          }
        }
      }
      ClusterState sim = state.copy();
      ClusterState.View simView = sim.new View();
      Set<Run> chosen = java.util.Collections.newSetFromMap(new IdentityHashMap<>());
      List<Run> victims = new ArrayList<>();
      GpuJob g = arrivals.get(i);
      int k = g.members().size();
      int[] where = new int[k];
      int[][] gpus = new int[k][];
      for (int m = 0; m < k; m++) {
        GpuPod pod = g.members().get(m);
        int best = -1;
        int bestCount = Integer.MAX_VALUE;
        long bestMilli = Long.MAX_VALUE;
        for (int n = 0; n < sim.nodes.length && bestCount > 0; n++) {
          if (sim.down[n]) {
            continue;
          }
          if (sim.fits(n, pod)) {
            best = n;
            bestCount = 0;
            bestMilli = 0;
            break;
          }
          // Stop this node's candidates in order until the member fits, on a scratch node.
          long cpu = sim.cpuLeft[n];
          long mem = sim.memLeft[n];
          int[] left = sim.gpuLeft[n].clone();
          int count = 0;
          long milli = 0;
          boolean fits = false;
          for (Run r : onNode.get(n)) {
            if (chosen.contains(r)) {
              continue;
            }
            List<GpuPod> vm = r.pods();
            for (int x = 0; x < vm.size(); x++) {
              if (r.nodes()[x] == n) {
                sim.release(n, vm.get(x), r.gpus()[x]);
                milli += vm.get(x).totalGpuMilli();
              }
            }
            count++;
            if (sim.fits(n, pod)) {
              fits = true;
              break;
            }
          }
          sim.allocatedMilli += milli;
          sim.restore(n, cpu, mem, left);
          if (fits && (count < bestCount || (count == bestCount && milli < bestMilli))) {
            best = n;
            bestCount = count;
            bestMilli = milli;
          }
        }
        if (best < 0) {
          return null;
        }
        if (bestCount > 0) {
          int stopped = 0;
          for (Run r : onNode.get(best)) {
            if (stopped == bestCount) {
              break;
            }
            if (chosen.add(r)) {
              victims.add(r);
              stopped++;
              List<GpuPod> vm = r.pods();
              for (int x = 0; x < vm.size(); x++) {
                sim.release(r.nodes()[x], vm.get(x), r.gpus()[x]);
              }
            }
          }
        }
        simView.n = best;
        int share = pod.gpus() == 1 && pod.gpuMilli() < 1000
            ? placement.shareGpu(simView, pod, rng) : -1;
        where[m] = best;
        gpus[m] = sim.place(best, pod, share);
      }
      List<GpuJob> out = new ArrayList<>();
      for (Run r : victims) {
        preempt(arrivals.get(r.job()));
        out.add(arrivals.get(r.job()));
      }
      // The victims are all stopped before the members are placed, so every node has at least
      // the room the plan saw: the same nodes fit (whole GPUs may be other indices).
      for (int m = 0; m < k; m++) {
        GpuPod pod = g.members().get(m);
        if (!state.fits(where[m], pod)) {
          throw new IllegalStateException("preemption plan of " + g.name() + " does not fit "
              + state.nodes[where[m]].name());
        }
        int share = -1;
        if (pod.gpus() == 1 && pod.gpuMilli() < 1000) {
          share = gpus[m][0];
          if (state.gpuLeft[where[m]][share] < pod.gpuMilli()) {
            view.n = where[m];
            share = placement.shareGpu(view, pod, rng);
          }
        }
        gpus[m] = state.place(where[m], pod, share);
      }
      startRun(i, where, gpus, g.members());
      markStarted(i);
      return out;
    }

    @Override
    public boolean tryStart(GpuJob job, int gpus) {
      int i = waitingIndex(job);
      List<GpuPod> pods = job.shape(gpus);
      return (long) gpus * 1000 <= freeGpuMilli() && place(i, pods) && markStarted(i);
    }

    @Override
    public boolean resize(GpuJob job, int gpus) {
      int i = indexOf(job);
      checkArgument(inSchedule && i >= 0 && runOf[i] != null && !startedNow[i],
          "policy %s: job %s is not running (or started in this call)", policy.name(),
          job == null ? null : job.name());
      List<GpuPod> pods = job.shape(gpus);
      Run r = runOf[i];
      List<GpuPod> old = r.pods();
      if (width(old) == gpus) {
        return false;
      }
      // Try the new shape on the room the job would leave; put it back untouched if it fails.
      for (int m = 0; m < old.size(); m++) {
        state.release(r.nodes()[m], old.get(m), r.gpus()[m]);
      }
      int[] where = new int[pods.size()];
      int[][] taken = new int[pods.size()][];
      if (!tryPlace(pods, where, taken)) {
        for (int m = 0; m < old.size(); m++) {
          state.placeAt(r.nodes()[m], old.get(m), r.gpus()[m]);
        }
        return false;
      }
      for (int m = 0; m < old.size(); m++) {
        touch(r.nodes()[m]);
      }
      endRun(r);
      remaining[i] = Math.max(0, remaining[i] - (now - r.begin()) * r.speed())
          + disruptions.restartSeconds();
      resizes[i]++;
      startRun(i, where, taken, pods);
      return true;
    }

    /** Places every member of job {@code i} at its own size and starts its run, or none. */
    private boolean place(int i) {
      GpuJob g = arrivals.get(i);
      return state.mayFit(g) && place(i, g.members());
    }

    /** Places every member of {@code pods} (job {@code i}'s shape) and starts, or none. */
    private boolean place(int i, List<GpuPod> pods) {
      int[] where = new int[pods.size()];
      int[][] gpus = new int[pods.size()][];
      if (!tryPlace(pods, where, gpus)) {
        return false;
      }
      startRun(i, where, gpus, pods);
      return true;
    }

    /** Places every member of {@code pods} into {@code where} and {@code gpus}, or none. */
    private boolean tryPlace(List<GpuPod> pods, int[] where, int[][] gpus) {
      for (int m = 0; m < pods.size(); m++) {
        Schedule.Placed p = uniform
            ? Schedule.placeUniform(state, view, placement, rng, pods.get(m), feasible)
            : Schedule.place(state, view, rank, placement, rng, pods.get(m), feasible);
        if (p == null) {
          for (int r = m - 1; r >= 0; r--) {
            state.release(where[r], pods.get(r), gpus[r]);
          }
          return false;
        }
        where[m] = p.node();
        gpus[m] = p.gpus();
      }
      return true;
    }

    private static int width(List<GpuPod> pods) {
      int g = 0;
      for (GpuPod p : pods) {
        g += p.gpus();
      }
      return g;
    }

    /**
     * Starts job {@code i}'s run of shape {@code pods}, already placed at {@code where}; an
     * elastic job's speed is its GPUs over its own count.
     */
    private void startRun(int i, int[] where, int[][] gpus, List<GpuPod> pods) {
      GpuJob job = arrivals.get(i);
      double speed = job.isElastic() ? (double) width(pods) / job.wholeGpus() : 1;
      double end = now + remaining[i] / speed;
      boolean fails = false;
      if (disruptions.jobFailureProbability() > 0
          && failureRng.nextDouble() < disruptions.jobFailureProbability()) {
        fails = true;
        end = now + failureRng.nextDouble() * remaining[i] / speed;
      }
      for (int node : where) {
        touch(node);
      }
      Run r = new Run(i, now, end, fails, where, gpus, pods, speed,
          now + remaining[i] / speed);
      running.add(r);
      runOf[i] = r;
      ends.add(r);
      if (Double.isNaN(start[i])) {
        start[i] = now;
      }
    }

    @Override
    public void preempt(GpuJob job) {
      int i = indexOf(job);
      checkArgument(inSchedule && i >= 0 && runOf[i] != null,
          "policy %s: job %s is not running", policy.name(), job == null ? null : job.name());
      Run r = runOf[i];
      release(r);
      preemptions[i]++;
      if (startedNow[i]) {
        started.removeValue(i);
        startedNow[i] = false;
        // Started and stopped in the same call: it never left the queue.
        remaining[i] += disruptions.restartSeconds();
        return;
      }
      requeue(r);
    }
  }

  /** A growable list of job indices, unboxed. */
  static final class IntList {
    int[] at = new int[16];
    int size;

    void add(int v) {
      if (size == at.length) {
        at = Arrays.copyOf(at, 2 * size);
      }
      at[size++] = v;
    }

    /** Removes the first entry equal to {@code v}, keeping the order of the rest. */
    void removeValue(int v) {
      for (int k = 0; k < size; k++) {
        if (at[k] == v) {
          System.arraycopy(at, k + 1, at, k, size - k - 1);
          size--;
          return;
        }
      }
      throw new AssertionError("job " + v + " not in the list");
    }

    void clear() {
      size = 0;
    }
  }

  /** A run of a job: from begin to end (its finish, or its failure when {@code fails}). */
  private record Run(int job, double begin, double end, boolean fails, int[] nodes,
      int[][] gpus, List<GpuPod> pods, double speed, double expectedFinish, long milli,
      int[] slot) {
    Run(int job, double begin, double end, boolean fails, int[] nodes, int[][] gpus,
        List<GpuPod> pods, double speed, double expectedFinish) {
      this(job, begin, end, fails, nodes, gpus, pods, speed, expectedFinish, milli(pods),
          new int[] {-1});
    }

    private static long milli(List<GpuPod> pods) {
      long m = 0;
      for (GpuPod p : pods) {
        m += p.totalGpuMilli();
      }
      return m;
    }

    boolean on(int node) {
      for (int n : nodes) {
        if (n == node) {
          return true;
        }
      }
      return false;
    }
  }

  /** The running runs: constant-time add and remove (swap with the last), no boxing. */
  private static final class Running {
    /** Expected finish, then submission: the order of {@link QueuePolicy.Queue#reservation}. */
    private static int byFinish(Run a, Run b) {
      int c = Double.compare(a.expectedFinish(), b.expectedFinish());
      return c != 0 ? c : Integer.compare(a.job(), b.job());
    }

    private Run[] runs = new Run[16];
    private int size;
    /**
     * The runs by expected finish, kept only once a policy asked for it (null before): a sorted
     * array with binary insertion and removal. A few hundred runs are a few hundred bytes to
     * move, cheaper than a red-black tree's node, rebalancing and iterator (a fifth of a
     * Random-fit EASY backfill replay went to TreeSet; ReplayBenchmark, JFR).
     */
    private Run[] sorted;
    private int sortedSize;

    /** The number of runs kept in finish order: {@link #byFinish(int)} for 0 to this − 1. */
    int byFinishSize() {
      if (sorted == null) {
        sorted = Arrays.copyOf(runs, Math.max(16, size));
        Arrays.sort(sorted, 0, size, Running::byFinish);
        sortedSize = size;
      }
      return sortedSize;
    }

    /** The {@code k}-th run by expected finish (then submission); after {@link #byFinishSize}. */
    Run byFinish(int k) {
      return sorted[k];
    }

    /** Where {@code r} is or would go in {@link #sorted}: its index, or −(insertion point) − 1. */
    private int search(Run r) {
      int lo = 0;
      int hi = sortedSize - 1;
      while (lo <= hi) {
        int mid = (lo + hi) >>> 1;
        int c = byFinish(sorted[mid], r);
        if (c < 0) {
          lo = mid + 1;
        } else if (c > 0) {
          hi = mid - 1;
        } else {
          return mid;
        }
      }
      return -(lo + 1);
    }

    boolean isEmpty() {
      return size == 0;
    }

    int size() {
      return size;
    }

    void add(Run r) {
      if (size == runs.length) {
        runs = Arrays.copyOf(runs, 2 * size);
      }
      r.slot()[0] = size;
      runs[size++] = r;
      if (sorted != null) {
        int at = -search(r) - 1;
        if (sortedSize == sorted.length) {
          sorted = Arrays.copyOf(sorted, 2 * sortedSize);
        }
        System.arraycopy(sorted, at, sorted, at + 1, sortedSize - at);
        sorted[at] = r;
        sortedSize++;
      }
    }

    void remove(Run r) {
      int at = r.slot()[0];
      Run last = runs[--size];
      runs[at] = last;
      last.slot()[0] = at;
      runs[size] = null;
      r.slot()[0] = -1;
      if (sorted != null) {
        int k = search(r);
        if (k < 0) {
          throw new AssertionError("run of job " + r.job() + " missing from the finish order");
        }
        System.arraycopy(sorted, k + 1, sorted, k, sortedSize - k - 1);
        sorted[--sortedSize] = null;
      }
    }

    List<Run> copy() {
      List<Run> out = new ArrayList<>(size);
      for (int i = 0; i < size; i++) {
        out.add(runs[i]);
      }
      return out;
    }
  }

  /** Whether the job could start on the empty cluster (else it waits forever). */
  private static boolean fitsEmpty(ClusterState empty, GpuJob job) {
    List<int[]> taken = new ArrayList<>();
    List<Integer> where = new ArrayList<>();
    boolean ok = true;
    List<GpuPod> pods = job.isElastic() ? job.shape(job.minGpus()) : job.members();
    for (GpuPod p : pods) {
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
      empty.release(where.get(m), pods.get(m), taken.get(m));
    }
    return ok;
  }

}
