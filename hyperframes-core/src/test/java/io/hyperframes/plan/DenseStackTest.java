package io.hyperframes.plan;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.hyperframes.HyperFrames;
import io.hyperframes.model.DenseStackSpec;
import java.util.List;
import org.junit.jupiter.api.Test;

/** A dense stack (an MLP) is estimated and planned data-parallel, from JSON or the builder. */
class DenseStackTest {

  private static final DenseStackSpec MLP =
      new DenseStackSpec("mlp", List.of(784, 2048, 2048, 10));

  @Test
  void parametersAndFlopsFollowTheWidths() {
    assertEquals(785.0 * 2048 + 2049.0 * 2048 + 2049.0 * 10, MLP.parameters(), 0.0);
    assertEquals(6.0 * (784 * 2048 + 2048 * 2048 + 2048 * 10), MLP.trainingFlopsPerSample(),
        0.0);
    assertEquals(3, MLP.layers());
  }

  @Test
  void aPlanIsDataParallelWithTheStacksParametersAndFlops() {
    Plan p = HyperFrames.plan().model(MLP).accelerator("a100-sxm-80gb").devices(1, 64)
        .training(t -> t.precision("bf16-mixed").globalBatchSize(4096).tokens(1e10)).run();
    assertTrue(p.feasible(), p.reasons().toString());
    TrainingEstimate e = p.best().estimate();
    assertEquals(1, e.layout().tp());
    assertEquals(1, e.layout().pp());
    assertEquals(MLP.parameters(), e.parameters(), 0.0);
    assertTrue(e.stepSeconds() > 0 && e.mfu() > 0 && e.mfu() < 1, e.toString());
    // Model FLOPs of a step: 6 per multiply-add of every sample of the global batch.
    assertEquals(MLP.trainingFlopsPerSample() * 4096, e.modelFlopsPerStep(), 1e-6);
    assertFalse(p.goldenParameters().isEmpty());
  }

  @Test
  void moreDataParallelRanksNeverMakeTheComputeSlower() {
    double previous = Double.MAX_VALUE;
    for (int devices : new int[] {1, 2, 4, 8}) {
      int d = devices;
      TrainingEstimate e = HyperFrames.estimate().model(MLP).accelerator("a100-sxm-80gb")
          .devices(d).training(t -> t.precision("bf16-mixed").globalBatchSize(4096))
          .layout(l -> l.zeroStage(0).microBatch(4096 / d)).run();
      assertTrue(e.time().computeSeconds() <= previous * 1.0000001,
          devices + " devices: " + e.time().computeSeconds() + " after " + previous);
      previous = e.time().computeSeconds();
    }
  }

  @Test
  void badStacksAndLayoutsNameTheField() {
    assertTrue(assertThrows(IllegalArgumentException.class,
        () -> new DenseStackSpec("x", List.of(784))).getMessage().startsWith("model.dense:"));
    assertTrue(assertThrows(IllegalArgumentException.class,
        () -> new DenseStackSpec("x", List.of(784, 0))).getMessage()
        .startsWith("model.dense[1]:"));
    String twoKinds = """
        {"model": {"name": "x", "dense": [4, 2], "layers": 2},
         "cluster": {"accelerator": "a100-sxm-80gb", "devices": 8},
         "workload": {"type": "training", "precision": "bf16-mixed", "globalBatchSize": 64}}
        """;
    assertTrue(assertThrows(IllegalArgumentException.class,
        () -> HyperFrames.estimate(twoKinds)).getMessage()
        .startsWith("model.dense:"));
    IllegalArgumentException tp = assertThrows(IllegalArgumentException.class,
        () -> HyperFrames.plan().model(MLP).accelerator("a100-sxm-80gb").devices(8, 8)
            .training(t -> t.precision("bf16-mixed").globalBatchSize(64))
            .layout(l -> l.tp(2)).run());
    assertTrue(tp.getMessage().startsWith("layout.tp:"), tp.getMessage());
    IllegalArgumentException batch = assertThrows(IllegalArgumentException.class,
        () -> HyperFrames.plan().model(MLP).accelerator("a100-sxm-80gb").devices(8, 8)
            .training(t -> t.precision("bf16-mixed")).run());
    assertTrue(batch.getMessage().startsWith("workload.globalBatchSize:"), batch.getMessage());
  }
}
