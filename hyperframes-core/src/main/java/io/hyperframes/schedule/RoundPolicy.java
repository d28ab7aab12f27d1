package io.hyperframes.schedule;

import java.util.List;
import java.util.Map;

/**
 * A scheduling policy that, at the end of every scheduling interval of a
 * {@link GoodputReplay}, decides which waiting or running job holds which GPUs for the next
 * interval. Implement it to try your own; {@link #tiresias()}, {@link #fifo()} and
 * {@link #elasticFifo()} are built in.
 *
 * <p>A policy may keep state between rounds (queues, attained service); one instance serves one
 * replay, which is why replays take a factory ({@code RoundPolicy::tiresias}).
 */
public interface RoundPolicy {

  /**
   * A job the policy may place: submitted, not yet finished.
   *
   * @param name job name (unique in the replay)
   * @param arrivalSeconds submission time
   * @param gpus GPUs it asks for (a gang: all or none)
   * @param attainedGpuSeconds GPU-seconds it has held so far
   * @param minGpus fewest GPUs it may be given (an elastic job; {@code gpus} for a rigid one)
   * @param maxGpus most GPUs it may be given
   */
  record Demand(String name, double arrivalSeconds, int gpus, double attainedGpuSeconds,
      int minGpus, int maxGpus) {
    /** A rigid job's demand. */
    public Demand(String name, double arrivalSeconds, int gpus, double attainedGpuSeconds) {
      this(name, arrivalSeconds, gpus, attainedGpuSeconds, gpus, gpus);
    }
  }

  /** Short name for reports. */
  String name();

  /**
   * The allocation for the next interval.
   *
   * @param nowSeconds the replay's clock
   * @param jobs the jobs that may be placed, in submission order
   * @param gpusPerNode GPUs on each node, by node index
   * @param previous what each job held during the last interval (node index per GPU; absent
   *     when it held nothing)
   * @return node index per GPU for every job that runs next; a job left out holds nothing (it
   *     waits, or is preempted if it held GPUs); a list equal to the previous one keeps the job
   *     running without a restart, any other list restarts it
   */
  Map<String, List<Integer>> allocate(long nowSeconds, List<Demand> jobs, int[] gpusPerNode,
      Map<String, List<Integer>> previous);

  /**
   * Tiresias's discretised two-dimensional least-attained-service policy (Gu et al., NSDI
   * 2019, §4.1–4.2): two queues; a job starts in the first and moves to the second once its
   * GPUs × executed time reaches 16 GPU-hours; jobs run in queue order whenever their whole
   * gang fits (a job that does not fit is skipped, not waited for), and a running job that no
   * longer fits after the jobs ahead of it is preempted. A new job's GPUs are taken node by
   * node from the node with the most free GPUs. As the Pollux artifact's port
   * ({@code petuum/adaptdl} osdi21-artifact, {@code simulator/tiresias.py}: threshold 3600 × 16,
   * starvation promotion off). An elastic job gets the GPUs it asks for, or the whole cluster
   * if it asks for more and may run on fewer.
   */
  static RoundPolicy tiresias() {
    return new RoundPolicies.Tiresias(3600L * 16);
  }

  /**
   * Tiresias with another demotion threshold, in GPU-seconds ({@code > 0}).
   *
   * @throws IllegalArgumentException if the threshold is not positive
   */
  static RoundPolicy tiresias(long thresholdGpuSeconds) {
    return new RoundPolicies.Tiresias(thresholdGpuSeconds);
  }

  /**
   * First come, first served without preemption or backfilling: a running job keeps its GPUs
   * until it finishes; the oldest waiting job starts as soon as its whole gang fits, and no
   * younger job starts before it. GPUs are taken as by {@link #tiresias()}.
   */
  static RoundPolicy fifo() {
    return new RoundPolicies.StrictFifo();
  }

  /**
   * Elastic first come, first served: waiting jobs start in submission order at their fewest
   * GPUs, shrinking running elastic jobs (the most recently started first, never below their
   * fewest) to make room; GPUs left over then grow running jobs toward their most, oldest first.
   * Every change of a job's GPUs restarts it (the replay's restart delay), so growth and
   * shrinkage have a price. A waiting job that cannot get its fewest GPUs blocks the ones behind
   * it. Rigid jobs (fewest = most) are never resized.
   */
  static RoundPolicy elasticFifo() {
    return new RoundPolicies.ElasticFifo();
  }

  /**
   * A built-in policy by name, a new one each call: {@code tiresias}, {@code fifo} or
   * {@code elastic-fifo}.
   *
   * @throws IllegalArgumentException naming the value for an unknown name
   */
  static RoundPolicy named(String name) {
    return switch (String.valueOf(name)) {
      case "tiresias" -> tiresias();
      case "fifo" -> fifo();
      case "elastic-fifo" -> elasticFifo();
      default -> throw new IllegalArgumentException("policy: mode goodput knows tiresias, fifo"
          + " and elastic-fifo, got " + name);
    };
  }
}
