package io.hyperframes.inference;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.hyperframes.hardware.Accelerator;
import io.hyperframes.catalog.Catalog;
import io.hyperframes.hardware.Cluster;
import io.hyperframes.model.TransformerSpec;
import io.hyperframes.precision.NumberFormat;
import java.util.List;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.DoubleRange;
import net.jqwik.api.constraints.IntRange;

/**
 * Laws of the capacity model ({@link Capacity}): less KV-cache memory never raises the throughput
 * at capacity; every feasible estimate is finite and positive,
 * and obeys its own flow (requests per iteration × the iterations a request runs = the requests
 * running, up to the token budget).
 */
class CapacityProperties {

  private static final String[] MODELS = {"llama3-8b", "llama2-70b", "qwen3-30b-a3b",
      "mixtral-8x7b", "gpt-oss-20b", "mistral-7b", "qwen3-32b"};
  private static final String[] ACCELERATORS = {"h100-sxm-80gb", "h200-sxm-141gb",
      "a100-sxm-80gb"};

  static CapacityEstimate capacity(int model, int accelerator, double memoryScale, int tp,
      int engine, int prompt, int output, int maxNumSeqs, int maxNumTokens, boolean fp8) {
    TransformerSpec m = Catalog.builtIn().models().get(MODELS[model]);
    Accelerator acc = Catalog.builtIn().accelerators().get(ACCELERATORS[accelerator]);
    acc = acc.withMemoryBytes(acc.memoryBytes() * memoryScale);
    var node = Catalog.builtIn().nodes().get(acc.defaultNode());
    int t = 1;
    while (t * 2 <= tp && m.heads() % (t * 2) == 0) {
      t *= 2;
    }
    Cluster c = new Cluster(acc, t, node.devicesPerNode(), acc.intraNode(), node.interNode());
    NumberFormat f = fp8 && acc.supports(NumberFormat.FP8_E4M3) ? NumberFormat.FP8_E4M3
        : NumberFormat.BF16;
    InferenceWorkload w = new InferenceWorkload(f, f, 1, prompt, output, 0, 0, 0, 99, 16);
    ServingEngine e = ServingEngine.values()[engine];
    CapacityWorkload cw = new CapacityWorkload(e, maxNumSeqs, maxNumTokens,
        e.defaultMemoryFraction(acc, t, maxNumTokens), true,
        LengthDistribution.of("workload.promptTokens", List.of(
            new LengthDistribution.Bin(prompt, 0.5),
            new LengthDistribution.Bin(Math.max(1, prompt / 4), 0.5))),
        LengthDistribution.of(output));
    return Capacity.estimate(InferenceEstimator.analytical(),
        new InferenceRequest(m, c, w, t, 1, 1, 1), cw);
  }

  @Property(tries = 1000)
  void lessKvMemoryNeverRaisesCapacity(@ForAll @IntRange(min = 0, max = 6) int model,
      @ForAll @IntRange(min = 0, max = 2) int accelerator,
      @ForAll @DoubleRange(min = 0.3, max = 1.0) double shrink,
      @ForAll @IntRange(min = 1, max = 8) int tp, @ForAll @IntRange(min = 0, max = 2) int engine,
      @ForAll @IntRange(min = 1, max = 16384) int prompt,
      @ForAll @IntRange(min = 1, max = 4096) int output,
      @ForAll @IntRange(min = 1, max = 2048) int maxNumSeqs,
      @ForAll @IntRange(min = 2048, max = 32768) int maxNumTokens, @ForAll boolean fp8) {
    CapacityEstimate full = capacity(model, accelerator, 1.0, tp, engine, prompt, output,
        maxNumSeqs, maxNumTokens, fp8);
    CapacityEstimate less = capacity(model, accelerator, shrink, tp, engine, prompt, output,
        maxNumSeqs, maxNumTokens, fp8);
    assertTrue(less.kvCacheTokens() <= full.kvCacheTokens() * (1 + 1e-12), () -> less + " vs "
        + full);
    assertTrue(less.outputTokensPerSecond() <= full.outputTokensPerSecond() * (1 + 1e-9),
        () -> less + "\nvs\n" + full);
  }

  @Property(tries = 1000)
  void everyFeasibleEstimateIsFiniteAndKeepsItsFlow(@ForAll @IntRange(min = 0, max = 6) int model,
      @ForAll @IntRange(min = 0, max = 2) int accelerator,
      @ForAll @DoubleRange(min = 0.3, max = 1.0) double memory,
      @ForAll @IntRange(min = 1, max = 8) int tp, @ForAll @IntRange(min = 0, max = 2) int engine,
      @ForAll @IntRange(min = 1, max = 16384) int prompt,
      @ForAll @IntRange(min = 1, max = 4096) int output,
      @ForAll @IntRange(min = 1, max = 2048) int maxNumSeqs,
      @ForAll @IntRange(min = 2048, max = 32768) int maxNumTokens, @ForAll boolean fp8) {
    CapacityEstimate c = capacity(model, accelerator, memory, tp, engine, prompt, output,
        maxNumSeqs, maxNumTokens, fp8);
    if (!c.feasible()) {
      assertTrue(!c.reasons().isEmpty(), c::toString);
      return;
    }
    for (double v : new double[] {c.outputTokensPerSecond(), c.requestsPerSecond(),
        c.iterationSeconds(), c.ttftSeconds(), c.concurrency()}) {
      assertTrue(Double.isFinite(v) && v > 0, c::toString);
    }
    assertTrue(Double.isFinite(c.tpotSeconds()) && c.tpotSeconds() >= 0, c::toString);
    assertTrue(c.concurrency() <= maxNumSeqs, c::toString);
    // Tokens per iteration never exceed the budget (SGLang's prefill iterations are their own).
    if (c.engine().mixesPrefillAndDecode()) {
      assertTrue(c.decodesPerIteration() + c.prefillTokensPerIteration()
          <= maxNumTokens * (1 + 1e-9), c::toString);
      // Little's law: the requests running are those entering per iteration times the
      // iterations each runs (at most the limit: the budget may bind first).
      double entering = c.requestsPerSecond() * c.iterationSeconds();
      assertTrue(entering * (c.meanOutputTokens() - 1) <= c.concurrency() * (1 + 1e-9),
          c::toString);
    }
  }
}
