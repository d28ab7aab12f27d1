package io.hyperframes.schedule;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.hyperframes.json.Json;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class GoodputReplayTest {
  static final Path POLLUX = Path.of("..", "docs", "validation", "pollux");

  private static int[] cluster() {
    int[] n = new int[16];
    Arrays.fill(n, 4);
    return n;
  }

  @Test
  void delaunayInterpolatesAGridExactlyAndLinearlyInside() {
    List<long[]> pts = new ArrayList<>();
    List<double[]> vals = new ArrayList<>();
    // A degenerate grid (every cell's corners co-spherical) of a linear function.
    for (long x = 0; x < 4; x++) {
      for (long y = 0; y < 3; y++) {
        for (long z = 0; z < 5; z++) {
          pts.add(new long[] {x, y, z * 100});
          vals.add(new double[] {2 * x - y + 0.01 * z * 100, 1});
        }
      }
    }
    Delaunay3 d = new Delaunay3(pts.toArray(long[][]::new), vals.toArray(double[][]::new));
    assertTrue(d.size() >= 3 * 2 * 4 * 5, "tetrahedra: " + d.size());
    SplittableRandom r = new SplittableRandom(1);
    for (int i = 0; i < 500; i++) {
      double x = 3 * r.nextDouble();
      double y = 2 * r.nextDouble();
      double z = 400 * r.nextDouble();
      double[] v = d.at(x, y, z);
      assertNotNull(v, "inside the hull: " + x + "," + y + "," + z);
      assertEquals(2 * x - y + 0.01 * z, v[0], 1e-9);
      assertEquals(1, v[1], 1e-12);
    }
    assertArrayEquals(new double[] {2 * 3 - 2 + 4, 1}, d.at(3, 2, 400), 1e-9);
    assertNull(d.at(3.5, 1, 100));
    assertNull(d.at(-0.001, 1, 100));
  }

  @Test
  void inSphereSignFollowsShewchuk() {
    long[][] pts = {{0, 0, 0}, {4, 0, 0}, {0, 4, 0}, {0, 0, 4}, {1, 1, 1}, {9, 9, 9}};
    Delaunay3 d = new Delaunay3(pts, new double[6][1]);
    // (1, 0, 2, 3) is positively oriented.
    assertTrue(d.orient(1, 0, 2, 3) > 0);
    assertTrue(d.inSphere(1, 0, 2, 3, 4) > 0);
    assertTrue(d.inSphere(1, 0, 2, 3, 5) < 0);
  }

  @Test
  void profilesReadAndInterpolateTheArtifactsTables() {
    Map<String, ApplicationProfile> apps = ApplicationProfile.readAll(
        POLLUX.resolve("applications.json"));
    assertEquals(List.of("bert", "cifar10", "ncf", "imagenet", "deepspeech2", "yolov3"),
        List.copyOf(apps.keySet()));
    ApplicationProfile c = apps.get("cifar10");
    assertEquals(128, c.initBatchSize());
    assertEquals(4096, c.maxBatchSize());
    assertEquals(32, c.minLocalBatch());
    // Measured rows come back exactly (placements.csv line 2).
    assertArrayEquals(new double[] {0.0427886962890625, 0.0004995360016822816},
        c.stepSeconds(new int[] {1}, 32), 1e-15);
    assertEquals(8, apps.get("yolov3").maxLocalBatch());
    // Rotations of a measured placement are the same placement.
    assertArrayEquals(c.stepSeconds(new int[] {1, 2, 4}, 100),
        c.stepSeconds(new int[] {4, 1, 2}, 100), 0);
    // Six nodes: the scalability grid (num_nodes 6, num_replicas 24, local_bsz 32 is a row).
    double[] six = c.stepSeconds(new int[] {4, 4, 4, 4, 4, 4}, 32);
    assertTrue(six[0] > six[1] && six[1] > 0, Arrays.toString(six));
    // Every application covers every placement the workloads can reach at its batch sizes.
    for (ApplicationProfile a : apps.values()) {
      for (int nodes = 1; nodes <= 16; nodes++) {
        int[] pl = new int[nodes];
        Arrays.fill(pl, 4);
        double local = Math.max(a.minLocalBatch(), Math.min(a.maxLocalBatch(),
            a.maxBatchSize() / (4.0 * nodes)));
        double[] t = a.stepSeconds(pl, Math.ceil(local));
        assertTrue(t[0] > 0 && Double.isFinite(t[0]), a.name() + " " + nodes + ": "
            + Arrays.toString(t));
      }
    }
  }

  @Test
  void tiresiasReproducesThePolluxArtifactOnWorkloadSix() {
    Map<String, ApplicationProfile> apps = ApplicationProfile.readAll(
        POLLUX.resolve("applications.json"));
    List<GoodputReplay.Job> jobs = Traces.polluxWorkload(
        POLLUX.resolve("workloads").resolve("workload-6.csv")).items();
    assertEquals(160, jobs.size());
    GoodputReplay.Result r = GoodputReplay.run(cluster(), jobs, apps, RoundPolicy::tiresias,
        60, ReplayMonitor.NONE);
    // simulator/README.md: "Average JCT: 3469.69375" (±5 % acceptance).
    double published = 3469.69375;
    System.out.printf("workload-6 tiresias: mean JCT %.2f s (published %.2f, %+.2f %%)%n",
        r.meanJctSeconds(), published, 100 * (r.meanJctSeconds() / published - 1));
    assertEquals(published, r.meanJctSeconds(), 0.05 * published);
    assertTrue(r.jobs().stream().allMatch(j -> j.finishSeconds() > j.job().arrivalSeconds()));
  }

  @Test
  void everyArtifactWorkloadAgainstItsPublishedSummary() throws Exception {
    Map<String, ApplicationProfile> apps = ApplicationProfile.readAll(
        POLLUX.resolve("applications.json"));
    JsonNode summary = Json.mapper().readTree(POLLUX.resolve("tiresias-1.0-summary.json")
        .toFile());
    for (int w = 1; w <= 8; w++) {
      String name = "workload-" + w;
      List<GoodputReplay.Job> jobs = Traces.polluxWorkload(
          POLLUX.resolve("workloads").resolve(name + ".csv")).items();
      GoodputReplay.Result r = GoodputReplay.run(cluster(), jobs, apps, RoundPolicy::tiresias,
          60, ReplayMonitor.NONE);
      double published = summary.path("avgs").path(name).asDouble();
      System.out.printf("%s tiresias: mean JCT %.1f s (published %.1f, %+.2f %%)%n", name,
          r.meanJctSeconds(), published, 100 * (r.meanJctSeconds() / published - 1));
      assertEquals(published, r.meanJctSeconds(), 0.05 * published, name);
    }
  }

  /** Jobs drawn from the artifact's eight workloads (valid batch and GPU pairs). */
  private static List<GoodputReplay.Job> drawJobs(long seed, int count) {
    List<GoodputReplay.Job> pool = new ArrayList<>();
    for (int w = 1; w <= 8; w++) {
      pool.addAll(Traces.polluxWorkload(POLLUX.resolve("workloads")
          .resolve("workload-" + w + ".csv")).items());
    }
    SplittableRandom r = new SplittableRandom(seed);
    List<GoodputReplay.Job> out = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      GoodputReplay.Job j = pool.get(r.nextInt(pool.size()));
      if (j.application().equals("imagenet")) {
        continue;
      }
      GoodputReplay.Job job = new GoodputReplay.Job("j" + i, r.nextInt(4 * 3600),
          j.application(), j.gpus(), j.batchSize());
      int most = Math.min(2 * j.gpus(), j.batchSize() / profiles().get(j.application())
          .minLocalBatch());
      out.add(r.nextBoolean() && most >= j.gpus() ? job.elastic(Math.max(1, j.gpus() / 2), most)
          : job);
    }
    return out;
  }

  /** Wraps a policy and checks every allocation it makes against the cluster. */
  private static final class Audited implements RoundPolicy {
    final RoundPolicy inner;
    final List<String> violations = new ArrayList<>();

    Audited(RoundPolicy inner) {
      this.inner = inner;
    }

    @Override
    public String name() {
      return inner.name();
    }

    @Override
    public Map<String, List<Integer>> allocate(long now, List<Demand> jobs, int[] gpusPerNode,
        Map<String, List<Integer>> previous) {
      Map<String, List<Integer>> a = inner.allocate(now, jobs, gpusPerNode, previous);
      int[] used = new int[gpusPerNode.length];
      Map<String, Demand> asked = new java.util.HashMap<>();
      jobs.forEach(d -> asked.put(d.name(), d));
      a.forEach((k, v) -> {
        Demand d = asked.get(k);
        if (v.size() < d.minGpus() || v.size() > d.maxGpus()) {
          violations.add(now + ": " + k + " got " + v.size() + " of " + d);
        }
        v.forEach(n -> used[n]++);
      });
      for (int n = 0; n < used.length; n++) {
        if (used[n] > gpusPerNode[n]) {
          violations.add(now + ": node " + n + " holds " + used[n]);
        }
      }
      return a;
    }
  }

  @net.jqwik.api.Property(tries = 25)
  void lawsHoldForEveryPolicy(@net.jqwik.api.ForAll @net.jqwik.api.constraints.LongRange(
      min = 0, max = 1_000_000) long seed, @net.jqwik.api.ForAll
      @net.jqwik.api.constraints.IntRange(min = 2, max = 12) int nodes) {
    Map<String, ApplicationProfile> apps = profiles();
    List<GoodputReplay.Job> jobs = drawJobs(seed, 14);
    net.jqwik.api.Assume.that(!jobs.isEmpty());
    int[] cluster = new int[nodes];
    Arrays.fill(cluster, 4);
    for (String policy : List.of("tiresias", "fifo", "elastic-fifo")) {
      Audited audited = new Audited(policy.equals("fifo") ? RoundPolicy.fifo()
          : policy.equals("tiresias") ? RoundPolicy.tiresias() : RoundPolicy.elasticFifo());
      GoodputReplay.Result r = GoodputReplay.run(cluster, jobs, apps, () -> audited, 60,
          ReplayMonitor.NONE);
      // No GPU over-allocated, every gang whole.
      assertEquals(List.of(), audited.violations, policy);
      // Every job finishes exactly once, or is reported too large for the cluster.
      long tooLarge = jobs.stream().filter(j -> j.minGpus() > 4 * nodes).count();
      assertEquals(tooLarge, r.unschedulable(), policy);
      assertEquals(jobs.size(), r.jobs().size(), policy);
      for (GoodputReplay.JobRecord j : r.jobs()) {
        boolean fits = j.job().minGpus() <= 4 * nodes;
        assertEquals(fits, !Double.isNaN(j.finishSeconds()), policy + " " + j);
        if (fits) {
          assertTrue(j.finishSeconds() > j.startSeconds()
              && j.startSeconds() >= j.job().arrivalSeconds(), policy + " " + j);
          assertTrue(j.gpuSeconds() > 0, policy + " " + j);
        }
      }
      if (policy.equals("fifo")) {
        // Without preemption FIFO never reorders: starts follow submission order.
        double last = Double.NEGATIVE_INFINITY;
        for (GoodputReplay.JobRecord j : r.jobs()) {
          if (!Double.isNaN(j.startSeconds())) {
            assertTrue(j.startSeconds() >= last, "fifo reordered at " + j);
            last = j.startSeconds();
          }
        }
        assertEquals(0, r.preemptions());
      }
      assertTrue(r.utilisation() > 0 && r.utilisation() <= 1, policy + " " + r.utilisation());
    }
  }

  private static Map<String, ApplicationProfile> cached;

  private static synchronized Map<String, ApplicationProfile> profiles() {
    if (cached == null) {
      cached = ApplicationProfile.readAll(POLLUX.resolve("applications.json"));
    }
    return cached;
  }

  @Test
  void theMonitorSeesProgressAndCanCancel() {
    int[] calls = {0};
    assertThrows(java.util.concurrent.CancellationException.class, () -> GoodputReplay.run(
        cluster(), drawJobs(3, 10), profiles(), RoundPolicy::tiresias, 60, new ReplayMonitor() {
          @Override
          public boolean cancelled() {
            return ++calls[0] > 5;
          }
        }));
    assertEquals(6, calls[0]);
    List<Double> seen = new ArrayList<>();
    GoodputReplay.Result r = GoodputReplay.run(cluster(), drawJobs(3, 10), profiles(),
        RoundPolicy::tiresias, 60, new ReplayMonitor() {
          @Override
          public void progress(double fraction) {
            seen.add(fraction);
          }
        });
    assertEquals(1.0, seen.get(seen.size() - 1));
    for (int i = 1; i < seen.size(); i++) {
      assertTrue(seen.get(i) >= seen.get(i - 1), seen.toString());
    }
    // The allocation timeline integrates to the GPU-seconds the jobs held.
    double[][] tl = r.allocatedGpus(50);
    double width = r.makespanSeconds() / 50;
    double area = Arrays.stream(tl[1]).sum() * width;
    double held = r.jobs().stream().mapToDouble(GoodputReplay.JobRecord::gpuSeconds).sum();
    assertEquals(r.utilisation() * 64 * r.makespanSeconds(), area, 1e-6 * area + 64 * 60);
    assertTrue(held <= area + 1e-6, held + " > " + area);
  }

  @Test
  void elasticFifoIsFifoOnRigidJobsAndFasterWhenJobsMayResize() {
    List<GoodputReplay.Job> jobs = Traces.polluxWorkload(POLLUX.resolve("workloads")
        .resolve("workload-6.csv")).items();
    GoodputReplay.Result fifo = GoodputReplay.run(cluster(), jobs, profiles(),
        RoundPolicy::fifo, 60, ReplayMonitor.NONE);
    GoodputReplay.Result rigid = GoodputReplay.run(cluster(), jobs, profiles(),
        RoundPolicy::elasticFifo, 60, ReplayMonitor.NONE);
    assertEquals(fifo.meanJctSeconds(), rigid.meanJctSeconds(), 1e-9);
    List<GoodputReplay.Job> elastic = jobs.stream().map(j -> j.elastic(Math.max(1,
        (j.gpus() + 1) / 2), Math.max(j.gpus(), Math.min(2 * j.gpus(), j.batchSize()
        / profiles().get(j.application()).minLocalBatch())))).toList();
    GoodputReplay.Result grown = GoodputReplay.run(cluster(), elastic, profiles(),
        RoundPolicy::elasticFifo, 60, ReplayMonitor.NONE);
    System.out.printf("workload-6 elastic-fifo: mean JCT %.2f s (rigid %.2f), %d restarts%n",
        grown.meanJctSeconds(), rigid.meanJctSeconds(), grown.restarts());
    assertTrue(grown.meanJctSeconds() < 0.6 * rigid.meanJctSeconds());
    assertTrue(grown.utilisation() > rigid.utilisation());
    // One elastic job alone grows to its most GPUs.
    GoodputReplay.Result alone = GoodputReplay.run(cluster(), List.of(new GoodputReplay.Job(
        "c", 0, "cifar10", 2, 2048).elastic(1, 8)), profiles(), RoundPolicy::elasticFifo, 60,
        ReplayMonitor.NONE);
    assertEquals(8, alone.jobs().get(0).gpuSeconds() / (alone.makespanSeconds() - 60), 0.5);
    var e = assertThrows(IllegalArgumentException.class, () -> GoodputReplay.run(cluster(),
        List.of(new GoodputReplay.Job("c", 0, "cifar10", 2, 256).elastic(1, 16)), profiles(),
        RoundPolicy::elasticFifo, 60, ReplayMonitor.NONE));
    assertTrue(e.getMessage().contains("job c.maxGpus"), e.getMessage());
  }

  @Test
  void badInputNamesTheField() {
    Map<String, ApplicationProfile> apps = ApplicationProfile.readAll(
        POLLUX.resolve("applications.json"));
    List<GoodputReplay.Job> one = List.of(new GoodputReplay.Job("a", 0, "cifar10", 2, 256));
    var e = assertThrows(IllegalArgumentException.class, () -> GoodputReplay.run(
        new int[] {4, 0}, one, apps, RoundPolicy::tiresias, 60, ReplayMonitor.NONE));
    assertTrue(e.getMessage().contains("nodes[1].gpus"), e.getMessage());
    e = assertThrows(IllegalArgumentException.class, () -> GoodputReplay.run(cluster(),
        List.of(new GoodputReplay.Job("a", 0, "resnet", 2, 256)), apps, RoundPolicy::tiresias,
        60, ReplayMonitor.NONE));
    assertTrue(e.getMessage().contains("job a.application"), e.getMessage());
    e = assertThrows(IllegalArgumentException.class, () -> GoodputReplay.run(cluster(),
        List.of(new GoodputReplay.Job("a", 0, "cifar10", 2, 64)), apps, RoundPolicy::tiresias,
        60, ReplayMonitor.NONE));
    assertTrue(e.getMessage().contains("job a.batchSize"), e.getMessage());
    e = assertThrows(IllegalArgumentException.class,
        () -> new GoodputReplay.Job("a", -1, "cifar10", 2, 64));
    assertTrue(e.getMessage().contains("arrivalSeconds"), e.getMessage());
  }
}
