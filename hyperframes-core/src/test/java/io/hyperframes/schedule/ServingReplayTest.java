package io.hyperframes.schedule;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.hyperframes.catalog.Catalog;
import io.hyperframes.inference.Serving;
import io.hyperframes.inference.ServingLoad;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import org.junit.jupiter.api.Test;

class ServingReplayTest {
  static final Path AZURE = Path.of("..", "docs", "validation", "azure-llm");

  static ReplicaModel llama70bTp4() throws IOException {
    String json = Files.readString(Path.of("..", "examples",
        "serve-llama2-70b-h100-tp4-fp8.json"));
    return ReplicaModel.fromServing(Serving.parse(json, Catalog.builtIn()));
  }

  /** Row counts and first and last rows as the dataset's own notebook prints them. */
  @Test
  void readsBothAzureTracesAsPublished() {
    var conv = Traces.azureLlm(AZURE.resolve("AzureLLMInferenceTrace_conv.csv"));
    assertEquals(19_366, conv.items().size());
    assertEquals(new LlmRequest(0, 374, 44), conv.items().get(0));
    LlmRequest last = conv.items().get(19_365);
    // 19:14:08.402527 - 18:15:46.680590
    assertEquals(3501.721937, last.arrivalSeconds(), 1e-6);
    assertEquals(197, last.promptTokens());
    assertEquals(183, last.outputTokens());
    var code = Traces.azureLlm(AZURE.resolve("AzureLLMInferenceTrace_code.csv"));
    assertEquals(8_819, code.items().size());
    assertEquals(4808, code.items().get(0).promptTokens());
    assertEquals(173, code.items().get(8_818).outputTokens());
    assertTrue(conv.skipped().isEmpty() && code.skipped().isEmpty());
  }

  @Test
  void badRowsNameFileLineAndColumn(@org.junit.jupiter.api.io.TempDir Path dir)
      throws IOException {
    Path f = dir.resolve("t.csv");
    Files.writeString(f, "TIMESTAMP,ContextTokens,GeneratedTokens\n"
        + "2023-11-16 18:15:46.68,10,5\n2023-11-16 18:15:47,x,5\n");
    var e = assertThrows(IllegalArgumentException.class, () -> Traces.azureLlm(f));
    assertTrue(e.getMessage().contains("t.csv:3") && e.getMessage().contains("ContextTokens"),
        e.getMessage());
    Files.writeString(f, "TIMESTAMP,ContextTokens,GeneratedTokens\n"
        + "16/11/2023,10,5\n");
    e = assertThrows(IllegalArgumentException.class, () -> Traces.azureLlm(f));
    assertTrue(e.getMessage().contains("TIMESTAMP"), e.getMessage());
    Files.writeString(f, "TIMESTAMP,ContextTokens,GeneratedTokens\n"
        + "2023-11-16 18:15:46,10,0\n2023-11-16 18:15:45,10,3\n");
    var r = Traces.azureLlm(f);
    assertEquals(List.of(new LlmRequest(0, 10, 3)), r.items());
    assertEquals(1, r.skipped().get("no generated tokens"));
  }

  /** The fitted replica reproduces the estimator it was fitted to. */
  @Test
  void replicaFitFollowsTheEstimator() throws IOException {
    ReplicaModel m = llama70bTp4();
    assertEquals(4, m.gpus());
    assertEquals(128, m.maxBatch());
    assertTrue(m.fitError() < 0.10, "fit error " + m.fitError());
    assertTrue(m.kvTokens() > 100_000, "KV tokens " + m.kvTokens());
    assertTrue(m.decodeSeconds(64, 64L * 1200) > m.decodeSeconds(1, 1200));
    var bad = assertThrows(IllegalArgumentException.class, () -> ReplicaModel.fromServing(
        Serving.parse(Files.readString(Path.of("..", "examples",
            "serve-llama2-70b-h100-tp4-fp8.json")).replace("\"tp\": 4", "\"tp\": 1")
            .replace("\"fp8\", \"kvCachePrecision\"", "\"fp32\", \"kvCachePrecision\""),
            Catalog.builtIn())));
    assertTrue(bad.getMessage().contains("infeasible"), bad.getMessage());
  }

  /**
   * A replica on half a GPU: half the bandwidth and memory, so a decode step of the 7B model
   * (weights read once) takes up to twice as long, the KV cache holds less than half (the
   * weights do not shrink), and two such replicas share one GPU of the cluster.
   */
  @Test
  void aReplicaOnASliceOfOneGpu() throws IOException {
    var request = Serving.parse(Files.readString(Path.of("..", "examples",
        "7b-fp16-4096.json")), Catalog.builtIn());
    ReplicaModel whole = ReplicaModel.fromServing(request);
    ReplicaModel half = ReplicaModel.fromServing(request,
        io.hyperframes.inference.InferenceEstimator.analytical(), 500);
    assertEquals(500, half.gpuMilli());
    double ratio = half.decodeSeconds(1, 1000) / whole.decodeSeconds(1, 1000);
    assertTrue(ratio > 1.5 && ratio <= 2.0 + 1e-9, "decode ratio " + ratio);
    assertTrue(half.kvTokens() < whole.kvTokens() / 2, half.kvTokens() + " vs "
        + whole.kvTokens());
    InferenceService s = new InferenceService("small", half, 2, 2, 300, 0.7, 2, 0.1, "inf", 1);
    List<LlmRequest> reqs = List.of(new LlmRequest(0, 100, 10), new LlmRequest(1, 100, 10));
    var c = ServingReplay.colocate(List.of(new GpuNode("n", 0, 0, 1, "")), List.of(),
        List.of(new ServingReplay.Load(s, reqs)), Placement.bestFit(), QueuePolicy.fifo(),
        Replay.Disruptions.NONE, 1, ReplayMonitor.NONE);
    assertEquals(2, c.services().get(0).finished());
    assertEquals(2.0, c.services().get(0).meanReplicas(), 1e-9, "both slices on one GPU");
    var bad = assertThrows(IllegalArgumentException.class, () -> ReplicaModel.fromServing(
        Serving.parse(Files.readString(Path.of("..", "examples",
            "serve-llama2-70b-h100-tp4-fp8.json")), Catalog.builtIn()),
        io.hyperframes.inference.InferenceEstimator.analytical(), 500));
    assertTrue(bad.getMessage().contains("tp = pp = 1"), bad.getMessage());
  }

  /**
   * One replica always up, requests of one length arriving as a Poisson process: the same server
   * as {@link ServingLoad#simulate} (whose iteration tables are this replica's), so their time
   * to first token and latency percentiles agree within sampling noise.
   */
  @Test
  void agreesWithTheServingLoadSimulationOnItsOwnGround() {
    ReplicaModel m = ReplicaFixture.replica().maxBatch(32).kvTokens(1L << 40)
        .prefillTokenBudget(1 << 30).prefill(0.02, 2e-5).decode(0.015, 2e-4, 0)
        .requestSeconds(0.005).build();
    int p = 512;
    int o = 64;
    double[] prefill = new double[33];
    double[] decode = new double[33];
    for (int k = 1; k <= 32; k++) {
      prefill[k] = m.prefillSeconds((long) k * p, (double) k * p * p);
      decode[k] = m.decodeSeconds(k, 0);
    }
    ServingLoad load = new ServingLoad(prefill, decode, o, m.requestSeconds());
    for (double share : new double[] {0.3, 0.7}) {
      double rate = share * load.capacityPerSecond();
      SplittableRandom r = new SplittableRandom(7);
      List<LlmRequest> reqs = new ArrayList<>();
      double t = 0;
      for (int i = 0; i < 40_000; i++) {
        t += -Math.log(1 - r.nextDouble()) / rate;
        reqs.add(new LlmRequest(t, p, o));
      }
      InferenceService s = new InferenceService("s", m, 1, 1, 1e9, 1, 1, 1, "", 1);
      var res = ServingReplay.simulate(s, reqs,
          List.of(new ServingReplay.Availability(0, Double.POSITIVE_INFINITY)));
      var ref = load.simulate(rate, 40_000, 11);
      System.out.printf("load %.0f %%: TTFT p50 %.4f s vs %.4f s, p99 %.4f s vs %.4f s%n",
          100 * share, res.ttftP50Seconds(), ref.ttftP50(), res.ttftP99Seconds(), ref.ttftP99());
      assertEquals(40_000, res.finished());
      assertEquals(ref.ttftP50(), res.ttftP50Seconds(), 0.05 * ref.ttftP50(), "share " + share);
      assertEquals(ref.ttftP99(), res.ttftP99Seconds(), 0.10 * ref.ttftP99(), "share " + share);
    }
  }

  /**
   * Laws: every request is finished, rejected or left unfinished, once; a replica always up
   * leaves nothing unfinished; attainment is a share; a request longer than the KV capacity is
   * rejected.
   */
  @Property(tries = 300)
  void everyRequestIsAccountedForOnce(@ForAll @IntRange(min = 1, max = 300) int count,
      @ForAll @IntRange(min = 0, max = 4) int stretches, @ForAll boolean alwaysUp,
      @ForAll long seed) {
    SplittableRandom r = new SplittableRandom(seed);
    ReplicaModel m = ReplicaFixture.replica().maxBatch(1 + r.nextInt(8))
        .kvTokens(200 + r.nextInt(2000)).prefillTokenBudget(64 + r.nextInt(2000))
        .prefill(0.01, 1e-5).decode(0.01, 1e-3, 1e-6).build();
    List<LlmRequest> reqs = new ArrayList<>();
    double t = 0;
    for (int i = 0; i < count; i++) {
      t += r.nextDouble();
      reqs.add(new LlmRequest(t, 1 + r.nextInt(600), 1 + r.nextInt(100)));
    }
    List<ServingReplay.Availability> ups = new ArrayList<>();
    for (int i = 0; i < stretches; i++) {
      double b = r.nextDouble() * t;
      ups.add(new ServingReplay.Availability(b, b + r.nextDouble() * t));
    }
    if (alwaysUp) {
      ups.add(new ServingReplay.Availability(0, Double.POSITIVE_INFINITY));
    }
    InferenceService s = new InferenceService("s", m, 1, 1, 60, 1, 0.5, 0.05, "", 1);
    var res = ServingReplay.simulate(s, reqs, ups);
    long tooLong = reqs.stream().filter(q -> q.promptTokens() + q.outputTokens() > m.kvTokens())
        .count();
    assertEquals(count, res.requests());
    assertEquals(tooLong, res.rejected());
    assertEquals(count, res.finished() + res.rejected() + res.unfinished());
    assertTrue(res.sloAttainment() >= 0 && res.sloAttainment() <= 1);
    if (alwaysUp) {
      assertEquals(0, res.unfinished());
    }
    if (ups.isEmpty()) {
      assertEquals(count - tooLong, res.unfinished());
    }
  }

  /**
   * A replica scaled down drains: it takes no new request after its stretch but finishes the
   * one it runs, while a replica that goes down without draining restarts it elsewhere.
   */
  @Test
  void aScaledDownReplicaFinishesWhatItRuns() {
    ReplicaModel m = ReplicaFixture.replica().maxBatch(8).kvTokens(1 << 20)
        .prefillTokenBudget(1 << 20).prefill(0.01, 0).decode(0.01, 0, 0).build();
    InferenceService s = new InferenceService("s", m, 1, 1, 60, 1, 10, 1, "", 1);
    // 100 tokens at 10 ms: 1 s of decoding, arriving at 9.5 s; replica 0 stops taking requests
    // at 10 s and is gone at 12 s; replica 1 is up from 10 s.
    List<LlmRequest> reqs = List.of(new LlmRequest(9.5, 10, 100), new LlmRequest(10.5, 10, 10));
    var drained = ServingReplay.simulate(s, reqs, List.of(
        new ServingReplay.Availability(0, 12, 10), new ServingReplay.Availability(10, 100)));
    assertEquals(0, drained.restarted());
    assertEquals(2, drained.finished());
    var cut = ServingReplay.simulate(s, reqs, List.of(new ServingReplay.Availability(0, 10),
        new ServingReplay.Availability(10, 100)));
    assertEquals(1, cut.restarted());
    assertEquals(2, cut.finished());
  }

  /** Autoscaling follows the load; a fixed service reserves its replicas for the whole trace. */
  @Test
  void autoscalerFollowsTheLoad() throws IOException {
    ReplicaModel m = llama70bTp4();
    List<LlmRequest> reqs = Traces.azureLlm(AZURE.resolve("AzureLLMInferenceTrace_conv.csv"))
        .items();
    InferenceService fixed = new InferenceService("fixed", m, 3, 3, 300, 0.7, 2, 0.1, "inf", 1);
    int[] up = fixed.replicasPerWindow(reqs);
    assertEquals(13, up.length);
    for (int u : up) {
      assertEquals(3, u);
    }
    List<GpuJob> jobs = fixed.replicaJobs(reqs, 8);
    assertEquals(3, jobs.size());
    // Its stretch and the 30 s it drains when scaled down.
    assertEquals(13 * 300 + 30, jobs.get(0).durationSeconds(), 1e-9);
    InferenceService auto = new InferenceService("auto", m, 1, 64, 300, 0.7, 2, 0.1, "inf", 1);
    InferenceService eager = new InferenceService("eager", m, 1, 64, 300, 0.35, 2, 0.1, "inf",
        1);
    int[] a = auto.replicasPerWindow(reqs);
    int[] b = eager.replicasPerWindow(reqs);
    double gpuSeconds = 0;
    List<GpuJob> autoJobs = auto.replicaJobs(reqs, 8);
    for (GpuJob j : autoJobs) {
      gpuSeconds += j.durationSeconds() * j.gpuMilli() / 1000.0;
    }
    double expected = autoJobs.size() * 30.0 * 4;
    for (int w = 0; w < a.length; w++) {
      assertTrue(b[w] >= a[w], "half the target load needs at least as many replicas");
      expected += a[w] * 300.0 * 4;
    }
    assertEquals(expected, gpuSeconds, 1e-6);
    var e = assertThrows(IllegalArgumentException.class, () -> new InferenceService("x", m, 2,
        1, 300, 0.7, 2, 0.1, "", 1));
    assertTrue(e.getMessage().contains("maxReplicas"), e.getMessage());
  }

  /**
   * Training and inference on one cluster: with replicas in a higher tier the priority policy
   * preempts training for them and the service meets its target more often than under FIFO,
   * where replicas wait behind training; the GPUs come from preempted training jobs.
   */
  @Test
  void priorityProtectsTheServiceAtTrainingsExpense() throws IOException {
    ReplicaModel m = llama70bTp4();
    List<LlmRequest> reqs = Traces.azureLlm(AZURE.resolve("AzureLLMInferenceTrace_conv.csv"))
        .items();
    List<GpuJob> training = Traces.philly(Path.of("..", "docs", "validation", "pollux",
        "philly-head-2000.csv"), 8).items();
    List<GpuNode> nodes = new ArrayList<>();
    for (int i = 0; i < 16; i++) {
      nodes.add(new GpuNode("n" + i, 1 << 20, 1 << 22, 8, "H100"));
    }
    InferenceService s = new InferenceService("chat", m, 0, 8, 300, 0.7, 2, 0.1, "inference",
        1);
    // Hour 742 of the excerpt is its busiest: about 600 GPUs of demand for 64 GPUs.
    var load = List.of(new ServingReplay.Load(s, reqs).startingAt(742 * 3600));
    var fifo = ServingReplay.colocate(nodes, training, load, Placement.bestFit(),
        QueuePolicy.fifo(), Replay.Disruptions.NONE, 1, ReplayMonitor.NONE);
    var prio = ServingReplay.colocate(nodes, training, load, Placement.bestFit(),
        QueuePolicy.priority(), Replay.Disruptions.NONE, 1, ReplayMonitor.NONE);
    var f = fifo.services().get(0);
    var p = prio.services().get(0);
    var alone = Replay.run(nodes, training, Placement.bestFit(), QueuePolicy.priority(),
        Replay.Disruptions.NONE, 1, ReplayMonitor.NONE);
    System.out.printf("fifo %s%nprio %s%ntraining JCT fifo %.0f prio %.0f alone %.0f%n", f, p,
        fifo.training().meanJctSeconds(), prio.training().meanJctSeconds(),
        alone.meanJctSeconds());
    assertEquals(training.size(), fifo.training().jobs().size());
    assertEquals(alone.jobs().size(), prio.training().jobs().size());
    assertTrue(p.sloAttainment() > f.sloAttainment(), p + " vs " + f);
    assertTrue(p.sloAttainment() > 0.9, p.toString());
    // The replicas took GPUs from running training jobs, which FIFO never does.
    assertTrue(prio.training().preemptions() > 0);
    assertEquals(0, fifo.training().preemptions());
  }
}
