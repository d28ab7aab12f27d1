package io.hyperframes.plan;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.hyperframes.request.Requests;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

/**
 * Law of selective recomputation by module: naming one more module never stores more
 * activations and never shortens the step, on MoE and dense models, at any micro-batch and
 * sequence length.
 */
class RecomputeModulesProperties {

  private static final String MOE = "\"moe\": {\"experts\": 64, \"topK\": 4,"
      + " \"expertFfnHidden\": 1024, \"sharedExperts\": 1, \"sharedExpertFfnHidden\": 2048,"
      + " \"firstDenseLayers\": 2}";

  private static TrainingEstimate estimate(boolean moe, int seqLen, int microBatch, int tp,
      List<String> modules) {
    String model = String.format(Locale.ROOT, "{\"name\": \"law\", \"layers\": 16,"
        + " \"hidden\": 2048, \"heads\": 16, \"kvHeads\": 4, \"ffnHidden\": 8192,"
        + " \"gatedMlp\": true, \"vocab\": 32000, \"seqLen\": %d, \"tiedEmbeddings\": false%s}",
        seqLen, moe ? ", " + MOE : "");
    String list = modules.isEmpty() ? "\"recompute\": \"selective\""
        : "\"recomputeModules\": [\"" + String.join("\", \"", modules) + "\"]";
    String request = "{\"model\": " + model + ", \"cluster\": {\"accelerator\":"
        + " \"h100-sxm-80gb\", \"devices\": 16}, \"workload\": {\"type\": \"training\","
        + " \"precision\": \"bf16-mixed\", \"globalBatchSize\": 64, \"trainingTokens\": 1e10},"
        + " \"layout\": {\"tp\": " + tp + ", \"pp\": 2, \"microBatch\": " + microBatch
        + (moe ? ", \"ep\": 2" : "") + ", \"sequenceParallel\": " + (tp > 1)
        + ", \"virtualStages\": 1, \"zeroStage\": 1, \"engine\": \"megatron\", " + list + "}}";
    return TrainingEstimator.analytical().estimate(Requests.parse(request));
  }

  @Provide
  Arbitrary<Set<String>> moeModules() {
    return Arbitraries.of("core_attn", "layernorm", "mlp", "moe_act", "moe", "shared_experts")
        .set();
  }

  @Property(tries = 1000)
  void oneMoreModuleNeverStoresMoreNorRunsFaster(@ForAll("moeModules") Set<String> base,
      @ForAll("moeModules") Set<String> extra, @ForAll boolean moe,
      @ForAll("seqLens") int seqLen, @ForAll("microBatches") int microBatch,
      @ForAll("tps") int tp) {
    List<String> before = new ArrayList<>(onModel(base, moe));
    List<String> after = new ArrayList<>(before);
    for (String m : onModel(extra, moe)) {
      if (!after.contains(m)) {
        after.add(m);
      }
    }
    // An empty list means the default (core_attn): name it so that "before" is a subset.
    if (before.isEmpty()) {
      before.add("core_attn");
      if (!after.contains("core_attn")) {
        after.add("core_attn");
      }
    }
    TrainingEstimate less = estimate(moe, seqLen, microBatch, tp, before);
    TrainingEstimate more = estimate(moe, seqLen, microBatch, tp, after);
    double a = less.memory().activationsBytes();
    double b = more.memory().activationsBytes();
    assertTrue(b <= a * (1 + 1e-12), before + " -> " + after + ": " + a + " -> " + b);
    assertTrue(more.stepSeconds() >= less.stepSeconds() * (1 - 1e-12),
        before + " -> " + after + ": " + less.stepSeconds() + " -> " + more.stepSeconds());
    assertTrue(Double.isFinite(more.stepSeconds()) && more.stepSeconds() > 0);
  }

  /** The modules the model has: the MoE ones only with experts. */
  private static List<String> onModel(Set<String> modules, boolean moe) {
    List<String> out = new ArrayList<>();
    for (String m : modules) {
      if (moe || !(m.startsWith("moe") || m.equals("shared_experts"))) {
        out.add(m);
      }
    }
    return out;
  }

  @Provide
  Arbitrary<Integer> seqLens() {
    return Arbitraries.of(1024, 4096, 16384);
  }

  @Provide
  Arbitrary<Integer> microBatches() {
    return Arbitraries.of(1, 2, 4);
  }

  @Provide
  Arbitrary<Integer> tps() {
    return Arbitraries.of(1, 2, 4);
  }
}
