package io.hyperframes.schedule;

import java.util.List;

/**
 * A run of a job in a time replay: from begin to end (its finish, or its failure when
 * {@code fails}), its members placed on {@code nodes} at {@code gpus}.
 *
 * @param job index of the job in the replay's arrival order
 * @param speed progress per second of running: an elastic job's GPUs over its own count, else 1
 * @param expectedFinish when it would finish if nothing stopped it
 * @param milli GPU thousandths it holds
 * @param slot its index in {@link RunningJobs} (one mutable cell; -1 when not running)
 */
record JobRun(int job, double begin, double end, boolean fails, int[] nodes, int[][] gpus,
    List<GpuPod> pods, double speed, double expectedFinish, long milli, int[] slot) {
  JobRun(int job, double begin, double end, boolean fails, int[] nodes, int[][] gpus,
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

  /** Whether one of its members is on {@code node}. */
  boolean on(int node) {
    for (int n : nodes) {
      if (n == node) {
        return true;
      }
    }
    return false;
  }

  /** GPUs asked for by {@code pods}, whole or shared alike. */
  static int width(List<GpuPod> pods) {
    int g = 0;
    for (GpuPod p : pods) {
      g += p.gpus();
    }
    return g;
  }
}
