package io.hyperframes.plan;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.hyperframes.HyperFrames;
import io.hyperframes.parallel.Recompute;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

/**
 * Laws of the uneven pipeline split ({@code layout.firstStageLayers}, {@code lastStageLayers})
 * over catalog models and pipeline depths: the even shares written out are the even layout, in
 * step time and in memory.
 */
class UnevenPipelineProperties {

  @Provide
  Arbitrary<String> models() {
    return Arbitraries.of("llama3-8b", "llama3-70b", "llama2-70b", "gpt3-175b",
        "qwen3-235b-a22b", "mixtral-8x22b");
  }

  @Provide
  Arbitrary<Integer> depths() {
    return Arbitraries.of(2, 4, 8);
  }

  private static TrainingEstimate estimate(String model, int pp, int first, int last) {
    return HyperFrames.estimate().model(model).accelerator("h100-sxm-80gb").devices(8 * pp)
        .training(t -> t.precision("bf16-mixed").globalBatchSize(64 * pp).tokens(1e10)
            .moeLoadImbalance(1.0))
        .layout(l -> {
          var spec = l.tp(8).pp(pp).dp(1).microBatch(1).sequenceParallel(true).zeroStage(1)
              .recompute(Recompute.FULL);
          return first > 0 ? spec.stageLayers(first, last) : spec;
        })
        .run();
  }

  @Property(tries = 60)
  void theEvenSharesWrittenOutAreTheEvenLayout(@ForAll("models") String model,
      @ForAll("depths") int pp) {
    int layers = io.hyperframes.catalog.Catalog.builtIn().model("model", model).layers();
    if (layers % pp != 0) {
      return;
    }
    TrainingEstimate even = estimate(model, pp, 0, 0);
    TrainingEstimate split = estimate(model, pp, layers / pp, layers / pp);
    assertEquals(even.stepSeconds(), split.stepSeconds(), 1e-12 * even.stepSeconds(), model);
    assertEquals(even.memory().totalBytes(), split.memory().totalBytes(),
        1e-12 * even.memory().totalBytes(), model);
  }
}
