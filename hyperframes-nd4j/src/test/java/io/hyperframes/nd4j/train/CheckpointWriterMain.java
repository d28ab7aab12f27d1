package io.hyperframes.nd4j.train;

import java.nio.file.Path;
import java.util.Map;
import org.deeplearning4j.nn.multilayer.MultiLayerNetwork;

/** Child process of {@link AsyncCheckpointerTest}: writes checkpoints until it is killed. */
public final class CheckpointWriterMain {
  private CheckpointWriterMain() {}

  public static void main(String[] args) throws Exception {
    Path dir = Path.of(args[0]);
    MultiLayerNetwork net = AsyncCheckpointerTest.network(1500);
    try (AsyncCheckpointer c = new AsyncCheckpointer(dir, 3)) {
      for (long step = 1; ; step++) {
        net.params().addi(1.0);
        c.save(net, step, Map.of("scale", 1024.0 * step)).get();
        System.out.println("saved " + step);
        System.out.flush();
      }
    }
  }
}
