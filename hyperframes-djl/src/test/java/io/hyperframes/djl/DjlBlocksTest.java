package io.hyperframes.djl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.assertThrows;

import ai.djl.Model;
import ai.djl.nn.Activation;
import ai.djl.nn.SequentialBlock;
import ai.djl.nn.core.Linear;
import io.hyperframes.HyperFrames;
import io.hyperframes.plan.TrainingEstimate;
import org.junit.jupiter.api.Test;

/** The planner reads a DJL block's parameters as DJL counts them. */
class DjlBlocksTest {

  @Test
  void theCountIsDjlsAndReachesTheEstimate() {
    try (Model model = Mlps.model(1)) {
      long djl = 0;
      for (var p : model.getBlock().getParameters()) {
        djl += p.getValue().getArray().size();
      }
      // 32-64-64-4 with biases: 32·64+64 + 64·64+64 + 64·4+4
      assertEquals(6532, djl);
      assertEquals(djl, DjlBlocks.parameters(model.getBlock()));
      assertEquals(6, DjlBlocks.shapes(model.getBlock()).size());

      TrainingEstimate e = HyperFrames.estimate()
          .model(DjlBlocks.spec("test-mlp", model.getBlock()))
          .accelerator("a100-sxm-80gb").devices(8)
          .training(t -> t.precision("bf16-mixed").globalBatchSize(256))
          .layout(l -> l.tp(1).pp(1).dp(8).zeroStage(0))
          .run();
      assertEquals(djl, e.parameters(), 0.0);
      assertEquals(2.0 * djl, e.memory().weightsBytes(), 1e-9, "BF16 weights");
    }
  }

  @Test
  void planFromABlockCarriesDjlsParameterCount() {
    try (Model model = Mlps.model(1)) {
      long djl = DjlBlocks.parameters(model.getBlock());
      io.hyperframes.model.DenseStackSpec stack = DjlBlocks.dense("test-mlp", model.getBlock());
      assertEquals(java.util.List.of(32, 64, 64, 4), stack.widths());
      io.hyperframes.plan.Plan p = HyperFrames.plan().model(stack)
          .accelerator("a100-sxm-80gb").devices(1, 16)
          .training(t -> t.precision("bf16-mixed").globalBatchSize(4096).tokens(1e9)).run();
      assertTrue(p.feasible(), p.reasons().toString());
      assertEquals(djl, p.best().estimate().parameters(), 0.0);
      assertTrue(p.best().estimate().stepSeconds() > 0);
    }
  }

  @Test
  void blocksThatAreNotDenseStacksAreNamed() {
    try (ai.djl.ndarray.NDManager m = ai.djl.ndarray.NDManager.newBaseManager("PyTorch")) {
      SequentialBlock noBias = new SequentialBlock()
          .add(Linear.builder().setUnits(8).optBias(false).build());
      noBias.initialize(m, ai.djl.ndarray.types.DataType.FLOAT32,
          new ai.djl.ndarray.types.Shape(1, 4));
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
          () -> DjlBlocks.dense("x", noBias));
      assertTrue(e.getMessage().contains("without a bias"), e.getMessage());
      SequentialBlock norm = new SequentialBlock().add(Linear.builder().setUnits(8).build())
          .add(ai.djl.nn.norm.LayerNorm.builder().build());
      norm.initialize(m, ai.djl.ndarray.types.DataType.FLOAT32,
          new ai.djl.ndarray.types.Shape(1, 4));
      e = assertThrows(IllegalArgumentException.class, () -> DjlBlocks.dense("x", norm));
      assertTrue(e.getMessage().contains("LayerNorm has parameters"), e.getMessage());
      assertEquals(DjlBlocks.parameters(norm), DjlBlocks.spec("x", norm).parameters(), 0.0);
    }
  }

  @Test
  void anUninitialisedBlockIsNamed() {
    SequentialBlock b = new SequentialBlock().add(Linear.builder().setUnits(4).build())
        .add(Activation::relu);
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> DjlBlocks.parameters(b));
    assertTrue(e.getMessage().startsWith("block: parameter"), e.getMessage());
  }
}
