package io.hyperframes.schedule;

import static com.google.common.base.Preconditions.checkArgument;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

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
    return new ReplayEngine(nodes, jobs, placement, policy, disruptions, seed, monitor).run();
  }
}
