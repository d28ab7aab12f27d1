package io.hyperframes.schedule;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import org.junit.jupiter.api.Test;

class ReplayTest {

  private static GpuPod task(String name, long cpu, int gpus, int milli) {
    return new GpuPod(name, cpu, 1024, gpus, milli, Set.of(), 0, 1);
  }

  static List<GpuJob> jobs(SplittableRandom r, int count) {
    List<GpuJob> out = new ArrayList<>();
    double t = 0;
    for (int i = 0; i < count; i++) {
      t += r.nextInt(5);
      int width = 1 + r.nextInt(3);
      int kind = r.nextInt(3);
      List<GpuPod> members = new ArrayList<>();
      for (int m = 0; m < width; m++) {
        members.add(kind == 0 ? task("j" + i + "m" + m, 1000, 1, 100 + 100 * r.nextInt(9))
            : task("j" + i + "m" + m, 1000, 1 << r.nextInt(4), 1000));
      }
      out.add(new GpuJob(String.format("j%04d", i), t, 1 + r.nextInt(50), members));
    }
    return out;
  }

  /**
   * Laws: every job that fits the empty cluster finishes exactly once, after running its whole
   * duration; everything is given back at the end; under FIFO no job starts before one that
   * arrived earlier; no job starts before it arrives.
   */
  @Property(tries = 200)
  void jobsFinishOnceAndFifoNeverReorders(@ForAll @IntRange(min = 1, max = 6) int nodes,
      @ForAll @IntRange(min = 1, max = 60) int count, @ForAll boolean sjf,
      @ForAll @IntRange(min = 0, max = 1) int policy, @ForAll long seed) {
    SplittableRandom r = new SplittableRandom(seed);
    List<GpuNode> cluster = new ArrayList<>();
    for (int i = 0; i < nodes; i++) {
      cluster.add(new GpuNode("n" + i, 64_000, 262_144, 1 << r.nextInt(4), "T4"));
    }
    List<GpuJob> jobs = jobs(r, count);
    Placement p = policy == 0 ? Placement.bestFit() : Placement.random();
    Replay.Result res = Replay.run(cluster, jobs, p, sjf ? Replay.Order.SJF : Replay.Order.FIFO,
        seed);
    assertEquals(count, res.jobs().size());
    int finished = 0;
    double lastStart = -1;
    for (Replay.JobRecord j : res.jobs()) {
      if (Double.isNaN(j.startSeconds())) {
        assertTrue(Double.isNaN(j.finishSeconds()));
        continue;
      }
      finished++;
      assertTrue(j.startSeconds() >= j.job().arrivalSeconds(), "starts after it arrives");
      assertEquals(j.job().durationSeconds(), j.finishSeconds() - j.startSeconds(), 1e-9);
      if (!sjf) {
        assertTrue(j.startSeconds() >= lastStart, "FIFO never reorders: " + j);
        lastStart = j.startSeconds();
      }
    }
    assertEquals(count - res.unschedulable(), finished, "every schedulable job finishes");
    assertTrue(res.utilisation() >= 0 && res.utilisation() <= 1 + 1e-9, "utilisation");
  }

  @Test
  void aGangWaitsUntilAllItsMembersFit() {
    List<GpuNode> cluster = List.of(new GpuNode("a", 64_000, 262_144, 2, "T4"),
        new GpuNode("b", 64_000, 262_144, 2, "T4"));
    GpuJob first = new GpuJob("first", 0, 10, List.of(task("f", 1000, 2, 1000)));
    // Needs 3 whole GPUs, in two members: only 2 are free until "first" ends at t = 10.
    GpuJob gang = new GpuJob("gang", 1, 5, List.of(task("g0", 1000, 2, 1000),
        task("g1", 1000, 1, 1000)));
    GpuJob small = new GpuJob("small", 2, 1, List.of(task("s", 1000, 1, 1000)));
    Replay.Result fifo = Replay.run(cluster, List.of(first, gang, small), Placement.bestFit(),
        Replay.Order.FIFO, 1);
    assertEquals(10.0, fifo.jobs().get(1).startSeconds(), "the gang starts whole, at t = 10");
    assertEquals(10.0, fifo.jobs().get(2).startSeconds(), "FIFO: small waits behind the gang");
    Replay.Result sjf = Replay.run(cluster, List.of(first, gang, small), Placement.bestFit(),
        Replay.Order.SJF, 1);
    assertEquals(10.0, sjf.jobs().get(1).startSeconds());
    // SJF only reorders the queue: the gang is already its head when small arrives at t = 2,
    // small is shorter and goes first at t = 2 (a GPU is free).
    assertEquals(2.0, sjf.jobs().get(2).startSeconds());
    GpuJob huge = new GpuJob("huge", 0, 1, List.of(task("h", 1000, 8, 1000)));
    assertEquals(1, Replay.run(cluster, List.of(huge), Placement.bestFit(), Replay.Order.FIFO, 1)
        .unschedulable());
  }

  @Test
  void phillyExcerptReadsAsGangsOfWholeGpus() throws Exception {
    java.nio.file.Path file = java.nio.file.Path.of("..", "docs", "validation", "pollux",
        "philly-head-2000.csv");
    Traces.Read<GpuJob> read = Traces.philly(file, 8);
    assertEquals(2000, read.items().size());
    assertEquals(0, read.items().stream().mapToDouble(GpuJob::arrivalSeconds).min()
        .getAsDouble());
    // Row 1 (line 2): 2017-10-09 07:01:55, 66 s, 1 GPU.
    GpuJob first = read.items().get(0);
    assertEquals("philly-2", first.name());
    assertEquals(66, first.durationSeconds());
    assertEquals(1, first.members().size());
    for (GpuJob j : read.items()) {
      int gpus = j.members().stream().mapToInt(GpuPod::gpus).sum();
      assertTrue(j.members().stream().allMatch(m -> m.gpus() >= 1 && m.gpus() <= 8
          && m.gpuMilli() == 1000), j.name());
      assertEquals((gpus + 7) / 8, j.members().size(), j.name());
    }
    List<GpuNode> nodes = new ArrayList<>();
    for (int i = 0; i < 16; i++) {
      nodes.add(new GpuNode("n" + i, 0, 0, 8, ""));
    }
    Replay.Result r = Replay.run(nodes, read.items(), Placement.bestFit(), Replay.Order.FIFO,
        1);
    assertEquals(2000, r.jobs().stream().filter(j -> !Double.isNaN(j.finishSeconds()))
        .count() + r.unschedulable());
    java.nio.file.Path bad = java.nio.file.Files.createTempFile("philly", ".csv");
    java.nio.file.Files.writeString(bad, "timestamp,duration,num_gpus,gpu_time,cluster\n"
        + "2017-10-09 07:01:55,66.0,1,66.0,a\n2017-10-09T07:01:55,66.0,1,66.0,a\n");
    var e = org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class,
        () -> Traces.philly(bad, 8));
    assertTrue(e.getMessage().contains(":3: column timestamp (1)"), e.getMessage());
    java.nio.file.Files.delete(bad);
  }

  @Test
  void aPlanBecomesAGangThatRunsForItsTimeToTrain() {
    io.hyperframes.plan.Plan plan = io.hyperframes.HyperFrames.plan().model("llama2-13b")
        .accelerator("a100-sxm-80gb").devices(16)
        .training(t -> t.precision("bf16-mixed").globalBatchSize(512).tokens(1e10)).run();
    assertTrue(plan.feasible(), plan.reasons().toString());
    GpuJob job = GpuJob.fromPlan(plan, "llm", 100);
    var e = plan.best().estimate();
    assertEquals(e.trainingDays() * 86_400, job.durationSeconds(), 1e-6);
    assertEquals(e.devices() * 1000, job.gpuMilli());
    int perNode = plan.request().cluster().devicesPerNode();
    assertEquals((e.devices() + perNode - 1) / perNode, job.members().size());
    assertTrue(job.members().stream().allMatch(m -> m.gpus() <= perNode));
    // On a cluster of exactly its size, behind a job holding one node, it starts when that ends.
    List<GpuNode> nodes = new ArrayList<>();
    for (int i = 0; i < job.members().size(); i++) {
      nodes.add(new GpuNode("n" + i, 0, 0, perNode, ""));
    }
    GpuJob blocker = new GpuJob("b", 0, 500, List.of(new GpuPod("b-0", 0, 0, perNode, 1000,
        Set.of(), 0, 500)));
    Replay.Result r = Replay.run(nodes, List.of(blocker, job), Placement.bestFit(),
        Replay.Order.FIFO, 1);
    Replay.JobRecord rec = r.jobs().get(1);
    assertEquals("llm", rec.job().name());
    assertEquals(500, rec.startSeconds());
    assertEquals(500 + job.durationSeconds(), rec.finishSeconds(), 1e-6);
    var bad = org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class,
        () -> GpuJob.fromPlan(io.hyperframes.HyperFrames.plan().model("llama2-13b")
            .accelerator("a100-sxm-80gb").devices(8)
            .training(t -> t.precision("bf16-mixed").globalBatchSize(512)).run(), "x", 0));
    assertTrue(bad.getMessage().startsWith("plan:"), bad.getMessage());
  }

  /**
   * One 8-GPU node; an 8-GPU job and a 1-GPU job arrive at 0 and run 10 s each, one after the
   * other. While the small one runs, the 7 idle GPUs cannot take the 8-GPU type (half of the
   * task mix): 3.5 GPUs fragmented for 10 of 20 s, 3.5 × 10 / (8 × 20) of the cluster.
   */
  @Test
  void fragmentationCountsIdleGpusTheTaskMixCannotUse() {
    List<GpuNode> one = List.of(new GpuNode("n", 0, 0, 8, ""));
    List<GpuJob> jobs = List.of(GpuJob.wholeGpus("small", 0, 10, 1, 8, "", 0),
        GpuJob.wholeGpus("large", 0, 10, 8, 8, "", 0));
    Replay.Result r = Replay.run(one, jobs, Placement.bestFit(), Replay.Order.FIFO, 1);
    assertEquals(20, r.makespanSeconds(), 1e-9);
    assertEquals(3.5 * 10 / (8 * 20), r.fragmentation().meanShare(), 1e-12);
    double[][] f = r.fragmentedGpus(2);
    // FIFO breaks the tie by name: the large job runs first, then the small one alone.
    assertEquals(0, f[1][0], 1e-12);
    assertEquals(3.5, f[1][1], 1e-12);
  }

  /** Law: fragmented GPUs are idle GPUs; the mean share lies in [0, 1]. */
  @Property(tries = 100)
  void fragmentedGpusAreIdleGpus(@ForAll @IntRange(min = 1, max = 5) int nodes,
      @ForAll @IntRange(min = 1, max = 40) int count, @ForAll long seed) {
    SplittableRandom r = new SplittableRandom(seed);
    List<GpuNode> cluster = new ArrayList<>();
    double capacity = 0;
    for (int i = 0; i < nodes; i++) {
      cluster.add(new GpuNode("n" + i, 64_000, 262_144, 8, "T4"));
      capacity += 8;
    }
    Replay.Result res = Replay.run(cluster, jobs(r, count), Placement.bestFit(),
        QueuePolicy.easyBackfill(), Replay.Disruptions.NONE, seed, ReplayMonitor.NONE);
    double share = res.fragmentation().meanShare();
    assertTrue(share >= 0 && share <= 1, "share " + share);
    double[][] f = res.fragmentedGpus(25);
    double[][] a = res.allocatedGpus(25);
    for (int b = 0; b < f[1].length; b++) {
      assertTrue(f[1][b] >= -1e-9 && f[1][b] <= capacity - a[1][b] + 1e-9,
          "bin " + b + ": " + f[1][b] + " fragmented, " + a[1][b] + " allocated of "
              + capacity + "; " + java.util.Arrays.deepToString(f) + " "
              + java.util.Arrays.deepToString(a));
    }
  }

  /**
   * Law of the gang pre-check: when it says a job cannot fit, no assignment of its members to
   * nodes fits (brute force over every assignment), so skipping the placement loses nothing.
   */
  @Property(tries = 300)
  void theGangPreCheckNeverRejectsAJobThatFits(@ForAll @IntRange(min = 1, max = 4) int nodes,
      @ForAll @IntRange(min = 1, max = 3) int members, @ForAll long seed) {
    SplittableRandom r = new SplittableRandom(seed);
    List<GpuNode> list = new ArrayList<>();
    for (int i = 0; i < nodes; i++) {
      list.add(new GpuNode("n" + i, 0, 0, 1 + r.nextInt(8), ""));
    }
    ClusterState state = new ClusterState(list);
    for (int i = 0; i < nodes; i++) {
      int used = r.nextInt(list.get(i).gpus() + 1);
      if (used > 0) {
        state.place(i, new GpuPod("u" + i, 0, 0, used, 1000, Set.of(), 0, 1), -1);
      }
      if (r.nextInt(5) == 0) {
        state.setDown(i, true);
      }
    }
    List<GpuPod> pods = new ArrayList<>();
    for (int m = 0; m < members; m++) {
      pods.add(new GpuPod("m" + m, 0, 0, 1 + r.nextInt(8), 1000, Set.of(), 0, 1));
    }
    GpuJob job = new GpuJob("j", 0, 1, pods);
    if (!state.mayFit(job)) {
      assertTrue(!anyAssignmentFits(state, pods, 0), "pre-check rejected a job that fits");
    }
  }

  /**
   * Law of the whole-GPU index the placement walks: after any sequence of placements, releases,
   * failures and repairs, a node is in {@code atLeast[s]} exactly when it is healthy with at
   * least s fully free GPUs, so the placement sees the feasible nodes a scan of every node sees.
   */
  @Property(tries = 300)
  void theWholeGpuIndexFollowsEveryChange(@ForAll @IntRange(min = 1, max = 70) int nodes,
      @ForAll @IntRange(min = 1, max = 60) int steps, @ForAll long seed) {
    SplittableRandom r = new SplittableRandom(seed);
    List<GpuNode> list = new ArrayList<>();
    for (int i = 0; i < nodes; i++) {
      list.add(new GpuNode("n" + i, 0, 0, r.nextInt(9), ""));
    }
    ClusterState state = new ClusterState(list);
    List<Object[]> held = new ArrayList<>();
    for (int step = 0; step < steps; step++) {
      int n = r.nextInt(nodes);
      int op = r.nextInt(4);
      if (op == 0 && !held.isEmpty()) {
        Object[] h = held.remove(r.nextInt(held.size()));
        state.release((Integer) h[0], (GpuPod) h[1], (int[]) h[2]);
      } else if (op == 1) {
        state.setDown(n, !state.down[n]);
      } else if (state.wholeFree[n] > 0 && !state.down[n]) {
        GpuPod p = new GpuPod("p" + step, 0, 0, 1 + r.nextInt(state.wholeFree[n]), 1000,
            Set.of(), 0, 1);
        held.add(new Object[] {n, p, state.place(n, p, -1)});
      }
      for (int s = 1; s < state.atLeast.length; s++) {
        for (int i = 0; i < nodes; i++) {
          boolean in = (state.atLeast[s][i >>> 6] & (1L << i)) != 0;
          assertEquals(!state.down[i] && state.wholeFree[i] >= s, in,
              "node " + i + " at s=" + s + " after step " + step);
        }
      }
    }
  }

  /**
   * Law behind the replay's empty-cluster shortcut: for members that all ask for the same number
   * of whole GPUs and nothing else, the pre-check is exact on an empty cluster.
   */
  @Property(tries = 300)
  void thePreCheckIsExactForEqualMembersOnAnEmptyCluster(
      @ForAll @IntRange(min = 1, max = 4) int nodes, @ForAll @IntRange(min = 1, max = 4)
      int members, @ForAll @IntRange(min = 1, max = 9) int width, @ForAll long seed) {
    SplittableRandom r = new SplittableRandom(seed);
    List<GpuNode> list = new ArrayList<>();
    for (int i = 0; i < nodes; i++) {
      list.add(new GpuNode("n" + i, 0, 0, r.nextInt(9), ""));
    }
    ClusterState state = new ClusterState(list);
    List<GpuPod> pods = new ArrayList<>();
    for (int m = 0; m < members; m++) {
      pods.add(new GpuPod("m" + m, 0, 0, width, 1000, Set.of(), 0, 1));
    }
    assertEquals(anyAssignmentFits(state, pods, 0), state.mayFit(pods));
  }

  private static boolean anyAssignmentFits(ClusterState state, List<GpuPod> pods, int m) {
    if (m == pods.size()) {
      return true;
    }
    for (int n = 0; n < state.nodes.length; n++) {
      if (state.fits(n, pods.get(m))) {
        int[] taken = state.place(n, pods.get(m), -1);
        boolean ok = anyAssignmentFits(state, pods, m + 1);
        state.release(n, pods.get(m), taken);
        if (ok) {
          return true;
        }
      }
    }
    return false;
  }
}
