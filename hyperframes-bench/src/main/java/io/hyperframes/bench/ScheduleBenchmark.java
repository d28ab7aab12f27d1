package io.hyperframes.bench;

import io.hyperframes.schedule.GpuNode;
import io.hyperframes.schedule.GpuPod;
import io.hyperframes.schedule.Placement;
import io.hyperframes.schedule.Schedule;
import io.hyperframes.schedule.ScheduleResult;
import io.hyperframes.schedule.TargetWorkload;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Setup;

/**
 * Task placements per second of a trace replay ({@code io.hyperframes.schedule.Schedule}): a
 * cluster shaped like Alibaba's openb GPU nodes (1 213 nodes: 8-GPU and 2-GPU nodes) and 8 000
 * tasks drawn like its trace (CPU tasks, GPU shares, whole and multi-GPU tasks), every task one
 * event. Each placement filters and scores every node, so the rate falls with the cluster size.
 *
 * <p>Run: {@code java -jar hyperframes-bench/target/benchmarks.jar ScheduleBenchmark -f 1 -wi 2
 * -i 3}
 */
public class ScheduleBenchmark extends OperationsPerSecond {

  static final int TASKS = 8000;

  @Param({"random", "bestfit", "fgd"})
  public String policy;

  private List<GpuNode> nodes;
  private List<GpuPod> pods;
  private Placement placement;
  private long seed;

  @Setup
  public void setUp() {
    SplittableRandom r = new SplittableRandom(2023);
    nodes = new ArrayList<>();
    for (int i = 0; i < 1213; i++) {
      boolean big = i % 2 == 0;
      nodes.add(new GpuNode(String.format("node-%04d", i), big ? 96_000 : 104_000,
          big ? 393_216 : 524_288, big ? 8 : 2, big ? "G2" : "T4"));
    }
    pods = new ArrayList<>();
    for (int i = 0; i < TASKS; i++) {
      int kind = r.nextInt(10);
      int gpus = kind == 0 ? 0 : kind == 9 ? 8 : 1;
      int milli = gpus == 0 ? 0 : kind <= 4 ? 100 * (1 + r.nextInt(9)) : 1000;
      pods.add(new GpuPod(String.format("pod-%05d", i), 2000L * (1 + r.nextInt(8)), 16_384,
          gpus, milli, Set.of(), i, 1));
    }
    placement = Placement.named(policy, TargetWorkload.of(pods));
  }

  /** One replay of the 8 000 tasks; the score is tasks placed or failed per second. */
  @Benchmark
  @OperationsPerInvocation(TASKS)
  public ScheduleResult replay() {
    return Schedule.builder().nodes(nodes).pods(pods).placement(placement).seed(seed++).run();
  }
}
