package io.hyperframes.plan;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.hyperframes.PlanRequests;
import java.util.List;
import java.util.concurrent.CancellationException;
import org.junit.jupiter.api.Test;

/** Planner acceptance: quality on a published run, speed, infeasible requests, contracts. */
class PlannerTest {

  static final String LLAMA_65B = """
      {"model": {"catalog": "llama-65b"}, "cluster": {"accelerator": "a100-sxm-80gb",
       "devices": 2048}, "workload": {"type": "training", "precision": "bf16-mixed",
       "globalBatchSize": 2048, "trainingTokens": 1.4e12}}
      """;

  /** Touvron et al. 2023 §2.4: 380 tokens/s/GPU on 2048 A100-80GB. */
  @Test
  void llama65bPlanIsAtLeastAsFastAsPublished() {
    Plan p = Planner.analytical().plan(PlanRequests.parse(LLAMA_65B));
    assertTrue(p.feasible(), () -> p.reasons().toString());
    assertTrue(p.best().estimate().tokensPerSecondPerDevice() >= 380,
        () -> "best " + p.best().estimate().tokensPerSecondPerDevice());
    assertTrue(p.best().estimate().layout().tp() <= 8, "tensor parallelism stays in a node");
  }

  @Test
  void gpt3On1024A100WithBatchUpTo1536IsAnsweredQuickly() {
    PlanRequest r = PlanRequests.parse("""
        {"model": {"catalog": "gpt3-175b"}, "cluster": {"accelerator": "a100-sxm-80gb",
         "devices": 1024}, "workload": {"type": "training", "precision": "bf16-mixed",
         "trainingTokens": 3e11}, "constraints": {"maxGlobalBatch": 1536}}
        """);
    Plan p = Planner.analytical().plan(r);
    assertTrue(p.feasible());
    assertTrue(p.seconds() < 10, "search took " + p.seconds() + " s");
    assertTrue(p.best().workload().globalBatchSize() <= 1536);
    assertFalse(p.goldenParameters().isEmpty());
  }

  @Test
  void aTrillionParameterModelOnEightCardsIsInfeasibleWithReasons() {
    Plan p = Planner.analytical().plan(PlanRequests.parse("""
        {"model": {"name": "gpt-1t", "layers": 128, "hidden": 25600, "heads": 160,
         "vocab": 51200, "seqLen": 2048}, "cluster": {"accelerator": "a100-sxm-80gb",
         "devices": 8}, "workload": {"type": "training", "precision": "bf16-mixed",
         "globalBatchSize": 64, "trainingTokens": 1e12}}
        """));
    assertFalse(p.feasible());
    assertTrue(p.reasons().stream().anyMatch(r -> r.startsWith("memory:")), p.reasons()::toString);
    assertTrue(p.findings().stream().anyMatch(f -> f.id().equals("infeasible")));
  }

  @Test
  void deviceRangeGivesAScalingCurveAndAParetoFront() {
    Plan p = Planner.analytical().plan(PlanRequests.parse("""
        {"model": {"catalog": "llama2-7b"}, "cluster": {"accelerator": "h100-sxm-80gb",
         "devices": "8-64"}, "workload": {"type": "training", "precision": "bf16-mixed",
         "trainingTokens": 2e11}, "objective": "cost"}
        """));
    assertEquals(8, p.scaling().size(), "one best per device count 8, 16, ..., 64");
    assertFalse(p.pareto().isEmpty());
    for (int i = 1; i < p.pareto().size(); i++) {
      assertTrue(p.pareto().get(i).timeMetric() >= p.pareto().get(i - 1).timeMetric());
      assertTrue(p.pareto().get(i).costMetric() < p.pareto().get(i - 1).costMetric());
    }
  }

  @Test
  void deadlineObjectivePicksTheFewestDevicesThatMeetIt() {
    Plan p = Planner.analytical().plan(PlanRequests.parse("""
        {"model": {"catalog": "llama2-7b"}, "cluster": {"accelerator": "a100-sxm-80gb",
         "devices": "8-256"}, "workload": {"type": "training", "precision": "bf16-mixed",
         "trainingTokens": 1e11}, "objective": "devices", "constraints": {"deadlineDays": 10}}
        """));
    assertTrue(p.feasible());
    assertTrue(p.best().estimate().trainingDays() <= 10);
    for (Candidate c : p.scaling()) {
      if (c.estimate().devices() < p.best().estimate().devices() && c.estimate().feasible()) {
        assertTrue(c.estimate().trainingDays() > 10, "fewer devices also meet the deadline: "
            + c.estimate().devices());
      }
    }
  }

  @Test
  void jsonKeepsTheEstimateContractAndAddsThePlanFields() {
    Plan p = Planner.analytical().plan(PlanRequests.parse(LLAMA_65B));
    JsonNode json = PlanJson.toJson(p);
    for (String f : List.of("feasible", "reasons", "layout", "parameters", "memory", "time",
        "mfu", "hfu", "tflopsPerDevice", "tokensPerSecond", "tokensPerSecondPerDevice",
        "commShare", "trainingDays", "gpuHours", "search", "alternatives", "pareto",
        "goldenParameters", "findings", "cost")) {
      assertTrue(json.has(f), "missing " + f);
    }
    assertTrue(json.get("search").get("candidatesEvaluated").asLong() > 0);
    assertTrue(json.get("cost").get("totalUsd").asDouble() > 0);
    assertTrue(json.get("goldenParameters").has("dataLoaderWorkers"));
    assertTrue(json.get("goldenParameters").has("gradientBucketBytes"));
    assertTrue(json.get("alternatives").get(0).has("memory"));
  }

  @Test
  void cancellationStopsTheSearch() {
    PlanListener cancel = new PlanListener() {
      @Override
      public void progress(double fraction, long evaluated) {}

      @Override
      public boolean cancelled() {
        return true;
      }
    };
    assertThrows(CancellationException.class,
        () -> Planner.analytical().plan(PlanRequests.parse(LLAMA_65B), cancel));
  }

  @Test
  void badPlanRequestsNameTheField() {
    assertMessage("cluster.devices", LLAMA_65B.replace("2048}", "\"64-8\"}"));
    assertMessage("cluster.devices", LLAMA_65B.replace("2048}", "\"x-y\"}"));
    assertMessage("objective", LLAMA_65B.replace("\"workload\"",
        "\"objective\": \"fastest\", \"workload\""));
    assertMessage("constraints.memoryHeadroom", LLAMA_65B.replace("\"workload\"",
        "\"constraints\": {\"memoryHeadroom\": 0.9}, \"workload\""));
    assertMessage("constraints.deadlineDays", LLAMA_65B.replace("\"workload\"",
        "\"objective\": \"devices\", \"workload\""));
    assertMessage("constraints.maxGlobalBatch", LLAMA_65B.replace("\"workload\"",
        "\"constraints\": {\"maxGlobalBatch\": 10}, \"workload\""));
  }

  private static void assertMessage(String field, String json) {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> Planner.analytical().plan(PlanRequests.parse(json)));
    assertTrue(e.getMessage().startsWith(field), e.getMessage());
  }
}
