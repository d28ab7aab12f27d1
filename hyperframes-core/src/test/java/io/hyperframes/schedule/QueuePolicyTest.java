package io.hyperframes.schedule;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.hyperframes.schedule.QueuePolicy.Reservation;
import io.hyperframes.schedule.QueuePolicy.RunningJob;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.LongRange;
import org.junit.jupiter.api.Test;

class QueuePolicyTest {

  private static List<GpuNode> nodes(int count, int gpus) {
    List<GpuNode> out = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      out.add(new GpuNode("n" + i, 0, 0, gpus, ""));
    }
    return out;
  }

  private static GpuJob job(String name, double at, int gpus, double seconds) {
    return GpuJob.wholeGpus(name, at, seconds, gpus, gpus, "", 0);
  }

  private static Replay.JobRecord of(Replay.Result r, String name) {
    return r.jobs().stream().filter(j -> j.job().name().equals(name)).findFirst().orElseThrow();
  }

  private static Replay.Result run(List<GpuNode> nodes, List<GpuJob> jobs, QueuePolicy p,
      Replay.Disruptions d) {
    return Replay.run(nodes, jobs, Placement.bestFit(), p, d, 1, ReplayMonitor.NONE);
  }

  @Test
  void easyBackfillingStartsAShortJobAheadOfTheBlockedHeadButNotALongOne() {
    List<GpuJob> jobs = List.of(job("a", 0, 2, 100), job("head", 1, 4, 10),
        job("short", 2, 2, 50), job("long", 3, 2, 200));
    Replay.Result fifo = run(nodes(1, 4), jobs, QueuePolicy.fifo(), Replay.Disruptions.NONE);
    assertEquals(100, of(fifo, "head").startSeconds());
    assertEquals(110, of(fifo, "short").startSeconds());
    Replay.Result easy = run(nodes(1, 4), jobs, QueuePolicy.easyBackfill(),
        Replay.Disruptions.NONE);
    assertEquals(2, of(easy, "short").startSeconds(), "ends at 52, before the reservation");
    assertEquals(100, of(easy, "head").startSeconds(), "the head keeps its reservation");
    assertEquals(110, of(easy, "long").startSeconds(), "would delay the head: not backfilled");
    assertTrue(easy.meanJctSeconds() < fifo.meanJctSeconds());
  }

  /**
   * A policy may stop a job it started in the same call: the job stays queued, counted as
   * preempted once. (The engine once removed it from its started list by position, not by
   * value: with the second job started and stopped, that threw IndexOutOfBoundsException.)
   */
  @Test
  void aJobStartedAndStoppedInOneCallStaysQueued() {
    List<GpuJob> jobs = List.of(job("a", 0, 1, 100), job("b", 0, 1, 100));
    QueuePolicy p = new QueuePolicy() {
      boolean first = true;

      @Override
      public String name() {
        return "start-stop";
      }

      @Override
      public Comparator<GpuJob> order() {
        return ARRIVAL;
      }

      @Override
      public void schedule(Queue q) {
        List<GpuJob> waiting = new ArrayList<>();
        q.waiting().forEach(waiting::add);
        if (first) {
          first = false;
          GpuJob b = waiting.get(1);
          assertTrue(q.tryStart(b));
          q.preempt(b);
          assertTrue(q.tryStart(waiting.get(0)));
          return;
        }
        for (GpuJob j : waiting) {
          q.tryStart(j);
        }
      }
    };
    Replay.Result r = run(nodes(1, 8), jobs, p, Replay.Disruptions.NONE);
    assertEquals(0, of(r, "a").startSeconds());
    assertEquals(1, of(r, "b").preemptions());
    assertEquals(100, of(r, "a").finishSeconds());
    assertEquals(200, of(r, "b").finishSeconds(), "queued until the next event, a's finish");
  }

  @Test
  void theReservationIsTheFirstFinishThatFreesEnough() {
    // 4 GPUs: "a" holds 2 until 100, "b" 1 until 50; 1 is free.
    List<GpuJob> jobs = List.of(job("a", 0, 2, 100), job("b", 0, 1, 50), job("c", 1, 4, 10));
    List<Reservation> seen = new ArrayList<>();
    QueuePolicy probe = new QueuePolicy() {
      @Override
      public String name() {
        return "probe";
      }

      @Override
      public Comparator<GpuJob> order() {
        return ARRIVAL;
      }

      @Override
      public void schedule(Queue q) {
        if (q.now() == 1) {
          seen.add(q.reservation(1000));
          seen.add(q.reservation(2000));
          seen.add(q.reservation(4000));
          seen.add(q.reservation(5000));
          assertThrows(IllegalArgumentException.class, () -> q.reservation(0));
        }
        QueuePolicy.fifo().schedule(q);
      }
    };
    run(nodes(1, 4), jobs, probe, Replay.Disruptions.NONE);
    assertEquals(List.of(new Reservation(50, 1000), new Reservation(50, 0),
        new Reservation(100, 0), Reservation.NEVER), seen);
  }

  @Test
  void aHigherTierPreemptsAndTheVictimResumesAfterItsRestartCost() {
    List<GpuJob> jobs = List.of(job("low", 0, 4, 100).withTenant("batch", 0),
        job("high", 10, 2, 20).withTenant("prod", 1));
    Replay.Result r = run(nodes(1, 4), jobs, QueuePolicy.priority(),
        new Replay.Disruptions(5, Double.POSITIVE_INFINITY, 0, 0));
    assertEquals(10, of(r, "high").startSeconds());
    assertEquals(30, of(r, "high").finishSeconds());
    Replay.JobRecord low = of(r, "low");
    assertEquals(1, low.preemptions());
    // 10 s done before the stop; 90 s left + 5 s restart from 30 s.
    assertEquals(125, low.finishSeconds(), 1e-9);
    assertEquals(1, r.preemptions());
    // The same jobs under FIFO: no preemption, the high tier waits.
    Replay.Result fifo = run(nodes(1, 4), jobs, QueuePolicy.fifo(), Replay.Disruptions.NONE);
    assertEquals(100, of(fifo, "high").startSeconds());
    assertEquals(0, fifo.preemptions());
  }

  /**
   * Preemption picks the node, not a total: node 0 holds one 8-GPU job started first, node 1
   * eight 1-GPU jobs started later. The 8-GPU job of the higher tier stops the one job on node
   * 0, where one victim makes room, not the eight most recently started ones; and a job that
   * fits nowhere even after preempting stops nothing.
   */
  @Test
  void preemptionStopsTheFewestJobsOnTheNodeWhereThatMakesRoom() {
    List<GpuJob> jobs = new ArrayList<>();
    jobs.add(job("wide", 0, 8, 1000));
    for (int k = 0; k < 8; k++) {
      jobs.add(job("narrow-" + k, 1 + k, 1, 1000));
    }
    jobs.add(job("urgent", 20, 8, 50).withTenant("prod", 1));
    Replay.Result r = run(nodes(2, 8), jobs, QueuePolicy.priority(),
        Replay.Disruptions.NONE);
    assertEquals(20, of(r, "urgent").startSeconds());
    assertEquals(1, of(r, "wide").preemptions());
    assertEquals(1, r.preemptions(), "one victim, not eight");
    // Node 0 is full with its own tier; on node 1 stopping the lower tier frees only 4 GPUs:
    // preempting would not help, so nothing is stopped and the urgent job waits.
    Replay.Result stuck = run(nodes(2, 8), List.of(job("prod-a", 0, 8, 100).withTenant("p", 1),
        job("batch", 1, 4, 1000), job("prod-b", 2, 4, 100).withTenant("p", 1),
        job("urgent", 20, 8, 50).withTenant("p", 1)), QueuePolicy.priority(),
        Replay.Disruptions.NONE);
    assertEquals(0, stuck.preemptions());
    assertEquals(100, of(stuck, "urgent").startSeconds(), "starts when prod-a leaves node 0");
  }

  /**
   * One 8-GPU node. Elastic A (4 GPUs, 2 to 8, 100 s of work at 4) and rigid B (4 GPUs, 10 s)
   * start at 0. B leaves at 10: A grows to 8 and runs twice as fast (90 s left at 4 → 45 s).
   * Rigid C (4 GPUs, 30 s) arrives at 20: A shrinks back to 4 (70 s left at 4), C starts. C
   * leaves at 50: A grows again, 40 s left at 4 → 20 s on 8, done at 70. Under FIFO A runs on
   * 4 GPUs throughout and finishes at 100.
   */
  @Test
  void elasticJobsGrowIntoIdleGpusAndShrinkForTheHead() {
    List<GpuJob> jobs = List.of(job("a", 0, 4, 100).elastic(2, 8), job("b", 0, 4, 10),
        job("c", 20, 4, 30));
    Replay.Result r = run(nodes(1, 8), jobs, QueuePolicy.elastic(), Replay.Disruptions.NONE);
    assertEquals(70, of(r, "a").finishSeconds(), 1e-9);
    assertEquals(3, of(r, "a").resizes());
    assertEquals(20, of(r, "c").startSeconds(), 1e-9);
    assertEquals(50, of(r, "c").finishSeconds(), 1e-9);
    // The runs: A on 4, 8, 4, 8 GPUs.
    assertEquals(List.of(4000L, 8000L, 4000L, 8000L), r.runs().stream()
        .filter(x -> x.job() == 0).map(Replay.Result.Run::gpuMilli).toList());
    Replay.Result fifo = run(nodes(1, 8), jobs, QueuePolicy.fifo(), Replay.Disruptions.NONE);
    assertEquals(100, of(fifo, "a").finishSeconds(), 1e-9);
    assertEquals(20, of(fifo, "c").startSeconds(), 1e-9);
    // An elastic job larger than the cluster starts on what its range allows.
    Replay.Result big = run(nodes(1, 8), List.of(job("wide", 0, 8, 100).elastic(4, 8)
        .withTenant("x", 0), job("first", 0, 6, 10)), QueuePolicy.elastic(),
        Replay.Disruptions.NONE);
    assertEquals(0, big.unschedulable());
    var bad = org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class,
        () -> job("x", 0, 4, 1).elastic(5, 8));
    assertTrue(bad.getMessage().contains("minGpus"), bad.getMessage());
  }

  /** With rigid jobs only the elastic policy is FIFO: the Philly excerpt replays identically. */
  @Test
  void elasticWithRigidJobsIsFifo() {
    List<GpuJob> philly = Traces.philly(java.nio.file.Path.of("..", "docs", "validation",
        "pollux", "philly-head-2000.csv"), 8).items();
    Replay.Result e = run(nodes(16, 8), philly, QueuePolicy.elastic(), Replay.Disruptions.NONE);
    Replay.Result f = run(nodes(16, 8), philly, QueuePolicy.fifo(), Replay.Disruptions.NONE);
    for (int i = 0; i < philly.size(); i++) {
      assertEquals(f.jobs().get(i).startSeconds(), e.jobs().get(i).startSeconds(), 1e-9);
      assertEquals(f.jobs().get(i).finishSeconds(), e.jobs().get(i).finishSeconds(), 1e-9);
    }
  }

  /**
   * Laws with elastic jobs: no GPU over-allocated at any decision nor at any time of the runs;
   * every job finishes once or is reported unschedulable; a finished job got all its work
   * (Σ run length × GPUs / own GPUs ≥ duration, restart costs aside).
   */
  @Property(tries = 150)
  void elasticLaws(@ForAll @LongRange(min = 0, max = 1 << 30) long seed,
      @ForAll @IntRange(min = 1, max = 3) int nodeCount) {
    SplittableRandom r = new SplittableRandom(seed);
    List<GpuJob> jobs = new ArrayList<>();
    double t = 0;
    for (int i = 0; i < 25; i++) {
      t += r.nextInt(20);
      int gpus = 1 + r.nextInt(6);
      GpuJob j = GpuJob.wholeGpus("j" + i, t, 1 + r.nextInt(100), gpus, 4, "", 0);
      jobs.add(r.nextBoolean() ? j.elastic(1 + r.nextInt(gpus), gpus + r.nextInt(6)) : j);
    }
    Audited p = new Audited(QueuePolicy.elastic());
    Replay.Result res = Replay.run(nodes(nodeCount, 4), jobs, Placement.bestFit(), p,
        Replay.Disruptions.NONE, seed, ReplayMonitor.NONE);
    assertEquals(List.of(), p.violations);
    double[] work = new double[jobs.size()];
    List<double[]> edges = new ArrayList<>();
    for (Replay.Result.Run run : res.runs()) {
      GpuJob j = res.jobs().get(run.job()).job();
      work[run.job()] += (run.endSeconds() - run.beginSeconds()) * run.gpuMilli()
          / (1000.0 * j.wholeGpus());
      edges.add(new double[] {run.beginSeconds(), run.gpuMilli()});
      edges.add(new double[] {run.endSeconds(), -run.gpuMilli()});
    }
    edges.sort(Comparator.comparingDouble((double[] e) -> e[0]).thenComparingDouble(e -> e[1]));
    double held = 0;
    for (double[] e : edges) {
      held += e[1];
      assertTrue(held <= 4000.0 * nodeCount + 1e-6, "over-allocated at " + e[0]);
    }
    int finished = 0;
    for (int i = 0; i < res.jobs().size(); i++) {
      Replay.JobRecord j = res.jobs().get(i);
      if (!Double.isNaN(j.finishSeconds())) {
        finished++;
        assertTrue(work[i] >= j.job().durationSeconds() - 1e-6, j + " got " + work[i]);
      }
    }
    assertEquals(jobs.size(), finished + res.unschedulable());
  }

  @Test
  void quotasLendIdleGpusAndReclaimThem() {
    GpuJob big = job("big", 0, 4, 100).withTenant("a", 0);
    GpuJob own = job("own", 10, 2, 20).withTenant("b", 0);
    Map<String, Integer> quota = Map.of("a", 2, "b", 2);
    Replay.Result strict = run(nodes(1, 4), List.of(big, own), QueuePolicy.quotas(quota,
        false), Replay.Disruptions.NONE);
    assertEquals(10, of(strict, "own").startSeconds());
    assertTrue(Double.isNaN(of(strict, "big").startSeconds()), "beyond its quota, never lent");
    assertEquals(1, strict.unschedulable());
    Replay.Result lend = run(nodes(1, 4), List.of(big, own), QueuePolicy.quotas(quota, true),
        Replay.Disruptions.NONE);
    assertEquals(0, of(lend, "big").startSeconds(), "borrows the idle GPUs");
    assertEquals(10, of(lend, "own").startSeconds(), "its owner reclaims them");
    assertEquals(1, of(lend, "big").preemptions());
    assertEquals(30 + 90, of(lend, "big").finishSeconds(), 1e-9);
    assertEquals(0, lend.unschedulable());
    assertThrows(IllegalArgumentException.class, () -> QueuePolicy.quotas(Map.of("a", -1),
        true));
  }

  @Test
  void failedNodesStopTheirJobsWhichResumeElsewhere() {
    List<GpuJob> jobs = new ArrayList<>();
    for (int i = 0; i < 40; i++) {
      jobs.add(job("j" + i, 10 * i, 1 + i % 4, 3600));
    }
    Replay.Disruptions d = new Replay.Disruptions(60, 4 * 3600, 600, 0.1);
    Replay.Result r = run(nodes(4, 4), jobs, QueuePolicy.fifo(), d);
    assertTrue(r.failures() > 0, "a 4-hour MTBF over a day of jobs fails some");
    for (Replay.JobRecord j : r.jobs()) {
      assertTrue(j.finishSeconds() - j.startSeconds() >= 3600 - 1e-9, j.toString());
    }
    assertEquals(40, r.jobs().stream().filter(j -> !Double.isNaN(j.finishSeconds())).count());
    Replay.Result calm = run(nodes(4, 4), jobs, QueuePolicy.fifo(), Replay.Disruptions.NONE);
    assertTrue(r.meanJctSeconds() > calm.meanJctSeconds());
    var e = assertThrows(IllegalArgumentException.class, () -> new Replay.Disruptions(0, 1, 0,
        1));
    assertTrue(e.getMessage().contains("jobFailureProbability"), e.getMessage());
  }

  @Test
  void jainsIndexIsOneWhenTenantsAreSlowedAlike() {
    List<GpuJob> jobs = List.of(job("a", 0, 1, 10).withTenant("x", 0),
        job("b", 0, 1, 10).withTenant("y", 0));
    assertEquals(1, run(nodes(1, 2), jobs, QueuePolicy.fifo(), Replay.Disruptions.NONE)
        .jainFairness(), 1e-12);
    // One GPU: y waits 10 s (slowdown 2, rate 0.5) while x runs at once (rate 1): 0.9.
    assertEquals(0.9, run(nodes(1, 1), jobs, QueuePolicy.fifo(), Replay.Disruptions.NONE)
        .jainFairness(), 1e-12);
  }

  @Test
  void finishTimeFairnessComparesWithAnEqualShare() {
    List<GpuJob> jobs = List.of(job("a", 0, 1, 10).withTenant("x", 0),
        job("b", 0, 1, 10).withTenant("y", 0));
    // Two tenants on one GPU: a share is half a GPU, so alone each takes 10 s x 1 / 0.5 = 20 s;
    // b finishes at 20 s: rho = 1; a at 10 s: 0.5.
    Replay.Result r = run(nodes(1, 1), jobs, QueuePolicy.fifo(), Replay.Disruptions.NONE);
    assertEquals(1.0, r.maxFinishTimeFairness(1), 1e-12);
    // Two GPUs: each job's share is one GPU, and both finish at once: rho = 1.
    assertEquals(1.0, run(nodes(1, 2), jobs, QueuePolicy.fifo(), Replay.Disruptions.NONE)
        .maxFinishTimeFairness(2), 1e-12);
    assertThrows(IllegalArgumentException.class, () -> r.maxFinishTimeFairness(0));
  }

  @Test
  void aPolicyCannotStartWhatIsNotWaiting() {
    QueuePolicy twice = new QueuePolicy() {
      @Override
      public String name() {
        return "twice";
      }

      @Override
      public Comparator<GpuJob> order() {
        return ARRIVAL;
      }

      @Override
      public void schedule(Queue q) {
        for (GpuJob j : q.waiting()) {
          q.tryStart(j);
          q.tryStart(j);
        }
      }
    };
    var e = assertThrows(IllegalArgumentException.class, () -> run(nodes(1, 4),
        List.of(job("a", 0, 1, 10)), twice, Replay.Disruptions.NONE));
    assertTrue(e.getMessage().contains("policy twice: job a is not waiting"), e.getMessage());
  }

  /** Checks the cluster at every decision of the wrapped policy. */
  private static final class Audited implements QueuePolicy {
    final QueuePolicy inner;
    final List<String> violations = new ArrayList<>();

    Audited(QueuePolicy inner) {
      this.inner = inner;
    }

    @Override
    public String name() {
      return inner.name();
    }

    @Override
    public Comparator<GpuJob> order() {
      return inner.order();
    }

    @Override
    public boolean growsRunningJobs() {
      return inner.growsRunningJobs();
    }

    @Override
    public void schedule(Queue q) {
      inner.schedule(q);
      long held = q.running().stream().mapToLong(r -> r.job().isElastic() ? 1000L * r.gpus()
          : r.job().gpuMilli()).sum();
      if (q.freeGpuMilli() < 0 || held > q.capacityGpuMilli()) {
        violations.add(q.now() + ": free " + q.freeGpuMilli() + ", held " + held);
      }
      // The engine's kept order gives the reservation a sort of the snapshot would.
      List<RunningJob> byFinish = new ArrayList<>(q.running());
      byFinish.sort(Comparator.comparingDouble(RunningJob::finishSeconds));
      for (long want : new long[] {1000, 3000, 8000, q.capacityGpuMilli() + 1}) {
        Reservation expected = Reservation.NEVER;
        long free = q.freeGpuMilli();
        for (RunningJob r : byFinish) {
          free += r.job().isElastic() ? 1000L * r.gpus() : r.job().gpuMilli();
          if (free >= want) {
            expected = new Reservation(r.finishSeconds(), free - want);
            break;
          }
        }
        Reservation got = q.reservation(want);
        if (!got.equals(expected)) {
          violations.add(q.now() + ": reservation of " + want + " " + got + ", expected "
              + expected);
        }
      }
    }
  }

  @Property(tries = 150)
  void lawsHoldUnderEveryPolicyAndDisruption(@ForAll @LongRange(min = 0, max = 1 << 30) long seed,
      @ForAll @IntRange(min = 1, max = 4) int nodeCount, @ForAll @IntRange(min = 0, max = 4)
      int which, @ForAll boolean disrupt) {
    SplittableRandom r = new SplittableRandom(seed);
    List<GpuJob> jobs = new ArrayList<>();
    double t = 0;
    for (int i = 0; i < 30; i++) {
      t += r.nextInt(20);
      int width = 1 + r.nextInt(2);
      List<GpuPod> members = new ArrayList<>();
      double d = 1 + r.nextInt(100);
      for (int m = 0; m < width; m++) {
        members.add(new GpuPod("j" + i + "m" + m, 0, 0, 1 + r.nextInt(4), 1000, Set.of(), t, d));
      }
      jobs.add(new GpuJob("j" + i, t, d, members, "t" + r.nextInt(3), r.nextInt(3)));
    }
    QueuePolicy inner = switch (which) {
      case 0 -> QueuePolicy.fifo();
      case 1 -> QueuePolicy.sjf();
      case 2 -> QueuePolicy.easyBackfill();
      case 3 -> QueuePolicy.priority();
      default -> QueuePolicy.quotas(Map.of("t0", 4, "t1", 4, "t2", 4), true);
    };
    Audited p = new Audited(inner);
    Replay.Disruptions d = disrupt ? new Replay.Disruptions(3, 200, 30, 0.2)
        : Replay.Disruptions.NONE;
    Replay.Result res = Replay.run(nodes(nodeCount, 4), jobs, Placement.bestFit(), p, d, seed,
        ReplayMonitor.NONE);
    assertEquals(List.of(), p.violations, inner.name());
    int finished = 0;
    for (Replay.JobRecord j : res.jobs()) {
      if (!Double.isNaN(j.finishSeconds())) {
        finished++;
        assertTrue(j.startSeconds() >= j.job().arrivalSeconds(), j.toString());
        // It ran at least its whole duration between its first start and its finish.
        assertTrue(j.finishSeconds() - j.startSeconds() >= j.job().durationSeconds() - 1e-9,
            j.toString());
      } else {
        assertTrue(Double.isNaN(j.startSeconds()), "started but never finished: " + j);
      }
    }
    assertEquals(jobs.size(), finished + res.unschedulable(), inner.name());
    assertTrue(res.utilisation() >= 0 && res.utilisation() <= 1);
    if (which <= 2) {
      assertEquals(0, res.preemptions(), "no preemption without a preempting policy");
    }
    if (which == 0 && !disrupt) {
      double last = Double.NEGATIVE_INFINITY;
      for (Replay.JobRecord j : res.jobs()) {
        if (!Double.isNaN(j.startSeconds())) {
          assertTrue(j.startSeconds() >= last, "FIFO reordered at " + j);
          last = j.startSeconds();
        }
      }
    }
  }
}
