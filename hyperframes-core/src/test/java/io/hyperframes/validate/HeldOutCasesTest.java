package io.hyperframes.validate;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.hyperframes.json.Json;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The shipped catalog against the published runs of {@code docs/validation/} (each with its
 * source and role). Figures and tolerances are those reported in docs/validation.md; a change
 * that moves them must update the report.
 */
class HeldOutCasesTest {

  private static final double H100_BF16_EACH = 0.12;
  private static final double KORTHIKANTI_EACH = 0.08;
  private static final double DEEPSPEED_PIPELINE_EACH = 0.12;
  private static final double SERVING_EACH = 0.15;
  private static final double LEAVE_ONE_SOURCE_OUT_MEAN = 0.08;

  private static String read(String name) throws IOException {
    return Files.readString(Path.of("..", "docs", "validation", name), StandardCharsets.UTF_8);
  }

  private static Map<String, String> roles(String json) {
    Map<String, String> out = new HashMap<>();
    for (JsonNode c : Json.parseObject("cases", json).get("cases")) {
      out.put(c.get("id").asText(), c.path("role").asText());
    }
    return out;
  }

  /**
   * Korthikanti et al. 2022 Table 5 (A100): every step time within 8 %. In sample: the prior
   * large-matrix efficiency and half-efficiency token dimension were chosen on Korthikanti et al.
   * 2022 (catalog fittedOn; validate --leave-one-source-out labels the source in sample).
   */
  @Test
  void korthikantiTable5StepTimes() throws IOException {
    assertStepTimesWithin("korthikanti2022-table5", 9, KORTHIKANTI_EACH);
  }

  /** The {@code count} step times of the training cases whose ids start with {@code prefix}. */
  private static void assertStepTimesWithin(String prefix, int count, double tolerance)
      throws IOException {
    List<CaseResult> rows = Validator.analytical().run(read("training-cases.json"))
        .select(prefix, "stepSeconds");
    assertEquals(count, rows.size());
    for (CaseResult c : rows) {
      assertTrue(Math.abs(c.relativeError()) <= tolerance,
          () -> c.id() + ": expected " + c.expected() + " s, predicted " + c.predicted());
    }
  }

  /**
   * Out of sample: every source predicted by the half dimensions and fused-attention
   * efficiencies (and PyTorch FSDP's Hopper matmul efficiency) refitted without it (what
   * {@code hyperframes validate
   * --leave-one-source-out} reports), mean |error| ≤ 8 %.
   */
  @Test
  void leaveOneSourceOutMeanErrorWithin8Percent() throws IOException {
    JsonNode shared;
    try (var in = HeldOutCasesTest.class.getResourceAsStream("/validation/published-runs.json")) {
      shared = Json.parseObject("cases", new String(in.readAllBytes(),
          StandardCharsets.UTF_8));
    }
    var doc = Json.mapper().createObjectNode();
    var cases = doc.putArray("cases");
    shared.get("cases").forEach(cases::add);
    Json.parseObject("cases", read("training-cases.json")).get("cases").forEach(cases::add);
    var result = io.hyperframes.calibrate.Calibration.fit(doc.toString(),
        io.hyperframes.catalog.Catalog.builtIn().withoutKernels(),
        java.util.EnumSet.of(io.hyperframes.calibrate.Calibration.Constant.MATMUL_HALF_DIM,
            io.hyperframes.calibrate.Calibration.Constant.ATTENTION_EFFICIENCY),
        Map.of("hopper@fsdp",
            java.util.EnumSet.of(io.hyperframes.calibrate.Calibration.Constant.MATMUL_EFFICIENCY)));
    double mean = result.leaveOneOut().meanAbsRelativeError();
    assertTrue(result.leaveOneOut().cases().size() >= 60, "held-out figures");
    assertTrue(mean <= LEAVE_ONE_SOURCE_OUT_MEAN, "leave-one-source-out mean " + mean);
  }

  /**
   * H100 BF16 training runs none of the constants was fitted on (role {@code check}: DGX Cloud
   * Megatron/NeMo and MaxText runs, fms-fsdp): each within 12 % on its first timing figure
   * (issue 10's acceptance for H100 BF16 runs).
   */
  @Test
  void heldOutH100Bf16RunsWithin12Percent() throws IOException {
    String json = read("training-cases.json");
    Map<String, JsonNode> byId = new HashMap<>();
    for (JsonNode c : Json.parseObject("cases", json).get("cases")) {
      byId.put(c.get("id").asText(), c);
    }
    Map<String, CaseResult> first = new java.util.LinkedHashMap<>();
    for (CaseResult c : Validator.analytical().run(json).cases()) {
      JsonNode k = byId.get(c.id());
      JsonNode r = k.get("request");
      boolean timing = List.of("stepSeconds", "tokensPerSecondPerDevice").contains(c.metric());
      if (c.point() && timing && k.path("role").asText().equals("check")
          && r.path("cluster").path("accelerator").asText().startsWith("h100")
          && r.path("workload").path("precision").asText().equals("bf16-mixed")) {
        first.putIfAbsent(c.id(), c);
      }
    }
    assertTrue(first.size() >= 7, () -> "H100 BF16 held-out runs: " + first.keySet());
    for (CaseResult c : first.values()) {
      assertTrue(Math.abs(c.relativeError()) <= H100_BF16_EACH, () -> c.id() + " " + c.metric()
          + ": expected " + c.expected() + ", predicted " + c.predicted());
    }
  }

  /**
   * BLOOM-176B on DeepSpeed's pipeline engine (tp 4 and tp 8, pp 12, 384 A100; role
   * {@code check}): each step time within 12 % (issue 10's acceptance for DeepSpeed-pipeline
   * runs). GLM-130B, the fourth DeepSpeed-pipeline run, misses and is reported, not asserted
   * (docs/validation.md).
   */
  @Test
  void heldOutBloomDeepSpeedPipelineRunsWithin12Percent() throws IOException {
    assertStepTimesWithin("bloom-176b", 3, DEEPSPEED_PIPELINE_EACH);
  }

  /** Every case file entry names its role and source, and every case is estimated. */
  @Test
  void everyCaseHasARoleASourceAndAPrediction() throws IOException {
    for (String file : List.of("training-cases.json", "serving-cases.json")) {
      String json = read(file);
      for (JsonNode c : Json.parseObject("cases", json).get("cases")) {
        String id = c.get("id").asText();
        assertTrue(List.of("fit", "check").contains(c.path("role").asText()), id + " role");
        assertTrue(c.path("source").asText().length() > 20, id + " source");
      }
      ValidationReport r = Validator.analytical().run(json);
      assertTrue(r.cases().stream().anyMatch(CaseResult::point), file);
    }
  }

  /**
   * Hopper FP8 fixed-batch serving, the fitting cases of the grouped decode kernel's constants:
   * output throughput and time per output token within 15 % each.
   */
  @Test
  void hopperFp8ServingThroughputWithin15Percent() throws IOException {
    String json = read("serving-cases.json");
    Map<String, String> roles = roles(json);
    Map<String, String> kernels = new HashMap<>();
    for (JsonNode c : Json.parseObject("cases", json).get("cases")) {
      kernels.put(c.get("id").asText(),
          c.path("request").path("workload").path("decodeAttention").asText("grouped"));
    }
    int compared = 0;
    for (CaseResult c : Validator.analytical().run(json).cases()) {
      boolean hopper = c.id().contains("h100") || c.id().contains("h200");
      if (!c.point() || !hopper || !roles.get(c.id()).equals("fit")
          || !kernels.get(c.id()).equals("grouped")
          || !(c.metric().equals("outputTokensPerSecondPerDevice")
              || c.metric().equals("decodeSecondsPerToken"))) {
        continue;
      }
      compared++;
      assertTrue(Math.abs(c.relativeError()) <= SERVING_EACH,
          () -> c.id() + " " + c.metric() + ": expected " + c.expected() + ", predicted "
              + c.predicted());
    }
    assertEquals(7, compared);
  }

  /**
   * Serving figures no constant was fitted on (role {@code check}: TensorRT-LLM v0.5, v0.7 and
   * v0.9, NIM, LMDeploy on H100, H200 and A100): the shares within 15 % and the mean errors
   * docs/validation.md reports, as floors and ceilings.
   */
  @Test
  void servingChecksOutOfSample() throws IOException {
    String json = read("serving-cases.json");
    Map<String, String> roles = roles(json);
    for (String metric : List.of("outputTokensPerSecondPerDevice", "ttftSeconds")) {
      List<Double> errors = Validator.analytical().run(json).cases().stream()
          .filter(c -> c.point() && c.metric().equals(metric) && roles.get(c.id()).equals("check"))
          .map(c -> Math.abs(c.relativeError())).toList();
      long within = errors.stream().filter(e -> e <= SERVING_EACH).count();
      double mean = errors.stream().mapToDouble(Double::doubleValue).average().orElseThrow();
      boolean throughput = metric.startsWith("output");
      assertTrue(errors.size() >= (throughput ? 50 : 30), metric + " checks: " + errors.size());
      assertTrue(within >= (throughput ? 0.75 : 0.65) * errors.size(),
          metric + ": " + within + " of " + errors.size() + " within 15 %");
      assertTrue(mean <= (throughput ? 0.105 : 0.115), metric + ": mean " + mean);
    }
  }
}
