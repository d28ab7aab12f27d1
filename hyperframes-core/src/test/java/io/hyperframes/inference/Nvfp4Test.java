package io.hyperframes.inference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.hyperframes.catalog.Catalog;
import io.hyperframes.hardware.Cluster;
import io.hyperframes.model.TransformerSpec;
import io.hyperframes.precision.NumberFormat;
import org.junit.jupiter.api.Test;

/**
 * NVFP4 serving: the format's bytes with its block scales, Blackwell's FP4 peaks, FP4 matmuls
 * with attention in 16 bits, and a refusal where the accelerator has no FP4 tensor cores.
 */
class Nvfp4Test {

  private static final Catalog CATALOG = Catalog.builtIn();
  private static final InferenceEstimator ESTIMATOR = InferenceEstimator.analytical();

  private static Cluster one(String accelerator) {
    var a = CATALOG.accelerators().get(accelerator);
    var node = CATALOG.nodes().get(a.defaultNode());
    return new Cluster(a, 1, node.devicesPerNode(), a.intraNode(), node.interNode());
  }

  private static InferenceWorkload workload(NumberFormat weights, int batch, int prompt) {
    return new InferenceWorkload(weights, NumberFormat.FP8_E4M3, batch, prompt, 256, 0, 0, 0, 99,
        16);
  }

  @Test
  void theFormatHoldsFourAndAHalfBitsAnElement() {
    assertEquals(NumberFormat.NVFP4, NumberFormat.fromId("workload.precision", "NVFP4"));
    assertEquals(4.5 / 8, NumberFormat.NVFP4.bytes(), 0.0, "16 E2M1 elements + one E4M3 scale");
    assertEquals(6.0, NumberFormat.NVFP4.maxValue(), 0.0);
    assertTrue(NumberFormat.NVFP4.isFloating() && NumberFormat.NVFP4.isNarrowFloat());
    assertFalse(NumberFormat.NVFP4.isFp8());
    assertEquals(NumberFormat.NVFP4, workload(NumberFormat.NVFP4, 1, 128).compute());
  }

  @Test
  void blackwellComputesInFp4AtTwiceItsFp8Peak() {
    for (String id : new String[] {"b200-sxm-192gb", "gb200-186gb"}) {
      var a = CATALOG.accelerators().get(id);
      assertTrue(a.supports(NumberFormat.NVFP4), id);
      assertEquals(2 * a.peakFlopsPerSecond().get(NumberFormat.FP8_E4M3),
          a.peakFlopsPerSecond().get(NumberFormat.NVFP4), 1.0, id);
    }
    assertEquals(NumberFormat.BF16, InferenceEstimator.attentionFormat(
        CATALOG.accelerators().get("b200-sxm-192gb"), NumberFormat.NVFP4));
  }

  @Test
  void fp4WeightsWeighNineSixteenthsOfFp8AndPrefillFaster() {
    TransformerSpec m = CATALOG.models().get("llama3-70b");
    Cluster b200 = one("b200-sxm-192gb");
    InferenceEstimate fp4 = ESTIMATOR.estimate(m, b200, workload(NumberFormat.NVFP4, 64, 2048),
        1, 1, 1);
    InferenceEstimate fp8 = ESTIMATOR.estimate(m, b200, workload(NumberFormat.FP8_E4M3, 64,
        2048), 1, 1, 1);
    assertEquals(0.5625 * fp8.weightsBytes(), fp4.weightsBytes(), 1e-6 * fp8.weightsBytes());
    assertTrue(fp4.prefillSeconds() < fp8.prefillSeconds(), fp4.prefillSeconds() + " vs "
        + fp8.prefillSeconds());
    assertTrue(fp4.decodeSecondsPerToken() < fp8.decodeSecondsPerToken());
    assertTrue(fp4.maxBatchSize() > fp8.maxBatchSize(), "more room for the KV cache");
  }

  @Test
  void anAcceleratorWithoutFp4IsRefusedByName() {
    TransformerSpec m = CATALOG.models().get("llama3-8b");
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> ESTIMATOR.estimate(m, one("h100-sxm-80gb"), workload(NumberFormat.NVFP4, 1, 128),
            1, 1, 1));
    assertTrue(e.getMessage().startsWith("workload.precision: h100-sxm-80gb has no nvfp4"),
        e.getMessage());
  }
}
