package io.hyperframes.schedule;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

/** The time replay the command runs is the replay of the classes behind it. */
class TimeReplayTest {

  @Test
  void aPhillyTraceIsReadAndReplayedAsTheReplayOfItsJobs() {
    List<GpuNode> nodes = GpuNode.uniform(16, 8);
    TimeReplay.Workload w = TimeReplay.read(ScheduleBuilderTest.PHILLY, nodes);
    assertTrue(w.philly());
    List<GpuJob> jobs = Traces.philly(ScheduleBuilderTest.PHILLY, 8).items();
    assertEquals(jobs, w.jobs());
    assertEquals(jobs.stream().mapToInt(j -> j.members().size()).sum(), w.pods().size());
    TimeReplay.Run run = TimeReplay.run(nodes, w.jobs(), List.of(), Placement.bestFit(),
        QueuePolicy.named("backfill", null, false), Replay.Disruptions.NONE, 42,
        ReplayMonitor.NONE);
    Replay.Result direct = Replay.run(nodes, jobs, Placement.bestFit(),
        QueuePolicy.easyBackfill(), Replay.Disruptions.NONE, 42, ReplayMonitor.NONE);
    assertEquals(direct.meanJctSeconds(), run.training().meanJctSeconds(), 0.0);
    assertSame(run.training(), run.cluster());
    double waited = direct.jobs().stream().filter(j -> !Double.isNaN(j.startSeconds()))
        .mapToDouble(Replay.JobRecord::queueingSeconds).average().orElseThrow();
    assertEquals(waited, run.meanQueueingSeconds(), 0.0);
  }

  @Test
  void elasticJobsSpanHalfToTwiceTheirGpusAndAnAddedJobIsRecorded() {
    List<GpuNode> nodes = GpuNode.uniform(16, 8);
    TimeReplay.Workload w = TimeReplay.read(ScheduleBuilderTest.PHILLY, nodes);
    TimeReplay.Workload e = w.elastic();
    for (int i = 0; i < w.jobs().size(); i++) {
      GpuJob rigid = w.jobs().get(i);
      GpuJob elastic = e.jobs().get(i);
      if (elastic.minGpus() != elastic.maxGpus()) {
        assertEquals(Math.max(1, (rigid.wholeGpus() + 1) / 2), elastic.minGpus());
        assertEquals(2 * rigid.wholeGpus(), elastic.maxGpus());
      }
    }
    assertTrue(e.jobs().stream().anyMatch(j -> j.minGpus() < j.maxGpus()));
    GpuJob extra = GpuJob.of(w.pods().get(0));
    TimeReplay.Workload more = w.with(extra);
    assertEquals(w.jobs().size() + 1, more.jobs().size());
    TimeReplay.Run run = TimeReplay.run(nodes, more.jobs(), List.of(), Placement.bestFit(),
        QueuePolicy.fifo(), Replay.Disruptions.NONE, 42, ReplayMonitor.NONE);
    assertSame(extra, run.record(extra).job());
  }

  @Test
  void badNamesAndTracesAreNamed() {
    var q = assertThrows(IllegalArgumentException.class,
        () -> QueuePolicy.named("lifo", null, false));
    assertEquals("queue: expected fifo, sjf, backfill, priority, quotas or elastic, got lifo",
        q.getMessage());
    var r = assertThrows(IllegalArgumentException.class, () -> RoundPolicy.named("srtf"));
    assertTrue(r.getMessage().endsWith("got srtf"), r.getMessage());
    var p = assertThrows(IllegalArgumentException.class, () -> TimeReplay.read(
        ScheduleBuilderTest.POLLUX.resolve("workloads").resolve("workload-6.csv"),
        GpuNode.uniform(2, 8)));
    assertTrue(p.getMessage().contains("Pollux workload"), p.getMessage());
    var n = assertThrows(IllegalArgumentException.class, () -> GpuNode.uniform(2, 65));
    assertEquals("cluster.gpusPerNode: must be in [1, 64], got 65", n.getMessage());
  }

  @Test
  void theAllocationAtAnArrivalPercentFallsBackToItsNeighboursThenTheEnd() {
    ScheduleResult r = new ScheduleResult("bestfit", 42, 3, 3, 0, 8000, 4000, 2000,
        new double[] {Double.NaN, 50, Double.NaN});
    assertEquals(50, r.allocationAtArrivals(1), 0.0);
    assertEquals(50, r.allocationAtArrivals(2), 0.0); // below first
    assertEquals(50, r.allocationAtArrivals(0), 0.0); // then above
    assertEquals(25, r.allocationAtArrivals(7), 0.0); // the end: 2000 of 8000
  }
}
