package io.hyperframes.plan;

import static org.junit.jupiter.api.Assertions.assertTrue;

import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

/**
 * Laws of {@code layout.overlapMoeComm}: overlapping the expert-parallel exchange with another
 * micro-batch's computation never lengthens the step, never changes the computation, and never
 * hides the exchanges of the chunks that run alone (warm-up and cool-down).
 */
class ExpertOverlapProperties {

  private static final String MODEL = "{\"name\": \"qwen3-235b-a22b-4k\", \"layers\": 94,"
      + " \"hidden\": 4096, \"heads\": 64, \"kvHeads\": 4, \"headDim\": 128,"
      + " \"ffnHidden\": 12288, \"gatedMlp\": true, \"vocab\": 151936, \"seqLen\": 4096,"
      + " \"tiedEmbeddings\": false, \"moe\": {\"experts\": 128, \"topK\": 8,"
      + " \"expertFfnHidden\": 1536}}";

  @Provide
  Arbitrary<Integer> eps() {
    return Arbitraries.of(2, 4, 8, 16, 32);
  }

  @Provide
  Arbitrary<Integer> pps() {
    return Arbitraries.of(1, 4);
  }

  @Provide
  Arbitrary<String> dispatchers() {
    return Arbitraries.of("alltoall", "deepep");
  }

  private static TrainingEstimate estimate(int ep, int pp, String dispatcher, int batch,
      boolean overlap) {
    int dp = 256 / (2 * pp);
    String layout = "{\"tp\": 2, \"pp\": " + pp + ", \"virtualStages\": " + (pp > 1 ? 2 : 1)
        + ", \"dp\": " + dp + ", \"ep\": " + ep + ", \"etp\": 1, \"microBatch\": 1,"
        + " \"sequenceParallel\": true, \"zeroStage\": 1, \"engine\": \"megatron\","
        + " \"recompute\": \"selective\", \"moeDispatcher\": \"" + dispatcher + "\","
        + " \"overlapMoeComm\": " + overlap + "}";
    return TrainingEstimator.analytical().estimate(io.hyperframes.request.Requests.parse(
        "{\"model\": " + MODEL + ", \"cluster\": {\"accelerator\": \"h100-sxm-80gb\","
            + " \"devices\": 256}, \"workload\": {\"type\": \"training\", \"precision\":"
            + " \"bf16-mixed\", \"globalBatchSize\": " + batch * dp + "}, \"layout\": "
            + layout + "}"));
  }

  @Property(tries = 1000)
  void overlapNeverLengthensTheStep(@ForAll("eps") int ep, @ForAll("pps") int pp,
      @ForAll("dispatchers") String dispatcher, @ForAll("batches") int batch) {
    TrainingEstimate plain = estimate(ep, pp, dispatcher, batch, false);
    TrainingEstimate overlapped = estimate(ep, pp, dispatcher, batch, true);
    assertTrue(overlapped.stepSeconds() <= plain.stepSeconds() * (1 + 1e-12),
        () -> overlapped.stepSeconds() + " > " + plain.stepSeconds());
    assertTrue(overlapped.time().computeSeconds() == plain.time().computeSeconds());
    // The chunks that run alone keep their exchanges: pp 1 the first forward and last backward
    // of the micro-batches, else 2(pp − 1) + (v − 1)·pp + 1 of the m·v chunk passes.
    double passes = pp == 1 ? batch : 2.0 * batch;
    double alone = pp == 1 ? 1 : 2.0 * (pp - 1) + pp + 1;
    double kept = Math.min(1.0, alone / passes);
    assertTrue(overlapped.time().allToAllSeconds()
        >= kept * plain.time().allToAllSeconds() * (1 - 1e-9),
        () -> overlapped.time().allToAllSeconds() + " < " + kept + " of "
            + plain.time().allToAllSeconds());
  }

  @Provide
  Arbitrary<Integer> batches() {
    return Arbitraries.of(1, 2, 4, 8, 16, 64);
  }
}
