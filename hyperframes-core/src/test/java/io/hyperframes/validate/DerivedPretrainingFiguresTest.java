package io.hyperframes.validate;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The expected figures that the pre-training files of 2026-12-07 derive from what their sources
 * print (docs/validation.md, "Production pre-training runs, held out" and "Held-out mixtures of
 * experts") follow from the printed figure by the convention each note states, and agree with
 * the request they go with (batch, devices, sequence).
 */
class DerivedPretrainingFiguresTest {

  /** The number after {@code label} in {@code text} (commas as thousands separators). */
  private static double printed(String text, String label) {
    Matcher m = Pattern.compile(Pattern.quote(label) + " ([0-9][0-9,.]*)").matcher(text);
    assertTrue(m.find(), label + " in: " + text);
    return Double.parseDouble(m.group(1).replace(",", ""));
  }

  @Test
  void llama3StepTimesFollowFromTflopsByPalmsConvention() throws IOException {
    int rows = 0;
    for (JsonNode c : PublishedCases.read("llama3-cases.json")) {
      String source = c.get("source").asText();
      JsonNode r = c.get("request");
      double gpus = r.at("/cluster/devices").asDouble();
      double seq = printed(source, "Seq. Len.");
      double tflops = printed(source, "TFLOPs/GPU");
      double perDp = printed(source, "Batch size/DP");
      double dp = r.at("/layout/dp").asDouble();
      assertEquals(printed(source, "DP"), dp, c.get("id").asText());
      assertEquals(perDp * dp, r.at("/workload/globalBatchSize").asDouble());
      assertEquals(16L << 20, (long) (perDp * dp * seq), "the table's 16M tokens a step");
      // Chowdhery et al. 2022 Appendix B: 6N + 12·L·H·Q·T model FLOPs a token.
      double perToken = 6 * 405.85e9 + 12.0 * 126 * 128 * 128 * seq;
      double step = perDp * dp * seq / (tflops * 1e12 / perToken * gpus);
      assertEquals(step, c.at("/expected/stepSeconds").asDouble(), 1e-3, c.get("id").asText());
      rows++;
    }
    assertEquals(3, rows);
  }

  @Test
  void deepSeekV3RateIsItsGpuHoursPerTrillionTokens() throws IOException {
    JsonNode c = PublishedCases.read("deepseek-v3-cases.json").get(0);
    assertTrue(c.get("source").asText().contains("requires only 180K H800 GPU hours"));
    assertEquals(1e12 / (180e3 * 3600), c.at("/expected/tokensPerSecondPerDevice").asDouble(),
        0.05);
    assertEquals(2048, c.at("/request/cluster/devices").asInt());
    assertEquals(15360, c.at("/request/workload/globalBatchSize").asInt());
  }

  @Test
  void parallelFoldingStepTimesFollowFromMfuByMegatronsConvention() throws IOException {
    // As the model zoo's Mixtral row of moe-cases.json (MoeCasesTest), at 4096 tokens.
    double mixtral = PublishedCases.megatronMoeFlopsPerToken(6144, 6144, 1024, 56, 16384, 2, 0,
        32000, 4096);
    double qwen2 = PublishedCases.megatronMoeFlopsPerToken(3584, 28 * 128, 4 * 128, 28, 2560, 8,
        20480, 151936, 4096);
    int rows = 0;
    for (JsonNode c : PublishedCases.read("moe-folding-cases.json")) {
      String source = c.get("source").asText();
      JsonNode r = c.get("request");
      double gpus = r.at("/cluster/devices").asDouble();
      boolean isQwen = c.get("id").asText().startsWith("liu2025-qwen2-57b-a14b-");
      double perToken = isQwen ? qwen2 : mixtral;
      assertEquals(printed(source, (isQwen ? "Qwen2-57B-A14B" : "Mixtral-8x22B") + ", MCore"
          + (source.contains("w/ Folding") ? " w/ Folding," : ",")), gpus, c.get("id").asText());
      double mfu = printed(source, "MFU");
      double batch = printed(source, "global batch");
      assertEquals(batch, r.at("/workload/globalBatchSize").asDouble());
      assertEquals(4096, r.at("/model/seqLen").asInt());
      assertEquals(gpus, r.at("/layout/tp").asDouble() * r.at("/layout/pp").asDouble()
          * r.at("/layout/dp").asDouble());
      double step = perToken * 4096 * batch / (mfu / 100 * 989.5e12 * gpus);
      assertEquals(step, c.at("/expected/stepSeconds").asDouble(), 1e-3, c.get("id").asText());
      rows++;
    }
    assertEquals(22, rows);
  }
}
