package io.hyperframes.plan;

import io.hyperframes.PlanRequests;
import io.hyperframes.launch.Launch;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.hyperframes.HyperFrames;
import io.hyperframes.launch.Target;
import io.hyperframes.parallel.MoeDispatcher;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * {@code layout.moeDispatcher}: the all-to-all dispatcher is the default and today's figures;
 * DeepEP crosses the network once per destination node, so expert parallelism over nodes costs
 * far less; the launch names the dispatcher; bad values are named.
 */
class MoeDispatcherTest {

  /** The model zoo's Qwen3-235B-A22B at 4096 tokens (docs/validation/moe-cases.json). */
  private static final String QWEN_4K = "{\"name\": \"qwen3-235b-a22b-4k\", \"layers\": 94,"
      + " \"hidden\": 4096, \"heads\": 64, \"kvHeads\": 4, \"headDim\": 128,"
      + " \"ffnHidden\": 12288, \"gatedMlp\": true, \"vocab\": 151936, \"seqLen\": 4096,"
      + " \"tiedEmbeddings\": false, \"moe\": {\"experts\": 128, \"topK\": 8,"
      + " \"expertFfnHidden\": 1536%s}}";

  private static String request(String moe, String layout) {
    return "{\"model\": " + String.format(QWEN_4K, moe) + ", \"cluster\": {\"accelerator\":"
        + " \"h100-sxm-80gb\", \"devices\": 256}, \"workload\": {\"type\": \"training\","
        + " \"precision\": \"bf16-mixed\", \"globalBatchSize\": 2048, \"trainingTokens\": 1e11},"
        + " \"layout\": {\"tp\": 2, \"pp\": 8, \"virtualStages\": 4, \"dp\": 16, \"microBatch\":"
        + " 1, \"sequenceParallel\": true, \"zeroStage\": 1, \"engine\": \"megatron\","
        + " \"recomputeModules\": [\"layernorm\", \"moe_act\"]" + layout + "}}";
  }

  private static TrainingEstimate estimate(String layout) {
    return TrainingEstimator.analytical().estimate(io.hyperframes.request.Requests.parse(
        request("", layout)));
  }

  @Test
  void allToAllIsTheDefault() {
    TrainingEstimate open = estimate(", \"ep\": 32, \"etp\": 1");
    TrainingEstimate named = estimate(", \"ep\": 32, \"etp\": 1, \"moeDispatcher\": \"alltoall\"");
    assertEquals(MoeDispatcher.ALL_TO_ALL, open.layout().moeDispatcher());
    assertEquals(open.stepSeconds(), named.stepSeconds(), 0.0);
  }

  @Test
  void deepEpCrossesTheNetworkOncePerNode() {
    // EP 32 with etp 1 spans 4 nodes: the all-to-all sends 6 of a token's 8 copies over
    // InfiniBand on average, DeepEP 2.7 (the 3 other nodes, each reached with p = 0.91).
    TrainingEstimate a2a = estimate(", \"ep\": 32, \"etp\": 1");
    TrainingEstimate deepep = estimate(", \"ep\": 32, \"etp\": 1, \"moeDispatcher\": \"deepep\"");
    assertEquals(MoeDispatcher.DEEPEP, deepep.layout().moeDispatcher());
    double ratio = deepep.time().allToAllSeconds() / a2a.time().allToAllSeconds();
    assertTrue(ratio > 0.15 && ratio < 0.5, "DeepEP / all-to-all " + ratio);
    // The compute differs by the token permutation alone (MoePermutationTest): DeepEP expands
    // one row per destination rank where the all-to-all sorts every copy by local expert.
    assertTrue(deepep.time().computeSeconds() < a2a.time().computeSeconds());
    assertEquals(a2a.time().computeSeconds(), deepep.time().computeSeconds(),
        0.05 * a2a.time().computeSeconds());
    assertEquals(a2a.memory().totalBytes(), deepep.memory().totalBytes(), 0.0);
    // Inside one node (EP 8) it still sends a token once per GPU, not once per expert.
    TrainingEstimate inside = estimate(", \"ep\": 8, \"etp\": 1, \"moeDispatcher\": \"deepep\"");
    TrainingEstimate insideA2a = estimate(", \"ep\": 8, \"etp\": 1");
    assertTrue(inside.time().allToAllSeconds() < insideA2a.time().allToAllSeconds());
  }

  @Test
  void theJsonAndTheLaunchNameIt() {
    var json = EstimateJson.toJson(estimate(", \"ep\": 32, \"etp\": 1,"
        + " \"moeDispatcher\": \"deepep\""));
    assertEquals("deepep", json.at("/layout/moeDispatcher").asText(), json.toString());
    assertEquals("alltoall", EstimateJson.toJson(estimate(", \"ep\": 32, \"etp\": 1"))
        .at("/layout/moeDispatcher").asText());
    String launch = Launch.emit(Planner.analytical().plan(PlanRequests.parse(
        request("", ", \"ep\": 32, \"etp\": 1, \"moeDispatcher\": \"deepep\""))), Target.MEGATRON);
    assertTrue(launch.contains("--moe-token-dispatcher-type flex"), launch);
    assertTrue(launch.contains("--moe-flex-dispatcher-backend deepep"), launch);
    // A plan whose dispatcher is left open may take DeepEP across nodes
    // (Planner#deepEpAlternative); the all-to-all one is asked for by name.
    String plain = Launch.emit(Planner.analytical().plan(PlanRequests.parse(
        request("", ", \"ep\": 32, \"etp\": 1, \"moeDispatcher\": \"alltoall\""))), Target.MEGATRON);
    assertTrue(plain.contains("--moe-token-dispatcher-type alltoall"), plain);
    assertFalse(plain.contains("--moe-flex-dispatcher-backend"), plain);
  }

  @Test
  void badDispatchersAreNamed() {
    List<String[]> bad = List.of(
        new String[] {"", ", \"ep\": 32, \"etp\": 1, \"moeDispatcher\": \"allgather\"",
            "'allgather' is not a token dispatcher"},
        new String[] {"", ", \"ep\": 1, \"etp\": 1, \"moeDispatcher\": \"deepep\"",
            "deepep needs layout.ep · layout.etp > 1"},
        new String[] {", \"capacityFactor\": 1.25",
            ", \"ep\": 32, \"etp\": 1, \"moeDispatcher\": \"deepep\"",
            "deepep does not pad expert inputs to a capacity"});
    for (String[] b : bad) {
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
          () -> TrainingEstimator.analytical().estimate(io.hyperframes.request.Requests.parse(
              request(b[0], b[1]))));
      assertTrue(e.getMessage().startsWith("layout.moeDispatcher: "), e.getMessage());
      assertTrue(e.getMessage().contains(b[2]), e.getMessage());
    }
    IllegalArgumentException dense = assertThrows(IllegalArgumentException.class,
        () -> HyperFrames.estimate().model("llama2-7b").accelerator("h100-sxm-80gb").devices(8)
            .training(t -> t.precision("bf16-mixed").globalBatchSize(64).tokens(1e9))
            .layout(l -> l.tp(1).pp(1).moeDispatcher("deepep")).run());
    assertTrue(dense.getMessage().contains("layout.moeDispatcher: deepep needs a mixture of"
        + " experts"), dense.getMessage());
  }

  /**
   * {@code layout.overlapMoeComm}: the combined 1F1B schedule hides the exchange behind the other
   * micro-batch's computation in the steady state; the warm-up and cool-down chunks pay theirs.
   */
  @Test
  void theOverlapHidesTheExchangeInTheSteadyState() {
    String ep32 = ", \"ep\": 32, \"etp\": 1, \"moeDispatcher\": \"deepep\"";
    TrainingEstimate plain = estimate(ep32);
    TrainingEstimate overlapped = estimate(ep32 + ", \"overlapMoeComm\": true");
    assertTrue(overlapped.layout().overlapMoeComm());
    assertFalse(plain.layout().overlapMoeComm());
    assertEquals(plain.time().computeSeconds(), overlapped.time().computeSeconds(), 0.0);
    double hidden = overlapped.time().allToAllSeconds() / plain.time().allToAllSeconds();
    // pp 8, 4 virtual stages, 128 micro-batches: 2·7 + 3·8 + 1 = 39 of the 512 chunk passes run
    // alone, so at least 39/512 of the exchange stays.
    assertTrue(hidden >= 39.0 / 512 - 1e-12 && hidden < 1, "overlapped / plain " + hidden);
    assertTrue(overlapped.stepSeconds() < plain.stepSeconds());
    assertTrue(EstimateJson.toJson(overlapped).at("/layout/overlapMoeComm").asBoolean());
    String launch = Launch.emit(Planner.analytical().plan(PlanRequests.parse(
        request("", ep32 + ", \"overlapMoeComm\": true"))), Target.MEGATRON);
    assertTrue(launch.contains("--overlap-moe-expert-parallel-comm --delay-wgrad-compute"),
        launch);
  }

  @Test
  void overlapsMegatronCannotRunAreNamed() {
    IllegalArgumentException noEp = assertThrows(IllegalArgumentException.class,
        () -> estimate(", \"ep\": 1, \"etp\": 1, \"overlapMoeComm\": true"));
    assertTrue(noEp.getMessage().startsWith("layout.overlapMoeComm: "), noEp.getMessage());
    assertTrue(noEp.getMessage().contains("it needs layout.ep > 1"), noEp.getMessage());
    IllegalArgumentException plainPipeline = assertThrows(IllegalArgumentException.class,
        () -> new io.hyperframes.parallel.Layout(2, 8, 16, 1, 1, true,
            io.hyperframes.parallel.Recompute.SELECTIVE, 1,
            io.hyperframes.parallel.Engine.MEGATRON, 0, true, 32, 1,
            io.hyperframes.parallel.CpCommType.P2P, 1, null, null, true));
    assertTrue(plainPipeline.getMessage().contains("layout.virtualStages > 1"),
        plainPipeline.getMessage());
    IllegalArgumentException full = assertThrows(IllegalArgumentException.class,
        () -> new io.hyperframes.parallel.Layout(2, 8, 16, 4, 1, true,
            io.hyperframes.parallel.Recompute.FULL, 1, io.hyperframes.parallel.Engine.MEGATRON,
            0, true, 32, 1, io.hyperframes.parallel.CpCommType.P2P, 1, null, null, true));
    assertTrue(full.getMessage().contains("not with full recomputation"), full.getMessage());
    IllegalArgumentException dense = assertThrows(IllegalArgumentException.class,
        () -> HyperFrames.estimate().model("llama2-7b").accelerator("h100-sxm-80gb").devices(8)
            .training(t -> t.precision("bf16-mixed").globalBatchSize(64).tokens(1e9))
            .layout(l -> l.tp(1).pp(1).overlapMoeComm(true)).run());
    assertTrue(dense.getMessage().contains("layout.overlapMoeComm: needs a mixture of experts"),
        dense.getMessage());
  }
}
