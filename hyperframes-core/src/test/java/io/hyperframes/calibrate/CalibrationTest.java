package io.hyperframes.calibrate;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.hyperframes.calibrate.Calibration.Constant;
import io.hyperframes.calibrate.Calibration.Fitted;
import io.hyperframes.catalog.Catalog;
import io.hyperframes.hardware.KernelEfficiency;
import io.hyperframes.json.Json;
import io.hyperframes.precision.NumberFormat;
import io.hyperframes.validate.Validator;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.EnumSet;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@link Calibration} recovers a deliberately wrong constant and improves held-out cases. */
class CalibrationTest {

  /** The A100 matmul efficiency the built-in catalog uses (docs/validation.md). */
  private static final double A100_MATMUL = 0.76;
  private static final double RECOVERY = 0.05;

  private static String megatronCases(int from, int to) throws IOException {
    JsonNode root;
    try (InputStream in = CalibrationTest.class.getResourceAsStream(
        "/validation/published-runs.json")) {
      root = Json.parseObject("cases",
          new String(in.readAllBytes(), StandardCharsets.UTF_8));
    }
    ObjectNode doc = Json.mapper().createObjectNode();
    ArrayNode out = doc.putArray("cases");
    int i = 0;
    for (JsonNode c : root.get("cases")) {
      if (c.get("id").asText().startsWith("megatron2021-table1")) {
        if (i >= from && i < to) {
          out.add(c);
        }
        i++;
      }
    }
    return doc.toString();
  }

  private static Catalog wrong() {
    KernelEfficiency right = Catalog.builtIn().accelerators().get("a100-sxm-80gb")
        .kernel(NumberFormat.FP16);
    KernelEfficiency wrong = right.withMatmul(0.5);
    return Catalog.builtIn().withKernel("ampere", NumberFormat.FP16, wrong)
        .withKernel("ampere", NumberFormat.BF16, wrong);
  }

  @Test
  void recoversAWrongMatmulEfficiencyAndCutsTheHeldOutError() throws IOException {
    String fitting = megatronCases(0, 6);
    String heldOut = megatronCases(6, 10);
    Catalog wrong = wrong();
    Calibration.Result r = Calibration.fit(fitting, wrong,
        EnumSet.of(Constant.MATMUL_EFFICIENCY));
    Fitted f = r.fitted().get(0);
    assertEquals("ampere/bf16", f.target()); // FP16 and BF16 are fitted as one family
    assertEquals(0.5, f.before(), 1e-12);
    assertEquals(A100_MATMUL, f.after(), RECOVERY * A100_MATMUL, () -> "fitted " + f.after());
    double before = Validator.on(wrong).run(heldOut).select("megatron", "stepSeconds").stream()
        .mapToDouble(c -> Math.abs(c.relativeError())).average().orElseThrow();
    double after = Validator.on(r.catalog()).run(heldOut).select("megatron", "stepSeconds")
        .stream().mapToDouble(c -> Math.abs(c.relativeError())).average().orElseThrow();
    assertTrue(after < before / 3, () -> "held-out mean error " + before + " -> " + after);
    assertTrue(r.after().meanAbsRelativeError() < r.before().meanAbsRelativeError());
  }

  @Test
  void writesACatalogOverrideThatLoadsBackWithTheFittedConstant(@TempDir Path dir)
      throws IOException {
    Calibration.Result r = Calibration.fit(megatronCases(0, 10), wrong(),
        EnumSet.of(Constant.MATMUL_EFFICIENCY));
    Path file = dir.resolve("calibrated.json");
    Files.writeString(file, r.toCatalogJson());
    Catalog loaded = Catalog.builtIn().withOverrides(file);
    KernelEfficiency k = loaded.accelerators().get("a100-sxm-40gb").kernel(NumberFormat.FP16);
    assertEquals(r.fitted().get(0).after(), k.matmul(), 1e-9);
    assertTrue(k.source().contains("megatron2021-table1-1.7b"), k.source());
  }

  /**
   * Serving cases made by the estimator with planted per-head decode constants on Hopper FP8
   * (bandwidth fraction 0.7, reread share 0.4): a fit of those two constants from the shipped
   * values recovers both within 5 %. The multi-head model fixes the fraction, the grouped-query
   * one the reread share.
   */
  @Test
  void recoversPlantedPerHeadDecodeConstants() {
    KernelEfficiency shipped = Catalog.builtIn().kernels().get("hopper")
        .get(NumberFormat.FP8_E4M3);
    KernelEfficiency planted = shipped.withKvPerHeadBandwidthFraction(0.7)
        .withKvPerHeadRereadFraction(0.4);
    Catalog truth = Catalog.builtIn().withKernel("hopper", NumberFormat.FP8_E4M3, planted)
        .withKernel("hopper", NumberFormat.FP8_E5M2, planted);
    StringBuilder cases = new StringBuilder("{\"cases\": [");
    int n = 0;
    for (String model : new String[] {"llama2-7b", "mistral-7b"}) {
      for (int[] shape : new int[][] {{128, 2048, 120}, {2048, 2048, 56}, {2048, 128, 64}}) {
        String request = String.format(java.util.Locale.ROOT, """
            {"model": {"catalog": "%s"},
             "cluster": {"accelerator": "h100-sxm-80gb", "devices": 1},
             "workload": {"type": "inference", "precision": "fp8", "kvCachePrecision": "fp8",
                          "decodeAttention": "per-head", "batchSize": %d,
                          "promptTokens": %d, "outputTokens": %d},
             "layout": {"tp": 1}}""", model, shape[2], shape[0], shape[1]);
        double tps = io.hyperframes.inference.Serving.evaluate(
            io.hyperframes.inference.Serving.parse(request, truth)).estimate()
            .outputTokensPerSecondPerDevice();
        cases.append(n++ > 0 ? "," : "").append(String.format(java.util.Locale.ROOT,
            "{\"id\": \"planted%d-%s\", \"kind\": \"inference\", \"request\": %s,"
                + " \"expected\": {\"outputTokensPerSecondPerDevice\": %.6f}}",
            n, model, request, tps));
      }
    }
    cases.append("]}");
    Calibration.Result r = Calibration.fit(cases.toString(), Catalog.builtIn(),
        EnumSet.of(Constant.KV_PER_HEAD_BANDWIDTH, Constant.KV_PER_HEAD_REREAD));
    KernelEfficiency fitted = r.catalog().kernels().get("hopper").get(NumberFormat.FP8_E4M3);
    assertEquals(0.7, fitted.kvPerHeadBandwidthFraction(), 0.7 * RECOVERY, r.fitted()::toString);
    assertEquals(0.4, fitted.kvPerHeadRereadFraction(), 0.4 * RECOVERY, r.fitted()::toString);
    assertTrue(r.after().meanAbsRelativeError() < 0.01, "in-sample after the fit");
  }

  /**
   * Serving runs on an H200 whose sustained memory-bandwidth fraction is planted at 0.6: a fit
   * of the memory efficiency recovers it within 5 %, touches no other accelerator, and the
   * override it writes carries it with its provenance and reads back to the same catalog value.
   */
  @Test
  void recoversAPlantedMemoryEfficiency() throws IOException {
    Catalog truth = Catalog.builtIn().withMemoryEfficiency("h200-sxm-141gb", 0.6);
    StringBuilder cases = new StringBuilder("{\"cases\": [");
    int n = 0;
    for (String model : new String[] {"llama2-7b", "llama2-70b"}) {
      for (int[] shape : new int[][] {{128, 2048, 64}, {2048, 128, 16}, {128, 1, 1}}) {
        String request = String.format(java.util.Locale.ROOT, """
            {"model": {"catalog": "%s"},
             "cluster": {"accelerator": "h200-sxm-141gb", "devices": 2},
             "workload": {"type": "inference", "precision": "fp8", "batchSize": %d,
                          "promptTokens": %d, "outputTokens": %d},
             "layout": {"tp": 2}}""", model, shape[2], shape[0], shape[1]);
        var e = io.hyperframes.inference.Serving.evaluate(
            io.hyperframes.inference.Serving.parse(request, truth)).estimate();
        cases.append(n++ > 0 ? "," : "").append(String.format(java.util.Locale.ROOT,
            "{\"id\": \"planted%d-%s\", \"kind\": \"inference\", \"request\": %s,"
                + " \"expected\": {\"%s\": %.8f}}", n, model, request,
            shape[1] == 1 ? "ttftSeconds" : "outputTokensPerSecondPerDevice",
            shape[1] == 1 ? e.ttftSeconds() : e.outputTokensPerSecondPerDevice()));
      }
    }
    cases.append("]}");
    Calibration.Result r = Calibration.fit(cases.toString(), Catalog.builtIn(),
        EnumSet.of(Constant.MEMORY_EFFICIENCY));
    assertEquals(0.6, r.catalog().accelerators().get("h200-sxm-141gb").memoryEfficiency(),
        0.6 * RECOVERY, r.fitted()::toString);
    assertEquals(1, r.fitted().size(), r.fitted()::toString);
    assertEquals(Catalog.builtIn().accelerators().get("h100-sxm-80gb").memoryEfficiency(),
        r.catalog().accelerators().get("h100-sxm-80gb").memoryEfficiency());
    Path file = Files.createTempFile("memory-fit", ".json");
    try {
      Files.writeString(file, r.toCatalogJson(), StandardCharsets.UTF_8);
      var read = Catalog.builtIn().withOverrides(file).accelerators().get("h200-sxm-141gb");
      assertEquals(r.catalog().accelerators().get("h200-sxm-141gb").memoryEfficiency(),
          read.memoryEfficiency(), 1e-9);
      assertTrue(read.source().contains("memoryEfficiency by calibrate"), read.source());
    } finally {
      Files.deleteIfExists(file);
    }
    var bad = assertThrows(IllegalArgumentException.class,
        () -> Catalog.builtIn().withMemoryEfficiency("h200-sxm-141gb", 1.5));
    assertTrue(bad.getMessage().contains("memoryEfficiency") && bad.getMessage().contains("1.5"),
        bad.getMessage());
  }

  /**
   * An FP8 recipe's attention runs in its activation format (BF16), so a fit of the attention
   * efficiency on FP8 runs moves the BF16 family's constant and leaves none on the FP8 family,
   * where it would change nothing.
   */
  @Test
  void fitsTheAttentionOfFp8RunsWhereItRuns() throws IOException {
    JsonNode all = Json.parseObject("cases", Files.readString(
        Path.of("..", "docs", "validation", "training-cases.json"), StandardCharsets.UTF_8));
    ObjectNode doc = Json.mapper().createObjectNode();
    ArrayNode out = doc.putArray("cases");
    for (JsonNode c : all.get("cases")) {
      if (c.get("id").asText().startsWith("mbridge2511-llama3-") && c.get("id").asText()
          .contains("-h100-")) {
        out.add(c);
      }
    }
    assertEquals(2, out.size());
    Calibration.Result r = Calibration.fit(doc.toString(), Catalog.builtIn(),
        EnumSet.of(Constant.ATTENTION_EFFICIENCY, Constant.MATMUL_HALF_DIM));
    assertTrue(r.fitted().stream().anyMatch(f -> f.target().equals("hopper/bf16")
        && f.constant() == Constant.ATTENTION_EFFICIENCY), r.fitted()::toString);
    assertTrue(r.fitted().stream().noneMatch(f -> f.target().equals("hopper/bf16")
        && f.constant() == Constant.MATMUL_HALF_DIM), "no BF16 matmul in these runs");
    assertTrue(r.fitted().stream().noneMatch(f -> f.target().startsWith("hopper/fp8")
        && f.constant() == Constant.ATTENTION_EFFICIENCY), r.fitted()::toString);
    assertTrue(r.after().meanAbsRelativeError() < r.before().meanAbsRelativeError());
  }

  @Test
  void rejectsADocumentWithoutFittableCases() {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> Calibration.fit("{\"cases\": []}", Catalog.builtIn(),
            EnumSet.of(Constant.MATMUL_EFFICIENCY)));
    assertTrue(e.getMessage().startsWith("cases:"), e.getMessage());
    assertThrows(IllegalArgumentException.class,
        () -> Calibration.fit("{\"cases\": []}", Catalog.builtIn(), Set.of()));
  }
}
