package io.hyperframes.nd4j.train;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.io.File;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.deeplearning4j.nn.conf.MultiLayerConfiguration;
import org.deeplearning4j.nn.conf.NeuralNetConfiguration;
import org.deeplearning4j.nn.conf.layers.DenseLayer;
import org.deeplearning4j.nn.conf.layers.OutputLayer;
import org.deeplearning4j.nn.multilayer.MultiLayerNetwork;
import org.deeplearning4j.util.ModelSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.nd4j.linalg.activations.Activation;
import org.nd4j.linalg.learning.config.Adam;
import org.nd4j.linalg.lossfunctions.LossFunctions;

/** Atomic background checkpoints that survive a killed process. */
class AsyncCheckpointerTest {

  @TempDir Path dir;

  static MultiLayerNetwork network(int width) {
    MultiLayerConfiguration conf = new NeuralNetConfiguration.Builder().seed(3)
        .updater(new Adam(1e-3)).list()
        .layer(new DenseLayer.Builder().nIn(width).nOut(width).activation(Activation.RELU)
            .build())
        .layer(new OutputLayer.Builder(LossFunctions.LossFunction.MSE).nIn(width).nOut(4)
            .activation(Activation.IDENTITY).build())
        .build();
    MultiLayerNetwork net = new MultiLayerNetwork(conf);
    net.init();
    return net;
  }

  @Test
  void checkpointsLoadWithTheirStateAndOnlyTheNewestAreKept() throws Exception {
    MultiLayerNetwork net = network(16);
    try (AsyncCheckpointer c = new AsyncCheckpointer(dir, 2)) {
      for (int step = 1; step <= 4; step++) {
        net.params().addi(1.0);
        c.save(net, step, Map.of("scale", 2.0 * step)).get();
      }
    }
    List<Path> all = AsyncCheckpointer.checkpoints(dir);
    assertEquals(2, all.size());
    Path latest = AsyncCheckpointer.latest(dir).orElseThrow();
    MultiLayerNetwork restored = ModelSerializer.restoreMultiLayerNetwork(latest.toFile(), true);
    assertEquals(net.params(), restored.params());
    assertEquals(8.0, AsyncCheckpointer.extraState(latest).get("scale"), 0.0);
  }

  /** A child JVM killed while writing leaves the previous checkpoint loadable. */
  @Test
  void aProcessKilledMidWriteLeavesThePreviousCheckpointLoadable() throws Exception {
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    Process child = new ProcessBuilder(java, "-cp", System.getProperty("java.class.path"),
        CheckpointWriterMain.class.getName(), dir.toString())
        .redirectErrorStream(true).start();
    try (BufferedReader out = new BufferedReader(new InputStreamReader(child.getInputStream(),
        StandardCharsets.UTF_8))) {
      String line;
      while ((line = out.readLine()) != null && !line.startsWith("saved 2")) {
        // wait for two complete checkpoints
      }
      assertTrue(line != null, "child ended before saving twice");
      // The third write is in progress now (each takes tens of milliseconds): kill it.
      Thread.sleep(15);
      child.destroyForcibly();
      assertTrue(child.waitFor(30, TimeUnit.SECONDS));
    }
    Path latest = AsyncCheckpointer.latest(dir).orElseThrow();
    MultiLayerNetwork restored = ModelSerializer.restoreMultiLayerNetwork(latest.toFile(), true);
    assertTrue(restored.params().length() > 0);
    double scale = AsyncCheckpointer.extraState(latest).get("scale");
    long step = Long.parseLong(latest.getFileName().toString().replaceAll("\\D", ""));
    assertEquals(1024.0 * step, scale, 0.0);
    for (File f : dir.toFile().listFiles()) {
      assertTrue(f.getName().endsWith(".zip") || f.getName().endsWith(".tmp"), f.getName());
    }
  }
}
