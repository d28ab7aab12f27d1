package io.hyperframes.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;

import io.hyperframes.nd4j.FusedDense;
import io.hyperframes.nd4j.dl4j.FusedDenseLayer;
import org.deeplearning4j.nn.multilayer.MultiLayerNetwork;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The networks the bench commands compare: the DL4J side that runs on fused layers
 * ({@code dl4jAccelerated} in {@code bench train} and {@code bench infer}) runs them in the
 * precision the command resolved, not in a fixed one, and DL4J's own network has none.
 */
class TrainBenchNetworksTest {

  @ParameterizedTest
  @EnumSource(FusedDense.Precision.class)
  void theAcceleratedDl4jNetworkRunsItsHiddenLayersInTheAskedPrecision(
      FusedDense.Precision precision) {
    MultiLayerNetwork net = TrainBench.acceleratedDl4jNetwork(precision);
    for (int i = 0; i < 2; i++) {
      var layer = assertInstanceOf(FusedDenseLayer.class,
          net.getLayerWiseConfigurations().getConf(i).getLayer(), "hidden layer " + i);
      assertEquals(precision, layer.getPrecision(), "hidden layer " + i);
    }
    for (int i = 0; i < 3; i++) {
      assertFalse(TrainBench.dl4jNetwork().getLayerWiseConfigurations().getConf(i)
          .getLayer() instanceof FusedDenseLayer, "DL4J's own network, layer " + i);
    }
  }
}
