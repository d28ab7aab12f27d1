package io.hyperframes.schedule;

import static com.google.common.base.Preconditions.checkArgument;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.IdentityHashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.PriorityQueue;
import java.util.SplittableRandom;
import java.util.concurrent.CancellationException;
import java.util.function.Predicate;

/**
 * One time replay's state ({@link Replay}): the event loop over arrivals, ends and node events,
 * and the queue a {@link QueuePolicy} acts on (starts, gang placement, preemption, resizes,
 * reservations). Admission ({@link EmptyClusterFit}), the preemption plan
 * ({@link PreemptionPlan}), failures ({@link Failures}), the fragmentation metric
 * ({@link FragmentationMeter}) and the running set ({@link RunningJobs}) are their own classes.
 */
final class ReplayEngine implements QueuePolicy.Queue {
  private final List<GpuJob> arrivals;
  private final Map<GpuJob, Integer> index;
  private final ClusterState state;
  private final ClusterState.View view;
  private final EmptyClusterFit admission;
  private final int[] rank;
  private final int[] feasible;
  private final Placement placement;
  /**
   * Random-fit draws its node once among the feasible ones (Schedule.placeUniform) instead of a
   * score per feasible node: the same policy, and a fifth of a Random-fit replay less.
   */
  private final boolean uniform;
  private final QueuePolicy policy;
  private final Replay.Disruptions disruptions;
  private final SplittableRandom rng;
  private final Failures failures;
  private final ReplayMonitor monitor;
  private final double[] start;
  private final double[] finish;
  private final double[] remaining;
  private final int[] preemptions;
  private final int[] failed;
  private final int[] resizes;
  private final RankedSet waiting;
  /** The run of each job now running (null when not). */
  private final JobRun[] runOf;
  private final RunningJobs running = new RunningJobs();
  // End, then submission; written out rather than composed from Comparator's key extractors,
  // which cost a tenth of a backfilling replay in their lambdas (ReplayBenchmark, -prof stack).
  private final PriorityQueue<JobRun> ends = new PriorityQueue<>((a, b) -> {
    int c = Double.compare(a.end(), b.end());
    return c != 0 ? c : Integer.compare(a.job(), b.job());
  });
  /** Jobs started during the current policy call, in order. */
  private final IntList started = new IntList();
  /** Started during the current policy call (still in {@code waiting} until it returns). */
  private final boolean[] startedNow;
  /** Jobs stopped during the current policy call, back to the queue when it returns. */
  private final IntList stopped = new IntList();
  private final List<Replay.Result.Run> spans = new ArrayList<>();
  private final FragmentationMeter fragmentation;
  private double now;
  private boolean inSchedule;
  /** Jobs finished or found unschedulable, those unschedulable, and the last finish. */
  private int done;
  private int unschedulable;
  private double last;

  ReplayEngine(List<GpuNode> nodes, List<GpuJob> jobs, Placement placement, QueuePolicy policy,
      Replay.Disruptions disruptions, long seed, ReplayMonitor monitor) {
    this.placement = placement;
    this.uniform = placement instanceof Policies.RandomFit;
    this.policy = policy;
    this.disruptions = disruptions;
    this.monitor = monitor;
    this.rng = new SplittableRandom(seed);
    state = new ClusterState(nodes);
    view = state.new View();
    admission = new EmptyClusterFit(nodes);
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
    failed = new int[n];
    resizes = new int[n];
    startedNow = new boolean[n];
    runOf = new JobRun[n];
    Arrays.fill(start, Double.NaN);
    Arrays.fill(finish, Double.NaN);
    for (int i = 0; i < n; i++) {
      remaining[i] = arrivals.get(i).durationSeconds();
    }
    waiting = queueOf(policy, arrivals);
    List<GpuPod> members = new ArrayList<>();
    for (GpuJob j : arrivals) {
      members.addAll(j.members());
    }
    fragmentation = new FragmentationMeter(state, TargetWorkload.of(members));
    failures = new Failures(disruptions, seed, nodes.size());
  }

  /** The waiting queue in the policy's order, over job indices in {@code arrivals}. */
  private static RankedSet queueOf(QueuePolicy policy, List<GpuJob> arrivals) {
    Comparator<GpuJob> order = policy.order();
    checkArgument(order != null, "policy %s: order() returned null", policy.name());
    int n = arrivals.size();
    // Arrivals are sorted by ARRIVAL already: its ranks are the indices; a strict queue's key
    // is read once per job.
    if (order == QueuePolicy.ARRIVAL
        || policy instanceof QueuePolicies.Strict st && st.key() == null) {
      return new RankedSet(n);
    }
    if (policy instanceof QueuePolicies.Strict st) {
      double[] key = new double[n];
      for (int i = 0; i < n; i++) {
        key[i] = st.key().applyAsDouble(arrivals.get(i));
      }
      return new RankedSet(key);
    }
    return new RankedSet(n, (a, b) -> order.compare(arrivals.get(a), arrivals.get(b)));
  }

  Replay.Result run() {
    int next = 0;
    double busy = 0;
    long events = 0;
    int reported = 0;
    int n = arrivals.size();
    while (next < n || !waiting.isEmpty() || !running.isEmpty()) {
      double tArrive = next < n ? arrivals.get(next).arrivalSeconds() : Double.POSITIVE_INFINITY;
      double tEnd = ends.isEmpty() ? Double.POSITIVE_INFINITY : ends.peek().end();
      double t = Math.min(tArrive, Math.min(tEnd, failures.nextNodeEvent()));
      if (t == Double.POSITIVE_INFINITY) {
        // Only jobs that can never start are left.
        unschedulable += waiting.size();
        waiting.clear();
        break;
      }
      if ((++events & 1023) == 0) {
        if (monitor.cancelled()) {
          throw new CancellationException("replay cancelled at " + t + " s");
        }
        if (100L * done / n > 100L * reported / n) {
          reported = done;
          monitor.progress((double) done / n);
        }
      }
      fragmentation.flush(now);
      busy += (double) state.allocatedMilli * (t - now);
      fragmentation.advance(t - now);
      now = t;
      // GPUs freed at this instant: a policy may grow running jobs even with nothing waiting.
      boolean freed = endRunsDue();
      nodeEventsDue();
      while (next < n && arrivals.get(next).arrivalSeconds() <= now) {
        admit(next++);
      }
      if (waiting.isEmpty() && freed && policy.growsRunningJobs() && !running.isEmpty()) {
        schedule();
      }
      scheduleWaiting();
    }
    fragmentation.flush(now);
    monitor.progress(1);
    List<Replay.JobRecord> out = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      out.add(new Replay.JobRecord(arrivals.get(i), start[i], finish[i], preemptions[i],
          failed[i], resizes[i]));
    }
    double util = last > 0 && state.capacityMilli > 0 ? busy / (state.capacityMilli * last) : 0;
    return new Replay.Result(out, unschedulable, last, Math.min(1, util), spans,
        fragmentation.result(last));
  }

  /** Ends the runs due by now (finished or failed); whether any ended. */
  private boolean endRunsDue() {
    boolean freed = !ends.isEmpty() && ends.peek().end() <= now;
    while (!ends.isEmpty() && ends.peek().end() <= now) {
      JobRun r = ends.poll();
      if (runOf[r.job()] != r) {
        continue;
      }
      release(r);
      if (r.fails()) {
        failed[r.job()]++;
        requeue(r);
      } else {
        finish[r.job()] = now;
        last = now;
        done++;
      }
    }
    return freed;
  }

  /** Fails and repairs the nodes due by now; a failure stops every run on its node. */
  private void nodeEventsDue() {
    int e;
    while ((e = failures.pollDue(now, state)) != Integer.MIN_VALUE) {
      int node = e >= 0 ? e : -e - 1;
      state.setDown(node, e >= 0);
      if (e >= 0) {
        for (JobRun r : running.copy()) {
          if (r.on(node)) {
            release(r);
            failed[r.job()]++;
            requeue(r);
          }
        }
      }
      fragmentation.touch(node);
    }
  }

  /** Job {@code i} arrives: it waits, or is unschedulable when it fits not even the empty one. */
  private void admit(int i) {
    if (admission.fits(arrivals.get(i))) {
      waiting.add(i);
    } else {
      unschedulable++;
      done++;
    }
  }

  /** Lets the policy start waiting jobs; drops a head that blocks an idle, healthy cluster. */
  private void scheduleWaiting() {
    while (!waiting.isEmpty()) {
      schedule();
      if (!running.isEmpty() || waiting.isEmpty() || failures.anyDown()) {
        break;
      }
      // Nothing runs on the whole, healthy cluster and the policy started nothing: its first
      // waiting job cannot be placed even alone (its members, placed one by one, leave no room
      // for the last) and would block the queue forever.
      waiting.pollFirst();
      unschedulable++;
      done++;
    }
  }

  private void schedule() {
    if (policy instanceof QueuePolicies.Strict) {
      // The built-in strict queues, without the policy interface's bookkeeping: the head starts
      // or blocks the rest.
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

  private void release(JobRun r) {
    List<GpuPod> members = r.pods();
    for (int m = 0; m < members.size(); m++) {
      state.release(r.nodes()[m], members.get(m), r.gpus()[m]);
      fragmentation.touch(r.nodes()[m]);
    }
    endRun(r);
  }

  /** The run's bookkeeping once its resources are given back. */
  private void endRun(JobRun r) {
    if (now > r.begin()) {
      spans.add(new Replay.Result.Run(r.job(), r.begin(), now, r.milli()));
    }
    running.remove(r);
    runOf[r.job()] = null;
  }

  /** Back to the queue after a stop: progress kept, the restart cost added. */
  private void requeue(JobRun r) {
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
          throw new NoSuchElementException();
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
    List<JobRun> runs = running.copy();
    // Submission order, so that policies break ties the same way whatever the storage.
    runs.sort(Comparator.comparingInt(JobRun::job));
    for (JobRun r : runs) {
      out.add(runningJob(r));
    }
    return out;
  }

  private QueuePolicy.RunningJob runningJob(JobRun r) {
    return new QueuePolicy.RunningJob(arrivals.get(r.job()), r.begin(), r.expectedFinish(),
        JobRun.width(r.pods()));
  }

  @Override
  public long freeGpuMilli() {
    // A failed node holds nothing (its jobs were stopped), so its capacity is all it removes.
    return state.capacityMilli - state.allocatedMilli - failures.downMilli();
  }

  @Override
  public QueuePolicy.Reservation reservation(long gpuMilli) {
    checkArgument(gpuMilli > 0, "reservation: gpuMilli must be positive, got %s", gpuMilli);
    long free = freeGpuMilli();
    for (int k = 0, n = running.byFinishSize(); k < n; k++) {
      JobRun r = running.byFinish(k);
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
    JobRun r = runOf[i];
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
  public List<GpuJob> tryStartPreempting(GpuJob job, Predicate<QueuePolicy.RunningJob> mayPreempt,
      Comparator<QueuePolicy.RunningJob> victimOrder) {
    checkArgument(mayPreempt != null && victimOrder != null,
        "policy %s: mayPreempt and victimOrder must be given", policy.name());
    checkArgument(inSchedule, "policy %s: tryStartPreempting outside schedule()", policy.name());
    int i = waitingIndex(job);
    if (place(i)) {
      markStarted(i);
      return List.of();
    }
    // Candidates in the victim order, then submission.
    List<QueuePolicy.RunningJob> seen = new ArrayList<>();
    Map<QueuePolicy.RunningJob, JobRun> runFor = new IdentityHashMap<>();
    for (JobRun r : running.copy()) {
      if (startedNow[r.job()]) {
        continue;
      }
      QueuePolicy.RunningJob rj = runningJob(r);
      if (mayPreempt.test(rj)) {
        seen.add(rj);
        runFor.put(rj, r);
      }
    }
    if (seen.isEmpty()) {
      return null;
    }
    seen.sort(victimOrder.thenComparingInt(rj -> runFor.get(rj).job()));
    List<JobRun> candidates = new ArrayList<>(seen.size());
    for (QueuePolicy.RunningJob rj : seen) {
      candidates.add(runFor.get(rj));
    }
    GpuJob g = arrivals.get(i);
    PreemptionPlan plan = PreemptionPlan.find(state, g, candidates, placement, rng);
    if (plan == null) {
      return null;
    }
    List<GpuJob> out = new ArrayList<>();
    for (JobRun r : plan.victims()) {
      preempt(arrivals.get(r.job()));
      out.add(arrivals.get(r.job()));
    }
    placeAsPlanned(g, plan.where(), plan.gpus());
    startRun(i, plan.where(), plan.gpus(), g.members());
    markStarted(i);
    return out;
  }

  /**
   * Places {@code job}'s members on the nodes of a preemption plan, its victims stopped: every
   * node has at least the room the plan saw, so the same nodes fit (whole GPUs may be other
   * indices, and a shared GPU is chosen again when the planned one is short).
   */
  private void placeAsPlanned(GpuJob job, int[] where, int[][] gpus) {
    for (int m = 0; m < where.length; m++) {
      GpuPod pod = job.members().get(m);
      if (!state.fits(where[m], pod)) {
        throw new IllegalStateException("preemption plan of " + job.name() + " does not fit "
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
    JobRun r = runOf[i];
    List<GpuPod> old = r.pods();
    if (JobRun.width(old) == gpus) {
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
      fragmentation.touch(r.nodes()[m]);
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

  /**
   * Starts job {@code i}'s run of shape {@code pods}, already placed at {@code where}; an
   * elastic job's speed is its GPUs over its own count.
   */
  private void startRun(int i, int[] where, int[][] gpus, List<GpuPod> pods) {
    GpuJob job = arrivals.get(i);
    double speed = job.isElastic() ? (double) JobRun.width(pods) / job.wholeGpus() : 1;
    double end = now + remaining[i] / speed;
    double failsAt = failures.jobFailure(now, remaining[i], speed);
    boolean fails = !Double.isNaN(failsAt);
    if (fails) {
      end = failsAt;
    }
    for (int node : where) {
      fragmentation.touch(node);
    }
    JobRun r = new JobRun(i, now, end, fails, where, gpus, pods, speed,
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
    JobRun r = runOf[i];
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
}
