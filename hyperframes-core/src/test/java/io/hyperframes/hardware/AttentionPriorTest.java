package io.hyperframes.hardware;

import io.hyperframes.catalog.Catalog;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
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
 * The Hopper BF16 fused-attention efficiency is the cuDNN kernel's measured throughput, not a
 * fit: 3.5 / (1/forward + 2.5/backward) at 16 384 tokens over the BF16 peak, from the figures in
 * docs/validation/attention-kernels.json, and no training case is named as its fitting source.
 */
class AttentionPriorTest {

  private static JsonNode series(JsonNode file, String id) {
    for (JsonNode s : file.get("series")) {
      if (s.get("id").asText().equals(id)) {
        return s;
      }
    }
    throw new AssertionError("no series " + id);
  }

  private static double at(JsonNode series, int seqLen) {
    JsonNode lengths = series.get("seqLen");
    for (int i = 0; i < lengths.size(); i++) {
      if (lengths.get(i).asInt() == seqLen) {
        return series.get("tflops").get(i).asDouble();
      }
    }
    throw new AssertionError("no " + seqLen + " in " + series.get("id"));
  }

  private static JsonNode attentionKernels() throws IOException {
    return Json.parseObject("attention-kernels", Files.readString(
        Path.of("..", "docs", "validation", "attention-kernels.json"), StandardCharsets.UTF_8));
  }

  /**
   * The kernel's whole-step throughput at {@code seqLen} from its two prior series, weighted as
   * the step model weights them: 3.5 / (1/forward + 2.5/backward).
   */
  private static double stepThroughput(JsonNode file, String forwardId, String backwardId,
      int seqLen) {
    JsonNode forward = series(file, forwardId);
    JsonNode backward = series(file, backwardId);
    assertEquals("prior", forward.get("role").asText());
    assertEquals("prior", backward.get("role").asText());
    return 3.5 / (1 / at(forward, seqLen) + 2.5 / at(backward, seqLen));
  }

  /**
   * Asserts that {@code generation}'s BF16 fused-attention efficiency is the step throughput of
   * the two series at {@code seqLen} over {@code accelerator}'s BF16 peak (the peak the file
   * states in {@code peakField}), and that the constant cites the file; returns the constant.
   */
  private static KernelEfficiency assertPrior(String forwardId, String backwardId, int seqLen,
      String accelerator, String peakField, String generation) throws IOException {
    JsonNode file = attentionKernels();
    double step = stepThroughput(file, forwardId, backwardId, seqLen);
    Catalog c = Catalog.builtIn();
    double peakTflops = c.accelerators().get(accelerator).peakFlops(NumberFormat.BF16) / 1e12;
    assertEquals(file.get(peakField).asDouble(), peakTflops, 1e-9);
    KernelEfficiency kernel = c.kernels().get(generation).get(NumberFormat.BF16);
    assertEquals(step / peakTflops, kernel.attention(), 5e-4);
    assertTrue(kernel.source().contains("attention-kernels.json"), kernel.source());
    return kernel;
  }

  @Test
  void theCatalogConstantIsTheKernelsMeasuredThroughput() throws IOException {
    assertPrior("fa3paper-cudnn-forward-causal-hd128", "fa3paper-cudnn-backward-hd128", 16384,
        "h100-sxm-80gb", "peakTflops", "hopper");
  }

  /**
   * The Blackwell BF16 fused-attention efficiency is FlashAttention-4's measured throughput on
   * sm100 at 8192 tokens, weighted the same way, over B200's BF16 peak; Blackwell's element-wise
   * fraction is Hopper's, carried over (hardware.json decisions).
   */
  @Test
  void theBlackwellConstantIsFlashAttention4sMeasuredThroughput() throws IOException {
    KernelEfficiency blackwell = assertPrior("fa4-pr2280-forward-causal-hd128",
        "fa4-pr2280-backward-causal-hd128", 8192, "b200-sxm-192gb", "blackwellPeakTflops",
        "blackwell");
    Catalog c = Catalog.builtIn();
    assertEquals(c.kernels().get("hopper").get(NumberFormat.BF16).elementwiseBandwidthFraction(),
        blackwell.elementwiseBandwidthFraction());
    // Both Blackwell accelerators run it.
    assertEquals(blackwell, c.accelerators().get("gb200-186gb").kernel(NumberFormat.BF16));
    assertEquals(blackwell, c.accelerators().get("b200-sxm-192gb").kernel(NumberFormat.BF16));
  }

  @Test
  void noTrainingRunIsNamedAsTheAttentionConstantsFittingSource() throws IOException {
    try (var in = getClass().getResourceAsStream("/io/hyperframes/catalog/hardware.json")) {
      JsonNode hw = Json.parseObject("hardware.json",
          new String(in.readAllBytes(), StandardCharsets.UTF_8));
      for (JsonNode k : hw.get("kernels")) {
        if (k.get("generation").asText().equals("hopper") && !k.has("engine")
            && k.get("formats").toString().contains("bf16")) {
          assertFalse(k.get("fittedOn").has("attentionEfficiency"), k.toString());
          assertTrue(k.get("fittedOn").has("elementwiseBandwidthFraction"), k.toString());
        }
      }
    }
  }
}
