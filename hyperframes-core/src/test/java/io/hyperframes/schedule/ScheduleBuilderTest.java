package io.hyperframes.schedule;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.hyperframes.HyperFrames;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The fluent entry point runs the same replays as the classes it fronts. */
class ScheduleBuilderTest {
  static final Path POLLUX = Path.of("..", "docs", "validation", "pollux");
  static final Path PHILLY = POLLUX.resolve("philly-head-2000.csv");

  static List<GpuNode> uniform(int count, int gpus) {
    List<GpuNode> out = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      out.add(new GpuNode(String.format("node-%05d", i), 0, 0, gpus, ""));
    }
    return out;
  }

  @Test
  void timeReplayOfAPhillyTraceIsTheReplayOfItsJobs() {
    Replay.Result fluent = HyperFrames.schedule().trace(PHILLY).cluster(16, 8)
        .queue(QueuePolicy.easyBackfill()).replay();
    Replay.Result direct = Replay.run(uniform(16, 8), Traces.philly(PHILLY, 8).items(),
        Placement.bestFit(), QueuePolicy.easyBackfill(), Replay.Disruptions.NONE, 42,
        ReplayMonitor.NONE);
    assertEquals(direct.jobs().size(), fluent.jobs().size());
    assertEquals(direct.meanJctSeconds(), fluent.meanJctSeconds(), 1e-9);
    assertEquals(direct.runs().size(), fluent.runs().size());
  }

  @Test
  void goodputReplayOfWorkloadSixMatchesThePublishedMean() {
    GoodputReplay.Result r = HyperFrames.schedule()
        .trace(POLLUX.resolve("workloads").resolve("workload-6.csv")).cluster(16, 4)
        .applications(POLLUX.resolve("applications.json")).goodput();
    // simulator/README.md of the Pollux artifact: "Average JCT: 3469.69375".
    assertEquals(3469.69375, r.meanJctSeconds(), 0.01);
  }

  @Test
  void colocationThroughTheBuilder() throws Exception {
    ReplicaModel m = ServingReplayTest.llama70bTp4();
    InferenceService s = new InferenceService("chat", m, 1, 4, 300, 0.7, 2, 0.1, "inference",
        1);
    Path conv = ServingReplayTest.AZURE.resolve("AzureLLMInferenceTrace_conv.csv");
    ServingReplay.Colocated c = HyperFrames.schedule().cluster(2, 8).serving(s, conv)
        .colocate();
    assertEquals(0, c.training().jobs().size());
    assertEquals(1, c.services().size());
    assertEquals(19_366, c.services().get(0).finished());
    assertTrue(c.services().get(0).sloAttainment() > 0.99, c.services().get(0).toString());
  }

  @Test
  void optionsAKindDoesNotReadAreNamed() {
    var b = HyperFrames.schedule().trace(POLLUX.resolve("workloads").resolve("workload-6.csv"))
        .cluster(16, 4).applications(POLLUX.resolve("applications.json"))
        .queue(QueuePolicy.sjf());
    var e = assertThrows(IllegalStateException.class, b::goodput);
    assertTrue(e.getMessage().contains("does not read queue"), e.getMessage());
    // Values are checked and files read when the replay runs, as in the other builders.
    var azure = HyperFrames.schedule()
        .trace(ServingReplayTest.AZURE.resolve("AzureLLMInferenceTrace_code.csv")).cluster(2, 8);
    var e2 = assertThrows(IllegalArgumentException.class, azure::replay);
    assertTrue(e2.getMessage().contains("serving"), e2.getMessage());
    var e3 = assertThrows(IllegalStateException.class, () -> HyperFrames.schedule()
        .cluster(4, 8).replay());
    assertTrue(e3.getMessage().contains("jobs: not set"), e3.getMessage());
    var zero = HyperFrames.schedule().cluster(0, 8).trace(PHILLY);
    var e4 = assertThrows(IllegalArgumentException.class, zero::replay);
    assertEquals("cluster.nodes: must be in [1, 1000000], got 0", e4.getMessage());
    var missing = HyperFrames.schedule().trace(PHILLY.resolveSibling("no-such-trace.csv"))
        .cluster(4, 8);
    var e5 = assertThrows(IllegalArgumentException.class, missing::replay);
    assertTrue(e5.getMessage().startsWith("trace: cannot read"), e5.getMessage());
    var e6 = assertThrows(IllegalStateException.class, () -> HyperFrames.schedule()
        .queue(QueuePolicy.sjf()).queue(QueuePolicy.fifo()));
    assertEquals("queue: already set to sjf", e6.getMessage());
  }

  @Test
  void aBuilderIsImmutableAndRunsAgain() {
    var common = HyperFrames.schedule().trace(PHILLY).cluster(16, 8);
    Replay.Result fifo = common.queue(QueuePolicy.fifo()).replay();
    Replay.Result sjf = common.queue(QueuePolicy.sjf()).replay();
    // common was not changed by either branch: it runs with the default queue (FIFO) again.
    Replay.Result again = common.replay();
    assertEquals(fifo.jobs(), again.jobs());
    assertEquals(fifo.jobs().size(), sjf.jobs().size());
  }
}
