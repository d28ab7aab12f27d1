package io.hyperframes.schedule;

import static com.google.common.base.Preconditions.checkArgument;

import com.google.common.math.Quantiles;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.LongConsumer;

/**
 * The allocation replay of {@code hyperframes schedule} (its default mode) over a range of seeds,
 * for Java callers too: the openb task list placed on its node list by one placement policy with
 * demand inflated to a share of GPU capacity, once per seed, and the GPU allocation ratio each
 * run reached when the arrived demand crossed a given share (Weng et al., ATC 2023, Figure 9's
 * x-axis; docs/scheduling.md).
 *
 * @param policy the placement policy's name
 * @param column the arrived-demand share, in percent of GPU capacity, the ratio is read at
 * @param runs one run per seed, in seed order
 */
public record AllocationSweep(String policy, int column, List<ScheduleResult> runs) {
  public AllocationSweep {
    runs = List.copyOf(runs);
    checkArgument(!runs.isEmpty(), "runs: at least one");
  }

  /**
   * Replays {@code pods} on {@code nodes} under {@code placement} for each seed in
   * [{@code firstSeed}, {@code lastSeed}], telling {@code onSeed} each seed done.
   *
   * @throws IllegalArgumentException on an empty or reversed seed range, an inflation outside
   *     the builder's range, or missing arguments
   */
  public static AllocationSweep run(List<GpuNode> nodes, List<GpuPod> pods, Placement placement,
      double inflate, long firstSeed, long lastSeed, LongConsumer onSeed) {
    checkArgument(placement != null, "placement: must be given");
    checkArgument(firstSeed <= lastSeed, "seeds: first %s after last %s", firstSeed, lastSeed);
    checkArgument(onSeed != null, "onSeed: must be given");
    List<ScheduleResult> runs = new ArrayList<>();
    for (long s = firstSeed; s <= lastSeed; s++) {
      runs.add(Schedule.builder().nodes(nodes).pods(pods).placement(placement).inflate(inflate)
          .seed(s).run());
      onSeed.accept(s);
    }
    return new AllocationSweep(placement.name(), columnOf(inflate), runs);
  }

  /** The share, in percent, a sweep inflated by {@code inflate} is read at. */
  public static int columnOf(double inflate) {
    return (int) Math.round(100 * inflate);
  }

  /** Each run's allocation ratio at {@link #column()}, in percent. */
  public double[] allocationAtArrivals() {
    return runs.stream().mapToDouble(r -> r.allocationAtArrivals(column)).toArray();
  }

  /** The mean over seeds of the allocation ratio at {@link #column()}, in [0, 1]. */
  public double meanAllocationRatio() {
    return Arrays.stream(allocationAtArrivals()).average().orElse(Double.NaN) / 100;
  }

  /** The median over seeds of the same (Guava's, the mean of the middle two for an even count). */
  public double medianAllocationRatio() {
    return Quantiles.median().compute(allocationAtArrivals()) / 100;
  }

  /** The mean over seeds of the tasks that could not be placed. */
  public double failedMean() {
    return runs.stream().mapToInt(ScheduleResult::failed).average().orElse(0);
  }
}
