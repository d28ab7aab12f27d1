package io.hyperframes.validate;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The MoE long-context cases' step times are what their source prints. The model zoo's readme
 * (yanring/Megatron-MoE-ModelZoo best_practice/Qwen3/readme.md @ c1ad0b5c) gives TFLOPS per GPU
 * only for its long-context table, but prints step time and TFLOPS side by side for its
 * 4096-token Qwen3-235B-A22B runs on 256 H100 (global batch 2048): there Megatron-LM's
 * {@code num_floating_point_operations} (model FLOPs without recomputation, causal attention
 * counted half, the router not counted) reproduces each step time from its TFLOPS, so it is the
 * table's convention, and each case's step time follows from its table's TFLOPS by it.
 */
class MoeCasesTest {

  /**
   * The readme's 4096-token rows: per-GPU TFLOPS and step time in seconds (276 TF and 17.6 s
   * twice: the cross-node row with the EP A2A overlap and the Megatron-FSDP row).
   */
  private static final double[][] SHORT_ROWS = {{245, 19.7}, {276, 17.6}, {200, 24.2},
      {167, 29.0}};

  /** The long-context table's dropless TFLOPS per GPU, by case id. */
  private static final Map<String, Double> TFLOPS = Map.of(
      "mcoremoe-qwen3-235b-256h100-16k-cp1", 237.0,
      "mcoremoe-qwen3-235b-256h100-32k-cp2", 277.0,
      "mcoremoe-qwen3-235b-256h100-64k-cp4", 320.0,
      "mcoremoe-qwen3-235b-256h100-128k-cp8", 357.0);

  /** Megatron-LM's FLOPs per token of Qwen3-235B-A22B at sequence length {@code s}. */
  private static double flopsPerToken(double s) {
    return PublishedCases.megatronMoeFlopsPerToken(4096, 64 * 128, 4 * 128, 94, 1536, 8, 0,
        151_936, s);
  }

  @Test
  void theConventionReproducesThePrintedStepTimes() {
    for (double[] row : SHORT_ROWS) {
      double step = flopsPerToken(4096) * 4096 * 2048 / (row[0] * 1e12 * 256);
      assertEquals(row[1], step, 0.01 * row[1], "TFLOPS " + row[0]);
    }
  }

  @Test
  void eachStepTimeFollowsFromItsTflops() throws IOException {
    JsonNode cases = PublishedCases.read("moe-cases.json");
    int longContext = 0;
    int shortRows = 0;
    for (JsonNode c : cases) {
      String id = c.get("id").asText();
      if (id.startsWith("mbridge")) {
        // Megatron-Bridge's archive prints tokens/s per GPU, compared as printed.
        assertTrue(c.at("/expected/tokensPerSecondPerDevice").asDouble() > 0, id);
        assertTrue(c.get("source").asText().contains("performance-summary-archive.md"), id);
        continue;
      }
      if (id.startsWith("automodel")) {
        // NeMo Automodel prints the step time, TFLOPS and tokens/s of the global batch: the
        // step recorded is the printed one, and the printed tokens/s follow from it (within the
        // rounding of its last digits).
        java.util.regex.Matcher row = java.util.regex.Pattern.compile(
            "\\| ([0-9.]+) \\| ([0-9]+) \\| ([0-9,]+) \\|'").matcher(c.get("source").asText());
        assertTrue(row.find(), id);
        double step = Double.parseDouble(row.group(1));
        assertEquals(step, c.at("/expected/stepSeconds").asDouble(), 0.0, id);
        double tokens = c.at("/request/workload/globalBatchSize").asDouble() * 4096 / step
            / c.at("/request/cluster/devices").asDouble();
        assertEquals(Double.parseDouble(row.group(3).replace(",", "")), tokens, 5.0, id);
        continue;
      }
      // The zoo's configuration: experts not split by tensor parallelism.
      assertEquals(1, c.at("/request/layout/etp").asInt(), id);
      if (id.startsWith("dgxc25")) {
        // dgxc-benchmarking prints the step time itself (the mean of iterations 11-44).
        assertTrue(c.at("/expected/stepSeconds").asDouble() > 0, id);
        continue;
      }
      if (id.startsWith("mcoremoe-mixtral-8x22b")) {
        // Mixtral 8x22B: the script's 465 TFLOPS through the same convention.
        double perToken = PublishedCases.megatronMoeFlopsPerToken(6144, 6144, 1024, 56, 16384,
            2, 0, 32000, 4096);
        double step = perToken * 4096 * 256 / (465e12 * 128);
        assertEquals(step, c.at("/expected/stepSeconds").asDouble(), 1e-3 * step, id);
        continue;
      }
      if (!TFLOPS.containsKey(id)) {
        // A 4096-token row: the step time the readme prints.
        double printed = c.at("/expected/stepSeconds").asDouble();
        assertTrue(java.util.Arrays.stream(SHORT_ROWS).anyMatch(r -> r[1] == printed), id);
        assertEquals(4096, c.at("/request/model/seqLen").asInt(), id);
        shortRows++;
        continue;
      }
      longContext++;
      double s = c.at("/request/model/seqLen").asDouble();
      double batch = c.at("/request/workload/globalBatchSize").asDouble();
      double gpus = c.at("/request/cluster/devices").asDouble();
      double step = flopsPerToken(s) * s * batch / (TFLOPS.get(id) * 1e12 * gpus);
      assertEquals(step, c.at("/expected/stepSeconds").asDouble(), 1e-3 * step, id);
    }
    assertEquals(TFLOPS.size(), longContext);
    assertEquals(5, shortRows);
  }
}
