package io.hyperframes.plan;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.hyperframes.HyperFrames;
import io.hyperframes.request.Requests;
import io.hyperframes.diagnose.Finding;
import io.hyperframes.plan.TrainingFindings;
import io.hyperframes.catalog.Catalog;
import io.hyperframes.json.Json;
import io.hyperframes.workload.GradientCompression;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Gradient compression in the data-parallel model: what it saves, what it costs, its limits. */
class CompressionPlanTest {

  /** LLaMA-2-7B data-parallel over 8 nodes joined by shared 100 GbE: the reduction dominates. */
  static String request(String compression, String zero) {
    return """
        {"model": {"catalog": "llama2-7b"},
         "cluster": {"accelerator": "a100-sxm-80gb", "devices": %s, "devicesPerNode": 8,
                     "interconnect": {"interNode": {"bandwidthGBpsPerDevice": 1.5625}}},
         "workload": {"type": "training", "precision": "bf16-mixed", "globalBatchSize": %s
                      %s},
         "layout": {"tp": 1, "pp": 1, "microBatch": 1, "recompute": "full"%s}}
        """.formatted(DEVICES, DEVICES, compression == null ? ""
            : ", \"gradientCompression\": " + compression, zero == null ? ""
            : ", \"zeroStage\": " + zero);
  }

  private static final int DEVICES = 64;
  private static final String BF16_CAST = """
      {"codec": "bf16", "ratio": 2, "encodeGBps": 1000, "decodeGBps": 1000, "allReduce": true}""";
  /** Decoding a top-k message touches 1/76 of the elements: its FP32-equivalent rate is high. */
  private static final String TOPK = """
      {"codec": "topk-0.01-ef", "ratio": 76, "encodeGBps": 200, "decodeGBps": 20000, \
      "allReduce": false}""";

  private static TrainingEstimate estimate(String compression, String zero) {
    return HyperFrames.estimate(request(compression, zero));
  }

  @Test
  void anAllReduceCodecDividesTheReductionByItsRatio() {
    TrainingEstimate none = estimate(null, "0");
    TrainingEstimate cast = estimate(BF16_CAST, "0");
    // BF16 gradients are already 2 bytes: a ratio-2 codec against FP32 sends the same bytes,
    // so only the encode/decode time is added.
    assertTrue(cast.time().dataParallelCommSeconds() >= none.time().dataParallelCommSeconds());
    String half = BF16_CAST.replace("\"ratio\": 2", "\"ratio\": 8");
    TrainingEstimate quarter = estimate(half, "0");
    double ratio = none.time().dataParallelCommSeconds()
        / quarter.time().dataParallelCommSeconds();
    // 2 bytes a parameter against 4/8: a quarter of the bytes; the exposed part shrinks at
    // least as much, since more of the smaller reduction hides behind the backward pass.
    assertTrue(ratio >= 3.9, "reduction shrank " + ratio + "x");
    assertTrue(quarter.stepSeconds() < none.stepSeconds());
  }

  @Test
  void aGatherCodecPaysOnlyAboveHalfTheDataParallelSize() {
    TrainingEstimate none = estimate(null, "0");
    TrainingEstimate topk = estimate(TOPK, "0");
    // dp 64: gathering 63 messages of 1/76 of FP32 (0.83 of the FP32 gradient) against a ring
    // all-reduce of 2 x 63/64 of the BF16 gradient (0.98 of it): a small saving.
    assertTrue(topk.time().dataParallelCommSeconds() < none.time().dataParallelCommSeconds());
    String weak = TOPK.replace("\"ratio\": 76", "\"ratio\": 16");
    TrainingEstimate worse = estimate(weak, "0");
    assertTrue(worse.time().dataParallelCommSeconds() > none.time().dataParallelCommSeconds());
    var r = Requests.fromJson(Json.parseObject("request", request(weak, "0")),
        Catalog.builtIn());
    List<Finding> findings = TrainingFindings.of(worse, r.model(), r.cluster(), r.workload());
    assertTrue(findings.stream().anyMatch(f -> f.id().equals("compression-gathers-more")),
        findings.toString());
  }

  @Test
  void aCommunicationBoundPlanSuggestsCompression() {
    TrainingEstimate none = estimate(null, "0");
    var r = Requests.fromJson(Json.parseObject("request", request(null, "0")), Catalog.builtIn());
    List<Finding> findings = TrainingFindings.of(none, r.model(), r.cluster(), r.workload());
    assertTrue(findings.stream().anyMatch(f -> f.id().equals("gradient-compression")),
        findings.toString());
  }

  @Test
  void onlyZeroStagesWithOneReductionAStepAreModelled() {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> estimate(TOPK, "3"));
    assertTrue(e.getMessage().startsWith("workload.gradientCompression: modelled for ZeRO stages"
        + " 0 and 1"), e.getMessage());
    TrainingEstimate searched = estimate(TOPK, null);
    assertTrue(searched.layout().zeroStage() <= 1, "searched " + searched.layout());
  }

  @Test
  void badCodecsAreRejectedWithTheField() {
    IllegalArgumentException ratio = assertThrows(IllegalArgumentException.class,
        () -> estimate(TOPK.replace("\"ratio\": 76", "\"ratio\": 0.5"), "0"));
    assertTrue(ratio.getMessage().startsWith("workload.gradientCompression.ratio"),
        ratio.getMessage());
    IllegalArgumentException missing = assertThrows(IllegalArgumentException.class,
        () -> estimate(TOPK.replace(", \"allReduce\": false", ""), "0"));
    assertTrue(!TOPK.replace(", \"allReduce\": false", "").contains("allReduce"));
    assertTrue(missing.getMessage().startsWith("workload.gradientCompression.allReduce"),
        missing.getMessage());
    assertEquals(4.0 * 1000 / 76, new GradientCompression("topk", 76, 1, 1, false)
        .messageBytes(1000), 1e-12);
  }
}
