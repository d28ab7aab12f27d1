package io.hyperframes.inference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.hyperframes.HyperFrames;
import io.hyperframes.catalog.Catalog;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.DoubleRange;
import net.jqwik.api.constraints.IntRange;
import org.junit.jupiter.api.Test;

/**
 * {@code workload.moeLoadImbalance} of a serving request: the busiest expert-parallel rank's
 * routed copies over uniform routing slow a layout whose experts are split over ranks, and
 * nothing else.
 */
class MoeLoadImbalanceServingTest {

  /**
   * Mixtral 8x7B in FP8 on 8 H100 at a batch of {@code batch}: ep 8 over 8 replicas of tp 1
   * (attention data-parallel, the experts' dispatch and combine between them) or, at ep 1, 8
   * replicas each holding every expert.
   */
  private static String mixtral(int batch, int ep, String imbalance) {
    return "{\"model\": {\"catalog\": \"mixtral-8x7b\"},"
        + " \"cluster\": {\"accelerator\": \"h100-sxm-80gb\", \"devices\": 8},"
        + " \"workload\": {\"type\": \"inference\", \"batchSize\": " + batch + ","
        + " \"precision\": \"fp8\", \"promptTokens\": 1024, \"outputTokens\": 256"
        + (imbalance == null ? "" : ", \"moeLoadImbalance\": " + imbalance) + "},"
        + " \"layout\": {\"tp\": 1, \"ep\": " + ep + ", \"dp\": 8}}";
  }

  private static InferenceEstimate serve(String json) {
    return Serving.evaluate(Serving.parse(json, Catalog.builtIn())).estimate();
  }

  @Test
  void oneIsUniformRoutingAndTheDefault() {
    assertEquals(serve(mixtral(64, 8, null)), serve(mixtral(64, 8, "1")));
    assertEquals(serve(mixtral(64, 8, null)), serve(mixtral(64, 8, "1.0")));
  }

  /**
   * At ep 8 over 8 ranks (one expert a rank) a skew of 1.5 makes prefill, which computes many
   * rows per expert, slower by more than a decode step of 64 sequences, which reads the same
   * weights; the weights, the KV cache and the parameters stay the real routing's.
   */
  @Test
  void itSlowsTheExpertParallelStepAndNotTheMemory() {
    InferenceEstimate uniform = serve(mixtral(64, 8, null));
    InferenceEstimate skewed = serve(mixtral(64, 8, "1.5"));
    double prefill = skewed.prefillSeconds() / uniform.prefillSeconds();
    double decode = skewed.decodeSecondsPerToken() / uniform.decodeSecondsPerToken();
    assertTrue(prefill > 1.1 && decode > 1.0 && prefill > decode,
        "prefill x" + prefill + ", decode x" + decode);
    assertEquals(uniform.parameters(), skewed.parameters());
    assertEquals(uniform.weightsBytes(), skewed.weightsBytes());
    assertEquals(uniform.kvCacheBytes(), skewed.kvCacheBytes());
    assertEquals(uniform.expertWeightBytesPerDecodeStep(),
        skewed.expertWeightBytesPerDecodeStep());
  }

  /** Experts split within one replica (tp 8, ep 8): the busiest rank computes more. */
  @Test
  void withinAReplicaTheBusiestRankComputesMore() {
    String uniform = mixtral(64, 8, null).replace("\"tp\": 1, \"ep\": 8, \"dp\": 8",
        "\"tp\": 8, \"ep\": 8, \"dp\": 1");
    String skewed = mixtral(64, 8, "2").replace("\"tp\": 1, \"ep\": 8, \"dp\": 8",
        "\"tp\": 8, \"ep\": 8, \"dp\": 1");
    assertTrue(serve(skewed).prefillSeconds() > serve(uniform).prefillSeconds());
  }

  /** Every rank holding every expert (ep 1): the skew waits for no other rank. */
  @Test
  void withoutExpertParallelismNothingChanges() {
    InferenceEstimate uniform = serve(mixtral(64, 1, null));
    InferenceEstimate skewed = serve(mixtral(64, 1, "4"));
    assertEquals(uniform, skewed);
    // A dense model has no router: the field is accepted and changes nothing.
    String dense = mixtral(16, 1, "2").replace("mixtral-8x7b", "llama3-8b");
    assertEquals(serve(mixtral(16, 1, null).replace("mixtral-8x7b", "llama3-8b")), serve(dense));
  }

  @Test
  void aBadValueIsNamed() {
    for (String bad : new String[] {"0.5", "65", "-1"}) {
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
          () -> serve(mixtral(64, 8, bad)));
      assertTrue(e.getMessage().contains("workload.moeLoadImbalance: must be in [1, 64]")
          && e.getMessage().contains(bad.startsWith("-") ? "-1" : bad), e.getMessage());
    }
  }

  /** The fluent builder writes the same field. */
  @Test
  void theBuilderSetsIt() {
    var plain = HyperFrames.serve().model("mixtral-8x7b").accelerator("h100-sxm-80gb")
        .devices(8).precision("fp8").batch(64).prompt(1024).output(256)
        .layout(l -> l.tp(1).ep(8).dp(8));
    InferenceResult uniform = plain.run();
    InferenceResult skewed = plain.moeLoadImbalance(1.5).run();
    assertTrue(skewed.estimate().prefillSeconds() > uniform.estimate().prefillSeconds());
  }

  /** The busiest rank's step never shortens as its share of the routed copies grows. */
  @Property(tries = 1000)
  void aLargerSkewIsNeverFaster(@ForAll @DoubleRange(min = 1, max = 8) double a,
      @ForAll @DoubleRange(min = 1, max = 8) double b,
      @ForAll @IntRange(min = 1, max = 256) int batch) {
    double lo = Math.min(a, b);
    double hi = Math.max(a, b);
    InferenceEstimate low = serve(mixtral(batch, 8, Double.toString(lo)));
    InferenceEstimate high = serve(mixtral(batch, 8, Double.toString(hi)));
    assertTrue(high.prefillSeconds() >= low.prefillSeconds()
        && high.decodeSecondsPerToken() >= low.decodeSecondsPerToken(),
        lo + " -> " + hi + " at batch " + batch);
  }
}
