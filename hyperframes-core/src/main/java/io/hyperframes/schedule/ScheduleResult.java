package io.hyperframes.schedule;

/**
 * What a replay did.
 *
 * @param policy placement policy
 * @param seed seed of the replay (arrival order, inflation draws, tie order, random policies)
 * @param tasks tasks that arrived
 * @param placed tasks placed
 * @param failed tasks that found no node (never retried)
 * @param capacityMilli GPU thousandths of the cluster
 * @param arrivedMilli GPU thousandths the tasks asked for, placed or not
 * @param allocatedMilli GPU thousandths allocated at the end
 * @param allocationByArrival mean allocation (% of capacity) over the tasks whose cumulative
 *     demand rounds to each whole percent of capacity, index = that percent (NaN where none):
 *     the published simulator's "allocation ratio against arrived workload" curve
 */
public record ScheduleResult(String policy, long seed, int tasks, int placed, int failed,
    long capacityMilli, long arrivedMilli, long allocatedMilli, double[] allocationByArrival) {

  /** Allocated GPU over capacity at the end, in [0, 1]. */
  public double allocationRatio() {
    return capacityMilli == 0 ? 0 : (double) allocatedMilli / capacityMilli;
  }

  /** Arrived GPU demand over capacity. */
  public double arrivedRatio() {
    return capacityMilli == 0 ? 0 : (double) arrivedMilli / capacityMilli;
  }

  /**
   * The allocation (% of capacity) when the arrived demand is {@code percent} % of capacity: the
   * {@link #allocationByArrival} curve there, else at a neighbouring percent (below, then
   * above), else the allocation at the end; the figure {@code schedule --inflate} reports.
   */
  public double allocationAtArrivals(int percent) {
    for (int d : new int[] {0, -1, 1}) {
      int i = percent + d;
      if (i >= 0 && i < allocationByArrival.length && !Double.isNaN(allocationByArrival[i])) {
        return allocationByArrival[i];
      }
    }
    return 100 * allocationRatio();
  }

  @Override
  public double[] allocationByArrival() {
    return allocationByArrival.clone();
  }
}
