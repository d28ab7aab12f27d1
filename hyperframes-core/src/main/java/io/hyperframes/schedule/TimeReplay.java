package io.hyperframes.schedule;

import static com.google.common.base.Preconditions.checkArgument;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The time replay of {@code hyperframes schedule --mode time}, for Java callers too
 * (docs/scheduling.md): the jobs of a trace at their trace times, made elastic and joined by a
 * plan's job when asked, replayed on a cluster under a placement policy and a queue policy,
 * beside inference services when there are any. The command parses its options into these calls
 * and prints what they return.
 */
public final class TimeReplay {
  private TimeReplay() {}

  /**
   * The jobs of a trace and the tasks they are made of.
   *
   * @param jobs the jobs, in trace order (a plan's job last, when added)
   * @param pods the tasks of the trace's jobs (a placement policy's target workload)
   * @param philly whether the trace is a Philly job list (else an openb pod list)
   */
  public record Workload(List<GpuJob> jobs, List<GpuPod> pods, boolean philly) {
    public Workload {
      jobs = List.copyOf(jobs);
      pods = List.copyOf(pods);
    }

    /**
     * Whole-GPU jobs (every task whole GPUs, no CPU, memory or GPU model asked) made elastic
     * over half to twice their GPUs; the others stay rigid.
     */
    public Workload elastic() {
      return new Workload(jobs.stream().map(j -> j.members().stream().allMatch(p -> p.gpus() > 0
          && p.gpuMilli() == 1000 && p.cpuMilli() == 0 && p.memoryMib() == 0
          && p.gpuModels().isEmpty()) ? j.elastic(Math.max(1, (j.wholeGpus() + 1) / 2),
          2 * j.wholeGpus()) : j).toList(), pods, philly);
    }

    /** These jobs with {@code job} last (a plan's: {@link GpuJob#fromPlan}). */
    public Workload with(GpuJob job) {
      checkArgument(job != null, "job: must be given");
      List<GpuJob> all = new ArrayList<>(jobs);
      all.add(job);
      return new Workload(all, pods, philly);
    }
  }

  /**
   * The jobs of a trace for {@code nodes}: a Philly job list ({@link Traces#philly}, split by
   * the largest GPU count of a node) or an openb pod list, each task a job of its own.
   *
   * @throws IllegalArgumentException naming {@code trace} when the file cannot be read or is
   *     neither, or {@code nodes} when no node has a GPU for a Philly trace
   */
  public static Workload read(Path trace, List<GpuNode> nodes) {
    checkArgument(trace != null, "trace: must be given");
    checkArgument(nodes != null && !nodes.isEmpty(), "nodes: at least one node");
    Traces.Kind kind = Traces.kind(trace);
    checkArgument(kind != Traces.Kind.POLLUX, "trace: %s is a Pollux workload, replayed by"
        + " goodput (GoodputReplay), not in time", trace);
    if (kind == Traces.Kind.PHILLY) {
      int widest = nodes.stream().mapToInt(GpuNode::gpus).max().orElse(0);
      checkArgument(widest > 0, "nodes: no node has a GPU");
      List<GpuJob> jobs = Traces.philly(trace, widest).items();
      return new Workload(jobs, jobs.stream().flatMap(j -> j.members().stream()).toList(), true);
    }
    List<GpuPod> pods = Traces.openbPods(trace).items();
    return new Workload(pods.stream().map(GpuJob::of).toList(), pods, false);
  }

  /**
   * One replay: the training jobs' result, the whole cluster's (with the services' replicas;
   * the same as the training one without services) and each service's.
   */
  public record Run(Replay.Result training, Replay.Result cluster,
      List<ServingReplay.Result> services) {
    public Run {
      services = List.copyOf(services);
    }

    /** Mean time the started jobs waited in the queue, in seconds (NaN when none started). */
    public double meanQueueingSeconds() {
      return training.jobs().stream().filter(j -> !Double.isNaN(j.startSeconds()))
          .mapToDouble(Replay.JobRecord::queueingSeconds).average().orElse(Double.NaN);
    }

    /** The record of {@code job} (a plan's), which must be one of the replayed jobs. */
    public Replay.JobRecord record(GpuJob job) {
      return training.jobs().stream().filter(j -> j.job() == job).findFirst()
          .orElseThrow(() -> new IllegalArgumentException("job: " + (job == null ? null
              : job.name()) + " is not a job of this replay"));
    }
  }

  /**
   * Replays {@code jobs} on {@code nodes}, with {@code services} beside them when there are any
   * ({@link ServingReplay#colocate}), else alone ({@link Replay#run}).
   */
  public static Run run(List<GpuNode> nodes, List<GpuJob> jobs,
      List<ServingReplay.Load> services, Placement placement, QueuePolicy queue,
      Replay.Disruptions disruptions, long seed, ReplayMonitor monitor) {
    checkArgument(services != null, "services: must be given (empty for none)");
    if (services.isEmpty()) {
      Replay.Result r = Replay.run(nodes, jobs, placement, queue, disruptions, seed, monitor);
      return new Run(r, r, List.of());
    }
    ServingReplay.Colocated c = ServingReplay.colocate(nodes, jobs, services, placement, queue,
        disruptions, seed, monitor);
    return new Run(c.training(), c.cluster(), c.services());
  }
}
