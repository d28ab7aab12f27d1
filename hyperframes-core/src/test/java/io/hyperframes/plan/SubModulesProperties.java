package io.hyperframes.plan;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.hyperframes.catalog.Catalog;
import io.hyperframes.model.TransformerSpec;
import java.util.Arrays;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.DoubleRange;
import net.jqwik.api.constraints.IntRange;
import org.junit.jupiter.api.Test;

/**
 * Laws of DeepSpeed ZeRO-3's sub-module schedule ({@link SubModules}): its shares are shares,
 * it moves what the one-window-per-layer schedule moves, and it never exposes less than that
 * schedule does, since a sum of per-interval maxima is never below the maximum of the sums.
 */
class SubModulesProperties {

  private static final double ROUNDING = 1e-12;

  @Test
  void aGpt3LayerSplitsAsItsFourMatmuls() {
    TransformerSpec m = new TransformerSpec("gpt3-175b", 96, 12288, 96, 96, 4 * 12288, false,
        51200, 2048, true);
    SubModules s = SubModules.of(m, 1.0);
    // QKV 3h², output projection h², MLP up 4h², MLP down 4h² (no biases counted).
    double[] expected = {3 / 12.0, 1 / 12.0, 4 / 12.0, 4 / 12.0};
    for (int j = 0; j < 4; j++) {
      assertEquals(expected[j], s.parameters()[j], 1e-12, "parameters " + j);
      assertEquals(expected[j], s.compute()[j], 1e-12, "compute " + j);
    }
  }

  @Property(tries = 1000)
  void sharesSumToOneForEveryCatalogModel(@ForAll @IntRange(min = 0, max = 1000) int pick,
      @ForAll @DoubleRange(min = 0.0, max = 1.0) double denseShare) {
    var models = Catalog.builtIn().models().values().toArray(new TransformerSpec[0]);
    TransformerSpec m = models[pick % models.length];
    SubModules s = SubModules.of(m, denseShare);
    assertEquals(1.0, Arrays.stream(s.parameters()).sum(), 1e-9, m.name());
    assertEquals(1.0, Arrays.stream(s.compute()).sum(), 1e-9, m.name());
    assertTrue(Arrays.stream(s.parameters()).allMatch(p -> p > 0), m.name());
    assertTrue(Arrays.stream(s.compute()).allMatch(c -> c >= 0), m.name());
  }

  @Property(tries = 1000)
  void neverExposesLessThanOneWindowPerLayer(
      @ForAll @DoubleRange(min = 0.01, max = 0.99) double a,
      @ForAll @DoubleRange(min = 0.01, max = 0.99) double b,
      @ForAll @DoubleRange(min = 0.01, max = 0.99) double c,
      @ForAll @DoubleRange(min = 0.0, max = 1.0) double denseShare,
      @ForAll @DoubleRange(min = 0.0, max = 5.0) double gather,
      @ForAll boolean reshard,
      @ForAll @DoubleRange(min = 0.0, max = 5.0) double reduce,
      @ForAll @DoubleRange(min = 0.0, max = 5.0) double forward,
      @ForAll boolean recomputes,
      @ForAll @DoubleRange(min = 0.0, max = 10.0) double backward,
      @ForAll @DoubleRange(min = 0.0, max = 1.0) double kappa) {
    double sum = a + b + c + 1;
    double[] p = {a / sum, b / sum, c / sum, 1 / sum};
    double[] w = {denseShare * c / sum + 1 - denseShare, denseShare * b / sum,
        denseShare * a / sum, denseShare / sum};
    SubModules s = new SubModules(p, w);
    double gatherBackward = reshard ? gather : 0.0;
    double recompute = recomputes ? forward : 0.0;
    double sub = s.unitExposed(gather, gatherBackward, reduce, forward, recomputes, recompute,
        backward, kappa);
    // One window per layer: the forward hides its gathers, the backward (with the recomputed
    // forward) its gathers and the reduce-scatter.
    double layer = TrainingEstimator.exposed(gather, forward, kappa)
        + TrainingEstimator.exposed(gatherBackward + (recomputes ? gather : 0.0) + reduce,
            backward + recompute, kappa);
    assertTrue(sub >= layer - ROUNDING, sub + " < " + layer);
    // It hides nothing it does not move: at most every collective, whole.
    double moved = gather + gatherBackward + (recomputes ? gather : 0.0) + reduce;
    assertTrue(sub <= moved + ROUNDING, sub + " > " + moved);
  }
}
