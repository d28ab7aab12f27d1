package io.hyperframes.inference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.hyperframes.catalog.Catalog;
import io.hyperframes.hardware.Accelerator;
import io.hyperframes.hardware.KernelEfficiency;
import io.hyperframes.precision.NumberFormat;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A kernel entry's {@code servingFrom}: the Blackwell FP8 and NVFP4 entry serves on Hopper FP8's
 * fitted serving constants (hardware.json, decision of 2026-12-06), follows a refit of them, and
 * a catalog that names the carry wrongly is refused by field and value.
 */
class ServingFromTest {

  @TempDir Path dir;

  private static KernelEfficiency kernel(Catalog c, String generation, NumberFormat f) {
    return c.kernels().get(generation).get(f);
  }

  @Test
  void blackwellLowPrecisionServesOnHopperFp8sConstants() {
    Catalog c = Catalog.builtIn();
    KernelEfficiency hopper = kernel(c, "hopper", NumberFormat.FP8_E4M3);
    assertTrue(hopper.servingLayerOverheadSeconds() > 0 && hopper.kvBandwidthFraction() < 1,
        hopper.toString());
    for (NumberFormat f : new NumberFormat[] {NumberFormat.FP8_E4M3, NumberFormat.FP8_E5M2,
        NumberFormat.NVFP4}) {
      KernelEfficiency k = kernel(c, "blackwell", f);
      assertEquals(hopper.servingLayerOverheadSeconds(), k.servingLayerOverheadSeconds(), f.id());
      assertEquals(hopper.kvBandwidthFraction(), k.kvBandwidthFraction(), f.id());
      assertEquals(hopper.servingRequestSeconds(), k.servingRequestSeconds(), f.id());
      assertEquals(hopper.servingFirstTokenLayerSeconds(), k.servingFirstTokenLayerSeconds(),
          f.id());
      assertEquals(hopper.kvPerHeadBandwidthFraction(), k.kvPerHeadBandwidthFraction(), f.id());
      assertEquals(hopper.kvPerHeadRereadFraction(), k.kvPerHeadRereadFraction(), f.id());
      // The matmul constants are Hopper FP8's too (the half dimension since 2026-12-07,
      // MatmulPriorTest); the efficiency and half rows are what a Blackwell accelerator had in
      // these formats without the entry.
      Accelerator b200 = c.accelerators().get("b200-sxm-192gb");
      assertEquals(b200.matmulEfficiency(), k.matmul(), f.id());
      assertEquals(hopper.matmul(), k.matmul(), f.id());
      assertEquals(hopper.halfDim(), k.halfDim(), f.id());
      assertEquals(b200.matmulHalfRows(), k.halfRows(), f.id());
      assertEquals(0.0, k.attention(), f.id());
      assertEquals(0.0, k.layerOverheadSeconds(), f.id());
      assertEquals(1.0, k.elementwiseBandwidthFraction(), f.id());
    }
    // Format by format: Blackwell BF16 keeps Hopper BF16's serving constants, none fitted.
    assertEquals(0.0, kernel(c, "blackwell", NumberFormat.BF16).servingLayerOverheadSeconds());
    assertEquals(1.0, kernel(c, "blackwell", NumberFormat.BF16).kvBandwidthFraction());
    assertEquals(0.0, kernel(c, "hopper", NumberFormat.BF16).servingLayerOverheadSeconds());
  }

  @Test
  void aRefitOfTheNamedEntryMovesTheCarry() throws IOException {
    Path refit = dir.resolve("refit.json");
    Files.writeString(refit, """
        {"kernels": [{"generation": "hopper", "formats": ["fp8-e4m3", "fp8-e5m2"],
          "matmulEfficiency": 0.76, "matmulHalfDim": 587, "matmulHalfRows": 64,
          "attentionEfficiency": 0, "layerOverheadUs": 0, "servingLayerOverheadUs": 40,
          "kvBandwidthFraction": 0.8, "source": "a user's refit"}]}
        """);
    Catalog c = Catalog.builtIn().withOverrides(refit);
    KernelEfficiency k = kernel(c, "blackwell", NumberFormat.NVFP4);
    assertEquals(40e-6, k.servingLayerOverheadSeconds(), 1e-15);
    assertEquals(0.8, k.kvBandwidthFraction());
    assertEquals(0.0, k.servingRequestSeconds());
  }

  /**
   * A fit ({@link Catalog#withKernel}, what calibrate does) of the entry named moves the carry;
   * a fit of the carrying entry itself keeps what was fitted.
   */
  @Test
  void aFitMovesTheCarryAndAFittedEntryKeepsItsOwn() {
    Catalog c = Catalog.builtIn();
    KernelEfficiency hopper = kernel(c, "hopper", NumberFormat.FP8_E4M3);
    Catalog refit = c.withKernel("hopper", NumberFormat.FP8_E4M3,
        hopper.withServingLayerOverhead(40e-6));
    assertEquals(40e-6, kernel(refit, "blackwell", NumberFormat.NVFP4)
        .servingLayerOverheadSeconds(), 1e-15);
    KernelEfficiency fitted = kernel(c, "blackwell", NumberFormat.NVFP4)
        .withKvBandwidthFraction(0.9);
    Catalog own = c.withKernel("blackwell", NumberFormat.NVFP4, fitted)
        .withKernel("hopper", NumberFormat.FP8_E4M3, hopper.withKvBandwidthFraction(0.3));
    assertEquals(0.9, kernel(own, "blackwell", NumberFormat.NVFP4).kvBandwidthFraction());
    assertEquals(0.3, kernel(own, "blackwell", NumberFormat.FP8_E4M3).kvBandwidthFraction());
  }

  @Test
  void aWrongCarryIsNamed() throws IOException {
    String entry = """
        {"kernels": [{"generation": "ada", "formats": ["fp8-e4m3"],
          "matmulEfficiency": 0.7, "matmulHalfDim": 160, "matmulHalfRows": 64,
          "attentionEfficiency": 0, "layerOverheadUs": 0, %s, "source": "test"}]}
        """;
    assertRefused(entry.formatted("\"servingFrom\": \"hopper/fp8-e4m3\","
        + " \"kvBandwidthFraction\": 0.5"),
        "kernels[ada].servingFrom: the entry takes its serving constants from 'hopper/fp8-e4m3'"
            + " and must not set any of its own");
    assertRefused(entry.formatted("\"servingFrom\": \"volta/fp8-e4m3\""),
        "kernels[ada/fp8-e4m3].servingFrom: no kernel entry 'volta/fp8-e4m3' in the catalog");
    assertRefused(entry.formatted("\"servingFrom\": \"hopper\""),
        "kernels[ada/fp8-e4m3].servingFrom: expected GENERATION/FORMAT (e.g. hopper/fp8-e4m3),"
            + " got 'hopper'");
    assertRefused(entry.formatted("\"servingFrom\": \"hopper/fp9\""),
        "kernels[ada/fp8-e4m3].servingFrom");
    assertRefused(entry.formatted("\"servingFrom\": \"blackwell/nvfp4\""),
        "kernels[ada/fp8-e4m3].servingFrom: 'blackwell/nvfp4' takes its own serving constants"
            + " from another entry; name that one");
  }

  private void assertRefused(String json, String message) throws IOException {
    Path file = Files.writeString(dir.resolve("bad.json"), json);
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> Catalog.builtIn().withOverrides(file));
    assertTrue(e.getMessage().contains(message), e.getMessage());
  }
}
