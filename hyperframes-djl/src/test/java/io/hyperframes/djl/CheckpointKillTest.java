package io.hyperframes.djl;

import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.djl.Model;
import ai.djl.engine.Engine;
import ai.djl.ndarray.types.DataType;
import ai.djl.ndarray.types.Shape;
import ai.djl.nn.Activation;
import ai.djl.nn.SequentialBlock;
import ai.djl.nn.core.Linear;
import ai.djl.training.Trainer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A training process killed while it checkpoints leaves the previous checkpoint loadable: the
 * child JVM trains and checkpoints every step until it is killed at a random moment.
 */
class CheckpointKillTest {

  /** The wide MLP the child trains (4.4 MB of parameters, so writes take a while). */
  static Model wide() {
    Engine.getInstance().setRandomSeed(3);
    SequentialBlock block = new SequentialBlock()
        .add(Linear.builder().setUnits(1024).build()).add(Activation::relu)
        .add(Linear.builder().setUnits(1024).build()).add(Activation::relu)
        .add(Linear.builder().setUnits(Mlps.CLASSES).build());
    Model model = Model.newInstance("checkpoint-kill", "PyTorch");
    model.setBlock(block);
    block.initialize(model.getNDManager(), DataType.FLOAT32, new Shape(1, Mlps.FEATURES));
    return model;
  }

  /** Child process: trains and checkpoints every step until killed. */
  public static void main(String[] args) throws Exception {
    System.setProperty("ai.djl.offline", "true");
    try (Model model = wide(); Trainer t = Mlps.trainer(model, 64)) {
      DjlTrainer.train(t).data(Mlps.dataset(model.getNDManager(), Mlps.rows(640, 1), 64, true))
          .epochs(1_000_000).checkpoints(Path.of(args[0]), 1, 3).fit();
    }
  }

  @Test
  void theLatestCheckpointSurvivesAKill(@TempDir Path dir) throws Exception {
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    for (int round = 0; round < 3; round++) {
      Path d = dir.resolve("round-" + round);
      Process child = new ProcessBuilder(java, "-Dai.djl.offline=true", "-cp",
          System.getProperty("java.class.path"), CheckpointKillTest.class.getName(),
          d.toString()).redirectErrorStream(true).redirectOutput(dir.resolve("child-" + round
          + ".log").toFile()).start();
      try {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (DjlCheckpoints.list(d).size() < 2 + round && System.nanoTime() < deadline) {
          assertTrue(child.isAlive(), "child died: " + Files.readString(
              dir.resolve("child-" + round + ".log")));
          Thread.sleep(5);
        }
        Thread.sleep(round * 7L);
      } finally {
        child.destroyForcibly();
        assertTrue(child.waitFor(30, TimeUnit.SECONDS));
      }
      assertTrue(DjlCheckpoints.list(d).size() >= 1, "checkpoints were written");
      DjlCheckpoints.Checkpoint c = DjlCheckpoints.latest(d).orElseThrow();
      assertTrue(c.step() >= 1);
      try (Model fresh = wide()) {
        c.restore(fresh.getBlock(), fresh.getNDManager());
      }
    }
  }
}
