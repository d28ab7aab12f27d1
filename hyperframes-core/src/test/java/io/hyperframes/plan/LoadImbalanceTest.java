package io.hyperframes.plan;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.hyperframes.HyperFrames;
import io.hyperframes.request.Requests;
import io.hyperframes.workload.TrainingWorkload;
import org.junit.jupiter.api.Test;

/** {@code workload.moeLoadImbalance}: vocabulary, errors and what it changes. */
class LoadImbalanceTest {

  private static final String QWEN3_30B = "{\"name\": \"qwen3-30b-a3b\", \"layers\": 48,"
      + " \"hidden\": 2048, \"heads\": 32, \"kvHeads\": 4, \"headDim\": 128,"
      + " \"ffnHidden\": 6144, \"gatedMlp\": true, \"vocab\": 151936, \"seqLen\": 4096,"
      + " \"tiedEmbeddings\": false, \"moe\": {\"experts\": 128, \"topK\": 8,"
      + " \"expertFfnHidden\": 768%s}}";

  private static String request(String model, int ep, String imbalance) {
    return "{\"model\": " + model + ", \"cluster\": {\"accelerator\": \"h100-sxm-80gb\","
        + " \"devices\": 64}, \"workload\": {\"type\": \"training\", \"precision\":"
        + " \"bf16-mixed\", \"globalBatchSize\": 256" + (imbalance == null ? ""
            : ", \"moeLoadImbalance\": " + imbalance) + "}, \"layout\": {\"tp\": 1, \"pp\": 1,"
        + " \"dp\": 64, \"ep\": " + ep + ", \"microBatch\": 2, \"zeroStage\": 1,"
        + " \"engine\": \"megatron\", \"recompute\": \"selective\"}}";
  }

  private static TrainingEstimate estimate(String model, int ep, String imbalance) {
    return TrainingEstimator.analytical().estimate(Requests.parse(request(model, ep,
        imbalance)));
  }

  @Test
  void badValuesNameTheFieldAndTheValue() {
    for (String bad : new String[] {"0.5", "0", "65", "-1"}) {
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
          () -> estimate(String.format(QWEN3_30B, ""), 8, bad));
      assertTrue(e.getMessage().startsWith("workload.moeLoadImbalance: must be in [1, 64]"),
          e.getMessage());
      assertTrue(e.getMessage().contains(Double.toString(Double.parseDouble(bad))),
          e.getMessage());
    }
    IllegalArgumentException text = assertThrows(IllegalArgumentException.class,
        () -> estimate(String.format(QWEN3_30B, ""), 8, "\"high\""));
    assertTrue(text.getMessage().contains("moeLoadImbalance"), text.getMessage());
  }

  @Test
  void absentMeansTheDocumentedDefault() {
    String model = String.format(QWEN3_30B, "");
    assertEquals(estimate(model, 8, Double.toString(
        TrainingWorkload.DEFAULT_MOE_LOAD_IMBALANCE)), estimate(model, 8, null));
  }

  @Test
  void theBusiestRankRunsAsALayerPaddedToThatCapacity() {
    // With expert parallelism the busiest rank computes, exchanges and stores 1.5 times the
    // mean routed copies: the figures of a layer padded to capacity factor 1.5 on every rank
    // (the all-to-all dispatcher, where a capacity factor is allowed).
    TrainingEstimate imbalanced = estimate(String.format(QWEN3_30B, ""), 8, "1.5");
    TrainingEstimate padded = estimate(String.format(QWEN3_30B, ", \"capacityFactor\": 1.5"), 8,
        "1");
    TrainingEstimate balanced = estimate(String.format(QWEN3_30B, ""), 8, "1");
    assertEquals(padded.stepSeconds(), imbalanced.stepSeconds(), 1e-12);
    assertEquals(padded.memory().totalBytes(), imbalanced.memory().totalBytes(), 1.0);
    assertTrue(imbalanced.stepSeconds() > balanced.stepSeconds() * 1.05,
        imbalanced.stepSeconds() + " vs " + balanced.stepSeconds());
    assertTrue(imbalanced.time().allToAllSeconds() > balanced.time().allToAllSeconds());
    assertTrue(imbalanced.memory().activationsBytes() > balanced.memory().activationsBytes());
    // What the model computes is the real routing's: MFU falls by the step's ratio.
    assertEquals(balanced.modelFlopsPerStep(), imbalanced.modelFlopsPerStep());
    assertEquals(balanced.mfu() * balanced.stepSeconds() / imbalanced.stepSeconds(),
        imbalanced.mfu(), 1e-12);
  }

  @Test
  void noEffectWithoutExpertParallelismWithACapacityOrOnADenseModel() {
    String model = String.format(QWEN3_30B, "");
    assertEquals(estimate(model, 1, "1"), estimate(model, 1, "3"));
    String capped = String.format(QWEN3_30B, ", \"capacityFactor\": 1.25");
    assertEquals(estimate(capped, 8, "1"), estimate(capped, 8, "3"));
    String dense = "{\"catalog\": \"llama3-8b\"}";
    String denseRequest = "{\"model\": " + dense + ", \"cluster\": {\"accelerator\":"
        + " \"h100-sxm-80gb\", \"devices\": 64}, \"workload\": {\"type\": \"training\","
        + " \"precision\": \"bf16-mixed\", \"globalBatchSize\": 256, \"moeLoadImbalance\": %s},"
        + " \"layout\": {\"tp\": 1, \"pp\": 1, \"dp\": 64, \"microBatch\": 2}}";
    assertEquals(TrainingEstimator.analytical().estimate(Requests.parse(
        String.format(denseRequest, "1"))), TrainingEstimator.analytical().estimate(
            Requests.parse(String.format(denseRequest, "3"))));
  }

  @Test
  void theFluentBuilderWritesTheSameRequest() {
    TrainingEstimate java = HyperFrames.estimate().model("qwen3-30b-a3b")
        .accelerator("h100-sxm-80gb").devices(64)
        .training(t -> t.precision("bf16-mixed").globalBatchSize(256).moeLoadImbalance(1.3))
        .layout(l -> l.tp(1).pp(1).dp(64).ep(8).microBatch(2).zeroStage(1))
        .run();
    TrainingEstimate json = TrainingEstimator.analytical().estimate(Requests.parse(
        "{\"model\": {\"catalog\": \"qwen3-30b-a3b\"}, \"cluster\": {\"accelerator\":"
            + " \"h100-sxm-80gb\", \"devices\": 64}, \"workload\": {\"type\": \"training\","
            + " \"precision\": \"bf16-mixed\", \"globalBatchSize\": 256, \"moeLoadImbalance\":"
            + " 1.3}, \"layout\": {\"tp\": 1, \"pp\": 1, \"dp\": 64, \"ep\": 8,"
            + " \"microBatch\": 2, \"zeroStage\": 1}}"));
    assertEquals(json, java);
  }
}
