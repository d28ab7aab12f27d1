package io.hyperframes.hardware;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.hyperframes.catalog.Catalog;
import io.hyperframes.json.Json;
import io.hyperframes.precision.NumberFormat;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/**
 * The Blackwell matmul constants rest on B200's measured matmul sweeps, not on a fit to any
 * training run (docs/validation/matmul-kernels.json, role prior): the BF16 large-matrix
 * efficiency is the measured plateau over 4096-8192 cubed divided by the catalog's shape factor,
 * and the half dimensions Blackwell carries from Hopper describe the BF16 and NVFP4 sweeps
 * better than the Ampere calibration's it had before (hardware.json decision of 2026-12-07).
 */
class MatmulPriorTest {

  private static final double AMPERE_HALF_DIM = 160;

  private static JsonNode series(String id) throws IOException {
    JsonNode file = Json.parseObject("matmul-kernels", Files.readString(
        Path.of("..", "docs", "validation", "matmul-kernels.json"), StandardCharsets.UTF_8));
    for (JsonNode s : file.get("series")) {
      if (s.get("id").asText().equals(id)) {
        assertEquals("prior", s.get("role").asText());
        return s;
      }
    }
    throw new AssertionError("no series " + id);
  }

  @Test
  void theBlackwellConstantIsTheMeasuredPlateau() throws IOException {
    JsonNode sweep = series("ao2427-b200-bf16-square");
    Accelerator b200 = Catalog.builtIn().accelerators().get("b200-sxm-192gb");
    double peakTflops = b200.peakFlops(NumberFormat.BF16) / 1e12;
    assertEquals(2250, peakTflops, 1e-9);
    KernelEfficiency k = b200.kernel(NumberFormat.BF16);
    assertEquals(plateau(sweep, peakTflops, k), k.matmul(), 5e-4);
    // The shape factor rises from 4096 to 8192 where the sweep is flat: the plateau sizes are
    // met within 9 %, 3072 is 22 % under the run, 1024 43 % over it (the data file's notes).
    for (int i = 0; i < sweep.get("size").size(); i++) {
      double m = sweep.get("size").get(i).asDouble();
      double ratio = k.matmulAt(m, m, m) / (sweep.get("tflops").get(i).asDouble() / peakTflops);
      assertTrue(ratio > 0.77 && ratio < 1.45, "at " + m + ": " + ratio);
      if (m >= 4096) {
        assertEquals(1.0, ratio, 0.09, "at " + m);
      }
    }
    assertTrue(k.source().contains("matmul-kernels.json"), k.source());
  }

  @Test
  void hoppersHalfDimensionsDescribeTheBlackwellSweepsBetterThanAmperes() throws IOException {
    Accelerator b200 = Catalog.builtIn().accelerators().get("b200-sxm-192gb");
    KernelEfficiency bf16 = b200.kernel(NumberFormat.BF16);
    KernelEfficiency hopperBf16 = Catalog.builtIn().accelerators().get("h100-sxm-80gb")
        .kernel(NumberFormat.BF16);
    assertEquals(hopperBf16.halfDim(), bf16.halfDim(), 0.0);
    JsonNode sweep = series("ao2427-b200-bf16-square");
    double carried = logRmsError(sweep, 2250, bf16);
    double ampere = logRmsError(sweep, 2250, bf16.withHalfDim(AMPERE_HALF_DIM));
    assertEquals(0.181, carried, 0.005);
    assertEquals(0.371, ampere, 0.005);

    KernelEfficiency fp4 = b200.kernel(NumberFormat.NVFP4);
    KernelEfficiency hopperFp8 = Catalog.builtIn().accelerators().get("h100-sxm-80gb")
        .kernel(NumberFormat.FP8_E4M3);
    assertEquals(hopperFp8.halfDim(), fp4.halfDim(), 0.0);
    assertEquals(fp4.halfDim(), b200.kernel(NumberFormat.FP8_E4M3).halfDim(), 0.0);
    JsonNode nvfp4 = series("ao2427-b200-nvfp4-square");
    assertEquals("nvfp4", nvfp4.get("format").asText());
    double carried4 = logRmsError(nvfp4, nvfp4.get("peakTflops").asDouble(), fp4);
    double ampere4 = logRmsError(nvfp4, nvfp4.get("peakTflops").asDouble(),
        fp4.withHalfDim(AMPERE_HALF_DIM));
    assertEquals(0.872, carried4, 0.005);
    assertEquals(1.105, ampere4, 0.005);
  }

  /**
   * The BF16 sweep itself puts Blackwell's half dimension near Hopper's: scanned from 100 to 1400
   * (beyond about 1480 the plateau efficiency the sweep gives exceeds 1), its root-mean-square log
   * error is least at 788 (0.178, against 0.181 at the carried 702.4), 0.018 worse at 1000 and
   * 0.05 worse at 1200. A larger Blackwell half dimension, which the
   * leave-one-source-out refit over the Blackwell training rows asks for (docs/validation.md,
   * "Over everything recorded"), would contradict B200's own kernel measurement, so what makes
   * those rows too fast is not the matmul shape factor.
   */
  @Test
  void theBf16SweepPutsTheHalfDimensionNearHoppers() throws IOException {
    JsonNode sweep = series("ao2427-b200-bf16-square");
    KernelEfficiency bf16 = Catalog.builtIn().accelerators().get("b200-sxm-192gb")
        .kernel(NumberFormat.BF16);
    int best = 100;
    for (int h = 100; h <= 1400; h++) {
      if (logRmsError(sweep, 2250, bf16.withHalfDim(h))
          < logRmsError(sweep, 2250, bf16.withHalfDim(best))) {
        best = h;
      }
    }
    assertEquals(788, best);
    double least = logRmsError(sweep, 2250, bf16.withHalfDim(best));
    assertEquals(0.178, least, 0.001);
    assertTrue(logRmsError(sweep, 2250, bf16) - least < 0.005);
    assertTrue(logRmsError(sweep, 2250, bf16.withHalfDim(1000)) - least > 0.015);
    assertTrue(logRmsError(sweep, 2250, bf16.withHalfDim(1200)) - least > 0.05);
  }

  /**
   * The large-matrix efficiency a square sweep gives through {@code k}'s shape factor: the mean
   * over its plateau (4096 and up) of measured / peak over the shape factor.
   */
  private static double plateau(JsonNode sweep, double peakTflops, KernelEfficiency k) {
    double sum = 0;
    int n = 0;
    for (int i = 0; i < sweep.get("size").size(); i++) {
      double m = sweep.get("size").get(i).asDouble();
      if (m >= 4096) {
        sum += sweep.get("tflops").get(i).asDouble() / peakTflops
            / (k.matmulAt(m, m, m) / k.matmul());
        n++;
      }
    }
    assertEquals(3, n);
    return sum / n;
  }

  /**
   * The root-mean-square log error of {@code k}'s shape factor over a square sweep, its
   * efficiency taken as the sweep's {@link #plateau}, so that only the shape is compared.
   */
  private static double logRmsError(JsonNode sweep, double peakTflops, KernelEfficiency k) {
    KernelEfficiency atPlateau = k.withMatmul(plateau(sweep, peakTflops, k));
    double squares = 0;
    int n = sweep.get("size").size();
    for (int i = 0; i < n; i++) {
      double m = sweep.get("size").get(i).asDouble();
      double measured = sweep.get("tflops").get(i).asDouble() / peakTflops;
      squares += Math.pow(Math.log(atPlateau.matmulAt(m, m, m) / measured), 2);
    }
    return Math.sqrt(squares / n);
  }
}
