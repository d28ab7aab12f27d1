package io.hyperframes.hardware;

import io.hyperframes.catalog.Catalog;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.hyperframes.json.Json;
import io.hyperframes.precision.NumberFormat;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/**
 * The Blackwell BF16 large-matrix efficiency is B200's measured torch.mm plateau, not a fit to
 * any training run: the mean over 4096-8192 cubed of measured/peak divided by the catalog's shape
 * factor at the half dimensions it keeps (docs/validation/matmul-kernels.json, role prior).
 */
class MatmulPriorTest {

  @Test
  void theBlackwellConstantIsTheMeasuredPlateau() throws IOException {
    JsonNode file = Json.parseObject("matmul-kernels", Files.readString(
        Path.of("..", "docs", "validation", "matmul-kernels.json"), StandardCharsets.UTF_8));
    JsonNode sweep = file.get("series").get(0);
    assertEquals("prior", sweep.get("role").asText());
    Catalog c = Catalog.builtIn();
    Accelerator b200 = c.accelerators().get("b200-sxm-192gb");
    double peakTflops = b200.peakFlops(NumberFormat.BF16) / 1e12;
    assertEquals(file.get("peakTflops").asDouble(), peakTflops, 1e-9);
    KernelEfficiency k = b200.kernel(NumberFormat.BF16);
    double sum = 0;
    int n = 0;
    for (int i = 0; i < sweep.get("size").size(); i++) {
      double m = sweep.get("size").get(i).asDouble();
      if (m < 4096) {
        continue;
      }
      double measured = sweep.get("tflops").get(i).asDouble() / peakTflops;
      sum += measured / (k.matmulAt(m, m, m) / k.matmul());
      n++;
    }
    assertEquals(3, n);
    assertEquals(sum / n, k.matmul(), 5e-4);
    // Through the catalog the plateau sizes are met within 3 %; below 3072 the shape factor
    // is optimistic (up to 2.5 times at 1024), at 3072 the run is 11 % above it (reported in
    // the data file's notes, not fitted).
    for (int i = 0; i < sweep.get("size").size(); i++) {
      double m = sweep.get("size").get(i).asDouble();
      double measured = sweep.get("tflops").get(i).asDouble() / peakTflops;
      double ratio = k.matmulAt(m, m, m) / measured;
      if (m >= 4096) {
        assertEquals(1.0, ratio, 0.03, "at " + m);
      } else if (m < 3072) {
        assertTrue(ratio > 1.0 && ratio < 2.6, "at " + m + ": " + ratio);
      } else {
        assertEquals(0.89, ratio, 0.01, "at " + m);
      }
    }
    assertTrue(k.source().contains("matmul-kernels.json"), k.source());
  }
}
