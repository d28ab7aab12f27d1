package io.hyperframes.schedule;

import static com.google.common.base.Preconditions.checkArgument;

import com.google.common.math.Quantiles;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.function.Supplier;

/**
 * A round-based replay of training jobs whose progress depends on where they run: every
 * scheduling interval each running job advances by its <em>goodput</em> — measured throughput of
 * its placement and batch size × the statistical efficiency of that batch size (Qiao et al.,
 * "Pollux", OSDI 2021, §3.1, Eq. 4–6) — and at the interval's end a {@link RoundPolicy}
 * re-decides the allocation. A job whose allocation changes pays a restart delay (30 s) before
 * it trains again. Jobs finish after their application's epochs
 * ({@link ApplicationProfile#maxEpochs()}).
 *
 * <p>The round structure, the restart delay, the batch-size split (per-GPU batch, gradient
 * accumulation) and the progress rule are those of the Pollux artifact's simulator
 * ({@code petuum/adaptdl} osdi21-artifact, {@code simulator/simulator.py}, {@code Job.step}),
 * so its published results can be reproduced; jobs here have a fixed GPU count and batch size
 * (the artifact's "TunedJobs" setting that its Tiresias and Optimus runs use).
 */
public final class GoodputReplay {
  private GoodputReplay() {}

  /** Seconds a job spends re-starting after its allocation changes (simulator.py). */
  static final int RESTART_SECONDS = 30;

  /**
   * A training job.
   *
   * @param name unique name
   * @param arrivalSeconds submission time, integer seconds ≥ 0
   * @param application the application it trains (a key of the profiles)
   * @param gpus GPUs it asks for, ≥ 1
   * @param batchSize its global batch size, ≥ 1
   * @param minGpus fewest GPUs it may run on (elastic jobs; {@code gpus} for a rigid one)
   * @param maxGpus most GPUs it may run on (elastic jobs; {@code gpus} for a rigid one)
   */
  public record Job(String name, long arrivalSeconds, String application, int gpus,
      int batchSize, int minGpus, int maxGpus) {
    public Job {
      checkArgument(name != null && !name.isBlank(), "job.name: must be given");
      checkArgument(arrivalSeconds >= 0, "job %s.arrivalSeconds: must be >= 0, got %s", name,
          arrivalSeconds);
      checkArgument(application != null && !application.isBlank(),
          "job %s.application: must be given", name);
      checkArgument(gpus >= 1, "job %s.gpus: must be >= 1, got %s", name, gpus);
      checkArgument(batchSize >= 1, "job %s.batchSize: must be >= 1, got %s", name, batchSize);
      checkArgument(minGpus >= 1 && minGpus <= gpus && maxGpus >= gpus, "job %s: needs 1 <="
          + " minGpus <= gpus <= maxGpus, got %s <= %s <= %s", name, minGpus, gpus, maxGpus);
    }

    /** A rigid job: always {@code gpus} GPUs. */
    public Job(String name, long arrivalSeconds, String application, int gpus, int batchSize) {
      this(name, arrivalSeconds, application, gpus, batchSize, gpus, gpus);
    }

    /** This job made elastic over [{@code min}, {@code max}] GPUs. */
    public Job elastic(int min, int max) {
      return new Job(name, arrivalSeconds, application, gpus, batchSize, min, max);
    }
  }

  /**
   * One job's fate.
   *
   * @param job the job
   * @param startSeconds end of the round it was first given GPUs (NaN if never)
   * @param finishSeconds when it finished (NaN if it did not: too large for the cluster)
   * @param restarts allocation changes after the first
   * @param preemptions times it lost all its GPUs before finishing
   * @param gpuSeconds GPU-seconds it held
   */
  public record JobRecord(Job job, double startSeconds, double finishSeconds, int restarts,
      int preemptions, double gpuSeconds) {
    /** Completion minus submission. */
    public double jctSeconds() {
      return finishSeconds - job.arrivalSeconds();
    }
  }

  /**
   * What the replay did.
   *
   * @param policy the policy's name
   * @param jobs every job, in submission order
   * @param unschedulable jobs that ask for more GPUs than the cluster has
   * @param makespanSeconds the last finish time
   * @param utilisation GPU-seconds allocated over capacity × makespan
   * @param rounds scheduling rounds run
   * @param intervalSeconds the scheduling interval
   * @param heldByRound GPUs held during each round, in order
   */
  public record Result(String policy, List<JobRecord> jobs, int unschedulable,
      double makespanSeconds, double utilisation, long rounds, int intervalSeconds,
      int[] heldByRound) {
    public Result {
      jobs = List.copyOf(jobs);
      heldByRound = heldByRound.clone();
    }

    @Override
    public int[] heldByRound() {
      return heldByRound.clone();
    }

    /**
     * GPUs allocated over time: {bin start seconds, mean GPUs held} over {@code bins} equal bins
     * of [0, makespan].
     */
    public double[][] allocatedGpus(int bins) {
      double[] t = new double[heldByRound.length + 1];
      double[] d = new double[heldByRound.length + 1];
      int last = 0;
      for (int r = 0; r < heldByRound.length; r++) {
        t[r] = (double) r * intervalSeconds;
        d[r] = heldByRound[r] - last;
        last = heldByRound[r];
      }
      t[heldByRound.length] = (double) heldByRound.length * intervalSeconds;
      d[heldByRound.length] = -last;
      return Timelines.bin(t, d, makespanSeconds, bins);
    }

    private double[] jcts() {
      return jobs.stream().filter(j -> !Double.isNaN(j.finishSeconds()))
          .mapToDouble(JobRecord::jctSeconds).toArray();
    }

    /** Mean JCT over the finished jobs. */
    public double meanJctSeconds() {
      double[] v = jcts();
      double s = 0;
      for (double x : v) {
        s += x;
      }
      return v.length == 0 ? Double.NaN : s / v.length;
    }

    /** JCT percentile (0–100, linear interpolation) over the finished jobs. */
    public double jctPercentileSeconds(int percentile) {
      checkArgument(percentile >= 0 && percentile <= 100,
          "percentile: must be in [0, 100], got %s", percentile);
      double[] v = jcts();
      return v.length == 0 ? Double.NaN : Quantiles.percentiles().index(percentile).compute(v);
    }

    /** Preemptions over all jobs. */
    public int preemptions() {
      return jobs.stream().mapToInt(JobRecord::preemptions).sum();
    }

    /** Restarts (allocation changes after the first) over all jobs. */
    public int restarts() {
      return jobs.stream().mapToInt(JobRecord::restarts).sum();
    }
  }

  /**
   * The jobs made elastic, as {@code schedule --mode goodput --elastic} does: a job of a known
   * application may run on half its GPUs (at least one) up to twice them, but on no more GPUs
   * than its batch fills at the application's smallest local batch (and never fewer than it
   * asked); a job of an unknown application stays rigid.
   */
  public static List<Job> elastic(List<Job> jobs, Map<String, ApplicationProfile> applications) {
    checkArgument(jobs != null && applications != null, "jobs and applications: must be given");
    return jobs.stream().map(j -> {
      ApplicationProfile app = applications.get(j.application());
      if (app == null) {
        return j;
      }
      int max = Math.max(j.gpus(), Math.min(2 * j.gpus(), j.batchSize() / app.minLocalBatch()));
      return j.elastic(Math.max(1, (j.gpus() + 1) / 2), max);
    }).toList();
  }

  /**
   * Replays {@code jobs} on {@code gpusPerNode.length} nodes.
   *
   * @param gpusPerNode GPUs on each node (each 1–9: placements are tabulated per digit)
   * @param jobs the jobs; names unique, applications among {@code profiles}
   * @param profiles application profiles by name
   * @param policy a factory of the policy (one fresh instance per replay)
   * @param intervalSeconds the scheduling interval, ≥ 1 (the artifact's default is 60)
   * @param monitor told the share of jobs finished; polled every round for cancellation
   *     ({@link java.util.concurrent.CancellationException})
   * @throws IllegalArgumentException on invalid input, naming the field
   * @throws IllegalStateException if the policy leaves waiting jobs without GPUs while nothing
   *     runs and nothing more arrives (it would never end)
   */
  public static Result run(int[] gpusPerNode, List<Job> jobs,
      Map<String, ApplicationProfile> profiles, Supplier<? extends RoundPolicy> policy,
      int intervalSeconds, ReplayMonitor monitor) {
    int capacity = checkedCapacity(gpusPerNode, jobs, profiles, policy, intervalSeconds,
        monitor);
    RoundPolicy p = Objects.requireNonNull(policy.get(), "policy factory returned null");
    List<Job> ordered = new ArrayList<>(jobs);
    ordered.sort((a, b) -> Long.compare(a.arrivalSeconds(), b.arrivalSeconds()));
    List<Running> all = new ArrayList<>();
    int unschedulable = 0;
    for (Job j : ordered) {
      if (j.minGpus() > capacity) {
        unschedulable++;
      }
      all.add(new Running(j, profiles.get(j.application()), j.minGpus() <= capacity));
    }
    Map<String, List<Integer>> current = new LinkedHashMap<>();
    long now = 0;
    long rounds = 0;
    double allocated = 0;
    int idle = 0;
    List<Integer> heldLog = new ArrayList<>();
    int reported = 0;
    int schedulable = all.size() - unschedulable;
    int finished = 0;
    while (finished < schedulable) {
      if (monitor.cancelled()) {
        throw new java.util.concurrent.CancellationException("goodput replay cancelled at "
            + now + " s");
      }
      for (Running r : all) {
        boolean was = r.completion >= 0;
        r.step(intervalSeconds);
        if (!was && r.completion >= 0) {
          finished++;
        }
      }
      int held = 0;
      for (List<Integer> a : current.values()) {
        held += a.size();
      }
      allocated += (double) held * intervalSeconds;
      heldLog.add(held);
      now += intervalSeconds;
      rounds++;
      List<RoundPolicy.Demand> demands = new ArrayList<>();
      Map<String, Running> active = new HashMap<>();
      boolean later = false;
      for (Running r : all) {
        if (!r.schedulable) {
          continue;
        }
        if (r.job.arrivalSeconds() > now) {
          later = true;
        } else if (r.completion < 0) {
          demands.add(new RoundPolicy.Demand(r.job.name(), r.job.arrivalSeconds(),
              r.job.gpus(), r.attained, r.job.minGpus(), r.job.maxGpus()));
          active.put(r.job.name(), r);
        }
      }
      if (finished > reported) {
        reported = finished;
        monitor.progress((double) finished / all.size());
      }
      if (demands.isEmpty()) {
        continue;
      }
      Map<String, List<Integer>> prev = new LinkedHashMap<>();
      current.forEach((k, v) -> {
        if (active.containsKey(k)) {
          prev.put(k, v);
        }
      });
      Map<String, List<Integer>> next = p.allocate(now, List.copyOf(demands),
          gpusPerNode.clone(), Map.copyOf(prev));
      check(next, active, gpusPerNode, p.name(), now);
      for (Running r : all) {
        List<Integer> before = current.get(r.job.name());
        List<Integer> after = next.get(r.job.name());
        if (!Objects.equals(before, after) && active.containsKey(r.job.name())) {
          r.reallocate(after, now);
        }
      }
      current = new LinkedHashMap<>(next);
      idle = current.isEmpty() && !later ? idle + 1 : 0;
      if (idle > 1) {
        throw new IllegalStateException(String.format("policy %s: %d jobs wait at %d s with"
            + " every GPU free and nothing more to arrive", p.name(), demands.size(), now));
      }
    }
    monitor.progress(1);
    return result(p.name(), all, unschedulable, capacity, allocated, rounds, intervalSeconds,
        heldLog);
  }

  /**
   * The cluster's GPUs, once the arguments are checked: every node 1-9 GPUs, jobs with unique
   * names whose application is profiled and whose batch and GPU range that profile measured.
   */
  private static int checkedCapacity(int[] gpusPerNode, List<Job> jobs,
      Map<String, ApplicationProfile> profiles, Supplier<? extends RoundPolicy> policy,
      int intervalSeconds, ReplayMonitor monitor) {
    checkArgument(gpusPerNode != null && gpusPerNode.length > 0, "nodes: at least one");
    int capacity = 0;
    for (int i = 0; i < gpusPerNode.length; i++) {
      checkArgument(gpusPerNode[i] >= 1 && gpusPerNode[i] <= 9,
          "nodes[%s].gpus: must be in [1, 9], got %s", i, gpusPerNode[i]);
      capacity += gpusPerNode[i];
    }
    checkArgument(jobs != null && !jobs.isEmpty(), "jobs: at least one");
    checkArgument(profiles != null && policy != null && monitor != null,
        "profiles, policy and monitor: must be given");
    checkArgument(intervalSeconds >= 1, "intervalSeconds: must be >= 1, got %s",
        intervalSeconds);
    Set<String> names = new HashSet<>();
    for (Job j : jobs) {
      checkArgument(names.add(j.name()), "jobs: name %s twice", j.name());
      checkArgument(profiles.containsKey(j.application()), "job %s.application: unknown '%s'"
          + " (profiles: %s)", j.name(), j.application(), profiles.keySet());
      ApplicationProfile app = profiles.get(j.application());
      checkArgument(j.batchSize() >= app.initBatchSize() && j.batchSize() <= app.maxBatchSize(),
          "job %s.batchSize: must be within the validated [%s, %s] of %s, got %s", j.name(),
          app.initBatchSize(), app.maxBatchSize(), app.name(), j.batchSize());
      checkArgument(j.maxGpus() <= j.batchSize() / app.minLocalBatch(), "job %s.maxGpus: at"
          + " most batch %s / the smallest measured per-GPU batch %s = %s, got %s", j.name(),
          j.batchSize(), app.minLocalBatch(), j.batchSize() / app.minLocalBatch(), j.maxGpus());
    }
    return capacity;
  }

  /** The replay's result from its jobs' state once every schedulable one finished. */
  private static Result result(String policy, List<Running> all, int unschedulable,
      int capacity, double allocated, long rounds, int intervalSeconds, List<Integer> heldLog) {
    double makespan = 0;
    List<JobRecord> out = new ArrayList<>();
    for (Running r : all) {
      double finish = r.completion < 0 ? Double.NaN : r.completion;
      if (!Double.isNaN(finish)) {
        makespan = Math.max(makespan, finish);
      }
      out.add(new JobRecord(r.job, r.started < 0 ? Double.NaN : r.started, finish,
          Math.max(0, r.allocations - 1), r.preemptions, r.attained));
    }
    double util = makespan > 0 ? Math.min(1, allocated / (capacity * makespan)) : 0;
    return new Result(policy, out, unschedulable, makespan, util, rounds, intervalSeconds,
        heldLog.stream().mapToInt(Integer::intValue).toArray());
  }

  private static void check(Map<String, List<Integer>> next, Map<String, Running> active,
      int[] gpusPerNode, String policy, long now) {
    checkArgument(next != null, "policy %s: returned no allocation at %s s", policy, now);
    int[] used = new int[gpusPerNode.length];
    for (Map.Entry<String, List<Integer>> e : next.entrySet()) {
      Running r = active.get(e.getKey());
      checkArgument(r != null, "policy %s: allocated GPUs to %s, not a waiting or running job"
          + " at %s s", policy, e.getKey(), now);
      int got = e.getValue().size();
      checkArgument(got >= r.job.minGpus() && got <= r.job.maxGpus(), "policy %s: gave %s %s"
          + " GPUs, it runs on %s to %s (gangs run whole)", policy, e.getKey(), got,
          r.job.minGpus(), r.job.maxGpus());
      for (int n : e.getValue()) {
        checkArgument(n >= 0 && n < used.length, "policy %s: node %s does not exist", policy, n);
        used[n]++;
        checkArgument(used[n] <= gpusPerNode[n], "policy %s: node %s over-allocated (%s of %s"
            + " GPUs) at %s s", policy, n, used[n], gpusPerNode[n], now);
      }
    }
  }

  /** A job's training state, as simulator.py's {@code Job}. */
  static final class Running {
    final Job job;
    final ApplicationProfile app;
    final boolean schedulable;
    int[] placement = new int[0];
    int atomicBatch;
    int accumSteps;
    long clock;
    long rescale;
    double progress;
    int epoch;
    double attained;
    long completion = -1;
    long started = -1;
    int allocations;
    int preemptions;
    /** Step and sync seconds of {@code timesFor} at {@code timesBatch} per GPU. */
    double[] times;
    int[] timesFor;
    int timesBatch;

    Running(Job job, ApplicationProfile app, boolean schedulable) {
      this.job = job;
      this.app = app;
      this.schedulable = schedulable;
    }

    void reallocate(List<Integer> nodes, long now) {
      if (nodes == null || nodes.isEmpty()) {
        if (completion < 0 && placement.length > 0) {
          preemptions++;
        }
        placement = new int[0];
        atomicBatch = 0;
        return;
      }
      // Consecutive GPUs on one node form one entry of the placement.
      List<Integer> counts = new ArrayList<>();
      for (int i = 0; i < nodes.size(); i++) {
        if (i == 0 || !nodes.get(i).equals(nodes.get(i - 1))) {
          counts.add(1);
        } else {
          counts.set(counts.size() - 1, counts.get(counts.size() - 1) + 1);
        }
      }
      placement = counts.stream().mapToInt(Integer::intValue).toArray();
      updateBatch();
      rescale = RESTART_SECONDS;
      allocations++;
      if (started < 0) {
        started = now;
      }
    }

    private int gpus() {
      int s = 0;
      for (int g : placement) {
        s += g;
      }
      return s;
    }

    /** Per-GPU batch and accumulation steps for the fixed global batch. */
    void updateBatch() {
      int replicas = gpus();
      int local = (int) Math.ceil((double) job.batchSize() / replicas - 1e-8);
      accumSteps = (int) Math.ceil((double) local / app.maxLocalBatch() - 1e-8) - 1;
      if (replicas == 1 && job.batchSize() > app.initBatchSize()) {
        accumSteps = Math.max(1, accumSteps);
      }
      atomicBatch = (int) Math.ceil((double) local / (accumSteps + 1) - 1e-8);
      int count = replicas * (accumSteps + 1);
      atomicBatch = Math.min(atomicBatch, app.maxBatchSize() / count);
    }

    void step(long seconds) {
      if (placement.length == 0) {
        clock += seconds;
        return;
      }
      long delay = Math.min(rescale, seconds);
      int replicas = gpus();
      clock += delay;
      attained += (double) delay * replicas;
      rescale -= delay;
      seconds -= delay;
      while (seconds > 0 && completion < 0) {
        double batch = (double) replicas * atomicBatch * (accumSteps + 1);
        double scale = batch / app.initBatchSize();
        if (timesFor != placement || timesBatch != atomicBatch) {
          // The tables' answer changes only with the placement or the per-GPU batch.
          times = app.stepSeconds(placement, atomicBatch);
          timesFor = placement;
          timesBatch = atomicBatch;
        }
        double[] t = times;
        double accumTime = t[0] - t[1];
        double[] g = app.gradStats(batch, epoch);
        // Statistical efficiency relative to the initial batch (Pollux Eq. 6).
        double gain = (g[1] + g[0]) / (g[1] / scale + g[0]);
        double goodput = gain / (t[0] + accumTime * accumSteps);
        if (!(goodput > 0) || Double.isInfinite(goodput)) {
          throw new IllegalStateException(String.format("job %s: goodput %s on placement %s"
              + " (step %s s, sync %s s, efficiency %s): the application's tables are"
              + " inconsistent", job.name(), goodput, java.util.Arrays.toString(placement), t[0],
              t[1], gain));
        }
        double nextProgress = app.progressAt(epoch + 1);
        if (progress + goodput * seconds < nextProgress) {
          progress += goodput * seconds;
          clock += seconds;
          attained += (double) seconds * replicas;
          seconds = 0;
        } else {
          epoch++;
          long delta = (long) Math.rint((nextProgress - progress) / goodput);
          if (epoch > app.maxEpochs() - 1) {
            completion = clock + delta;
          }
          progress = nextProgress;
          clock += delta;
          attained += (double) delta * replicas;
          seconds -= delta;
        }
        updateBatch();
      }
      clock += seconds;
    }
  }
}
