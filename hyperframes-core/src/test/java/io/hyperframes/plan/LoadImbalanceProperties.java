package io.hyperframes.plan;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

/**
 * Laws of {@code workload.moeLoadImbalance}: the busiest expert-parallel rank of a dropless MoE
 * layer computes, exchanges and stores more the more imbalanced the routing, so the step and the
 * memory never shrink as the imbalance grows; the model's FLOPs (and so what MFU counts) never
 * change; and without expert parallelism the imbalance changes nothing, because every rank then
 * computes every expert over its own tokens.
 */
class LoadImbalanceProperties {

  private static final String MODEL = "{\"name\": \"qwen3-30b-a3b-4k\", \"layers\": 48,"
      + " \"hidden\": 2048, \"heads\": 32, \"kvHeads\": 4, \"headDim\": 128,"
      + " \"ffnHidden\": 6144, \"gatedMlp\": true, \"vocab\": 151936, \"seqLen\": 4096,"
      + " \"tiedEmbeddings\": false, \"moe\": {\"experts\": 128, \"topK\": 8,"
      + " \"expertFfnHidden\": 768}}";

  @Provide
  Arbitrary<Integer> eps() {
    return Arbitraries.of(1, 2, 4, 8, 16, 32);
  }

  @Provide
  Arbitrary<String> dispatchers() {
    return Arbitraries.of("alltoall", "deepep");
  }

  @Provide
  Arbitrary<Double> imbalances() {
    return Arbitraries.doubles().between(1.0, 4.0);
  }

  private static TrainingEstimate estimate(int ep, int tp, String dispatcher, int batch,
      double imbalance) {
    int dp = 64 / tp;
    if (ep == 1 && dispatcher.equals("deepep")) {
      dispatcher = "alltoall";
    }
    String layout = "{\"tp\": " + tp + ", \"pp\": 1, \"dp\": " + dp + ", \"ep\": " + ep
        + ", \"etp\": 1, \"microBatch\": 1, \"sequenceParallel\": " + (tp > 1)
        + ", \"zeroStage\": 1, \"engine\": \"megatron\", \"recompute\": \"selective\","
        + " \"moeDispatcher\": \"" + dispatcher + "\"}";
    return TrainingEstimator.analytical().estimate(io.hyperframes.request.Requests.parse(
        "{\"model\": " + MODEL + ", \"cluster\": {\"accelerator\": \"h100-sxm-80gb\","
            + " \"devices\": 64}, \"workload\": {\"type\": \"training\", \"precision\":"
            + " \"bf16-mixed\", \"globalBatchSize\": " + batch * dp + ", \"moeLoadImbalance\": "
            + imbalance + "}, \"layout\": " + layout + "}"));
  }

  @Property(tries = 1000)
  void moreImbalanceNeverShortensTheStepNorFreesMemory(@ForAll("eps") int ep,
      @ForAll("dispatchers") String dispatcher, @ForAll("imbalances") double a,
      @ForAll("imbalances") double b) {
    double low = Math.min(a, b);
    double high = Math.max(a, b);
    int tp = ep <= 16 ? 2 : 1;
    TrainingEstimate less = estimate(ep, tp, dispatcher, 2, low);
    TrainingEstimate more = estimate(ep, tp, dispatcher, 2, high);
    assertTrue(more.stepSeconds() >= less.stepSeconds() * (1 - 1e-12),
        () -> more.stepSeconds() + " < " + less.stepSeconds());
    assertTrue(more.time().allToAllSeconds() >= less.time().allToAllSeconds() * (1 - 1e-12));
    assertTrue(more.memory().activationsBytes() >= less.memory().activationsBytes());
    assertEquals(less.modelFlopsPerStep(), more.modelFlopsPerStep());
    assertEquals(less.activeParameters(), more.activeParameters());
    if (ep == 1) {
      assertEquals(less.stepSeconds(), more.stepSeconds());
      assertEquals(less.memory().totalBytes(), more.memory().totalBytes());
    }
  }
}
