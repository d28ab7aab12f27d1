package io.hyperframes.djl;

import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.Test;

/**
 * DJL users do not pull ND4J: nothing of ND4J, DL4J or oneDNN's preset is on this module's
 * class path (its compile and test dependencies together).
 */
class ModuleBoundaryTest {

  @Test
  void noNd4jDl4jOrOneDnnOnTheClassPath() {
    for (String name : new String[] {"org.nd4j.linalg.factory.Nd4j",
        "org.deeplearning4j.nn.multilayer.MultiLayerNetwork", "org.bytedeco.dnnl.global.dnnl",
        "io.hyperframes.nd4j.FusedDense"}) {
      assertThrows(ClassNotFoundException.class, () -> Class.forName(name), name);
    }
  }
}
