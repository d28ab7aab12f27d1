package io.hyperframes.bench;

import io.hyperframes.schedule.GpuJob;
import io.hyperframes.schedule.GpuNode;
import io.hyperframes.schedule.GpuPod;
import io.hyperframes.schedule.Placement;
import io.hyperframes.schedule.QueuePolicy;
import io.hyperframes.schedule.Replay;
import io.hyperframes.schedule.ReplayMonitor;
import io.hyperframes.schedule.TargetWorkload;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Setup;

/**
 * Events per second of the time-based replay ({@code io.hyperframes.schedule.Replay}): 20 000
 * jobs shaped like the Philly trace subset of the Pollux artifact (GPU counts 1 / 2 / 4 / 8 / 16
 * / 32 in the shares of {@code simulator/traces/philly.csv}: 93.2 / 2.2 / 2.3 / 2.0 / 0.24 /
 * 0.08 %, multi-node jobs as gangs of 8-GPU members), durations log-uniform in 1 min – 1 day,
 * Poisson arrivals loading a 100-node × 8-GPU cluster to about 70 %, queued strictly (FIFO,
 * SJF) or with EASY backfilling. Every arrival and every finish is one event.
 *
 * <p>Run: {@code java -jar hyperframes-bench/target/benchmarks.jar ReplayBenchmark -f 1 -wi 2
 * -i 3}
 */
public class ReplayBenchmark extends OperationsPerSecond {

  static final int JOBS = 20_000;

  @Param({"random", "bestfit"})
  public String policy;

  @Param({"fifo", "sjf", "backfill"})
  public String queue;

  private List<GpuNode> nodes;
  private List<GpuJob> jobs;
  private Placement placement;
  private long seed;

  @Setup
  public void setUp() {
    nodes = new ArrayList<>();
    for (int i = 0; i < 100; i++) {
      nodes.add(new GpuNode(String.format("node-%03d", i), 0, 0, 8, ""));
    }
    SplittableRandom r = new SplittableRandom(2019);
    int[] widths = {1, 2, 4, 8, 16, 32};
    double[] shares = {0.932, 0.022, 0.023, 0.020, 0.0024, 0.0008};
    double meanDuration = (86_400 - 60) / Math.log(86_400 / 60.0);
    double meanGpus = 0;
    for (int i = 0; i < widths.length; i++) {
      meanGpus += widths[i] * shares[i];
    }
    // Arrival rate for 70 % of 800 GPUs busy: rate x mean GPUs x mean duration = 0.7 x 800.
    double rate = 0.7 * 800 / (meanGpus * meanDuration);
    jobs = new ArrayList<>();
    List<GpuPod> pods = new ArrayList<>();
    double t = 0;
    for (int j = 0; j < JOBS; j++) {
      t += -Math.log(1 - r.nextDouble()) / rate;
      double u = r.nextDouble();
      int k = 0;
      double c = shares[0];
      while (u > c && k < widths.length - 1) {
        c += shares[++k];
      }
      double duration = 60 * Math.exp(r.nextDouble() * Math.log(86_400 / 60.0));
      GpuJob job = GpuJob.wholeGpus("job-" + j, t, duration, widths[k], 8, "", 0);
      pods.addAll(job.members());
      jobs.add(job);
    }
    placement = Placement.named(policy, TargetWorkload.of(pods));
  }

  /** One replay of the 20 000 jobs; the score is events (arrivals and finishes) per second. */
  @Benchmark
  @OperationsPerInvocation(2 * JOBS)
  public Replay.Result replay() {
    QueuePolicy policy = switch (queue) {
      case "sjf" -> QueuePolicy.sjf();
      case "backfill" -> QueuePolicy.easyBackfill();
      default -> QueuePolicy.fifo();
    };
    return Replay.run(nodes, jobs, placement, policy, Replay.Disruptions.NONE, seed++,
        ReplayMonitor.NONE);
  }
}
