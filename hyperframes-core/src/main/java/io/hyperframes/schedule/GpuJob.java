package io.hyperframes.schedule;

import static com.google.common.base.Preconditions.checkArgument;

import com.google.common.collect.ImmutableList;
import java.util.List;

/**
 * A job of a time-based replay: its members start together (a gang) and hold their resources for
 * {@code durationSeconds} of running (a preempted or failed job resumes from where it stopped,
 * after the replay's restart cost).
 *
 * @param name job name
 * @param arrivalSeconds when it is submitted
 * @param durationSeconds how long it runs once started, &gt; 0
 * @param members its tasks (one for a single-task job), each placed on some node
 * @param tenant who submitted it (quotas and fairness are per tenant; empty: no tenant)
 * @param priority its priority tier, higher first (the priority policy preempts lower tiers)
 * @param minGpus fewest whole GPUs an elastic job runs on ({@link #elastic}); for a rigid job
 *     its own GPU count (0 given: rigid)
 * @param maxGpus most whole GPUs an elastic job runs on; for a rigid job its own GPU count
 */
public record GpuJob(String name, double arrivalSeconds, double durationSeconds,
    List<GpuPod> members, String tenant, int priority, int minGpus, int maxGpus) {
  public GpuJob {
    checkArgument(name != null && !name.isBlank(), "job.name: must be given");
    checkArgument(Double.isFinite(arrivalSeconds) && arrivalSeconds >= 0,
        "job %s.arrivalSeconds: must be finite and >= 0, got %s", name, arrivalSeconds);
    checkArgument(Double.isFinite(durationSeconds) && durationSeconds > 0,
        "job %s.durationSeconds: must be finite and > 0, got %s", name, durationSeconds);
    checkArgument(members != null && !members.isEmpty(), "job %s.members: at least one", name);
    members = ImmutableList.copyOf(members);
    tenant = tenant == null ? "" : tenant;
    if (minGpus == 0 && maxGpus == 0) {
      minGpus = whole(members);
      maxGpus = minGpus;
    }
  }

  /** A rigid job. */
  public GpuJob(String name, double arrivalSeconds, double durationSeconds,
      List<GpuPod> members, String tenant, int priority) {
    this(name, arrivalSeconds, durationSeconds, members, tenant, priority, 0, 0);
  }

  /** A job of no tenant at priority 0. */
  public GpuJob(String name, double arrivalSeconds, double durationSeconds,
      List<GpuPod> members) {
    this(name, arrivalSeconds, durationSeconds, members, "", 0);
  }

  /** This job for {@code tenant} at {@code tier}. */
  public GpuJob withTenant(String tenant, int tier) {
    return new GpuJob(name, arrivalSeconds, durationSeconds, members, tenant, tier, minGpus,
        maxGpus);
  }

  /**
   * This job, elastic: it may run on {@code min} to {@code max} whole GPUs, and its duration
   * is at its own GPU count. On g GPUs it progresses at g / gpus of that speed (linear scaling,
   * as elastic data parallelism assumes: TorchElastic, Horovod Elastic; an upper bound where
   * communication grows with g). Its shape on g GPUs is {@link #shape}.
   *
   * @throws IllegalArgumentException unless 1 ≤ min ≤ gpus ≤ max, and every member asks for
   *     whole GPUs only (no CPU, memory or GPU model)
   */
  public GpuJob elastic(int min, int max) {
    int gpus = wholeGpus();
    checkArgument(min >= 1 && min <= gpus && max >= gpus, "job %s: needs 1 <= minGpus <= gpus"
        + " <= maxGpus, got %s <= %s <= %s", name, min, gpus, max);
    for (GpuPod p : members) {
      checkArgument(p.gpus() > 0 && p.gpuMilli() == 1000 && p.cpuMilli() == 0
          && p.memoryMib() == 0 && p.gpuModels().isEmpty(), "job %s: an elastic job's members"
          + " ask for whole GPUs only, got %s", name, p);
    }
    return new GpuJob(name, arrivalSeconds, durationSeconds, members, tenant, priority, min,
        max);
  }

  /** Whether it may run on other GPU counts than its own. */
  public boolean isElastic() {
    return minGpus != maxGpus;
  }

  /** Whole GPUs its members ask for. */
  public int wholeGpus() {
    return whole(members);
  }

  private static int whole(List<GpuPod> members) {
    int g = 0;
    for (GpuPod p : members) {
      g += p.gpuMilli() == 1000 ? p.gpus() : 0;
    }
    return g;
  }

  /**
   * Its members on {@code gpus} whole GPUs: members as wide as its widest (the last takes the
   * rest), named {@code NAME-e0}, {@code NAME-e1}, …; its own members at its own count.
   *
   * @throws IllegalArgumentException if {@code gpus} is outside [minGpus, maxGpus]
   */
  public List<GpuPod> shape(int gpus) {
    checkArgument(gpus >= minGpus && gpus <= maxGpus, "job %s: %s GPUs outside [%s, %s]", name,
        gpus, minGpus, maxGpus);
    if (gpus == wholeGpus()) {
      return members;
    }
    int width = 0;
    for (GpuPod p : members) {
      width = Math.max(width, p.gpus());
    }
    return split(name + "-e", gpus, width, arrivalSeconds, durationSeconds);
  }

  /** {@code gpus} whole GPUs as members of {@code width} (the last takes the rest). */
  private static List<GpuPod> split(String prefix, int gpus, int width, double arrivalSeconds,
      double durationSeconds) {
    List<GpuPod> out = new java.util.ArrayList<>();
    for (int left = gpus, m = 0; left > 0; m++) {
      int g = Math.min(width, left);
      out.add(new GpuPod(prefix + m, 0, 0, g, 1000, java.util.Set.of(), arrivalSeconds,
          durationSeconds));
      left -= g;
    }
    return ImmutableList.copyOf(out);
  }

  /** A single-task job of a trace task: its arrival and duration (at least one second). */
  public static GpuJob of(GpuPod pod) {
    return new GpuJob(pod.name(), pod.arrivalSeconds(), Math.max(1, pod.durationSeconds()),
        List.of(pod));
  }

  /**
   * The job a training plan becomes: the plan's devices as a gang of one member per node (each
   * with at most the cluster's devices per node, whole GPUs of any model, no CPU or memory
   * request), running for the plan's time to train ({@link
   * io.hyperframes.plan.TrainingEstimate#trainingDays()}). Replay it with a trace to see when the
   * run would start and finish in that cluster.
   *
   * @param plan a feasible training plan with a token budget
   * @param name the job's name
   * @param arrivalSeconds its submission time, ≥ 0
   * @throws IllegalArgumentException if the plan is infeasible or has no time to train
   */
  public static GpuJob fromPlan(io.hyperframes.plan.Plan plan, String name,
      double arrivalSeconds) {
    checkArgument(plan != null, "plan: must be given");
    checkArgument(plan.feasible() && plan.best() != null, "plan: infeasible (%s), nothing to"
        + " schedule", plan.reasons());
    var e = plan.best().estimate();
    checkArgument(e.trainingDays() > 0 && Double.isFinite(e.trainingDays()), "plan: no time to"
        + " train (workload.trainingTokens is 0), so no job duration");
    int devices = (int) e.devices();
    int perNode = Math.max(1, Math.min(devices, plan.request().cluster().devicesPerNode()));
    return wholeGpus(name, arrivalSeconds, e.trainingDays() * 86_400, devices, perNode, "", 0);
  }

  /**
   * A gang of whole GPUs: {@code gpus} split into members of {@code gpusPerNode} (the last takes
   * the rest), one per node, named {@code NAME-0}, {@code NAME-1}, …, each asking for no CPU or
   * memory and any GPU model.
   *
   * @throws IllegalArgumentException if {@code gpus} or {@code gpusPerNode} is below 1, or a
   *     job field is invalid
   */
  public static GpuJob wholeGpus(String name, double arrivalSeconds, double durationSeconds,
      int gpus, int gpusPerNode, String tenant, int priority) {
    checkArgument(gpus >= 1 && gpusPerNode >= 1, "job %s: gpus and gpusPerNode must be >= 1,"
        + " got %s and %s", name, gpus, gpusPerNode);
    return new GpuJob(name, arrivalSeconds, durationSeconds, split(name + "-", gpus,
        gpusPerNode, arrivalSeconds, durationSeconds), tenant, priority);
  }

  /** GPU thousandths the job holds while it runs. */
  public long gpuMilli() {
    // A loop, not a stream: the replay's policies ask this at every event (issue 14's speed).
    long m = 0;
    for (int i = 0; i < members.size(); i++) {
      m += members.get(i).totalGpuMilli();
    }
    return m;
  }
}
