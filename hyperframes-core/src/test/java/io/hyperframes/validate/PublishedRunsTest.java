package io.hyperframes.validate;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.hyperframes.request.Requests;
import io.hyperframes.hardware.Cluster;
import io.hyperframes.interconnect.Collective;
import io.hyperframes.interconnect.CollectiveGroup;
import io.hyperframes.interconnect.InterconnectModel;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The planner against the published measurements in {@code published-runs.json} (a copy of
 * shared/validation/published-runs.json; sources are named in each case). Tolerances are the
 * acceptance targets of the foundation issue.
 */
class PublishedRunsTest {

  private static final double STEP_TIME_EACH = 0.08;
  private static final double STEP_TIME_MEAN = 0.04;
  private static final double ZERO_EACH = 0.01;
  private static final double KORTHIKANTI_EACH = 0.08;
  private static final double KORTHIKANTI_MEAN = 0.05;
  private static final double COLLECTIVE_EACH = 0.10;
  private static final double INFERENCE_EACH = 0.15;
  private static final double HOPPER_EACH = 0.10;
  private static final double HOPPER_MEAN = 0.05;

  static ValidationReport report;

  @BeforeAll
  static void run() throws IOException {
    report = Validator.analytical().run(cases());
  }

  static String cases() throws IOException {
    try (InputStream in = PublishedRunsTest.class.getResourceAsStream(
        "/validation/published-runs.json")) {
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    }
  }

  @Test
  void megatronTable1StepTimes() {
    assertStepTimes("megatron2021-table1", 10, STEP_TIME_EACH, STEP_TIME_MEAN);
  }

  private static void assertStepTimes(String prefix, int cases, double each, double mean) {
    List<CaseResult> rows = report.select(prefix, "stepSeconds");
    assertEquals(cases, rows.size());
    double sum = 0;
    for (CaseResult c : rows) {
      assertTrue(Math.abs(c.relativeError()) <= each,
          () -> c.id() + ": expected " + c.expected() + " s, predicted " + c.predicted());
      sum += Math.abs(c.relativeError());
    }
    assertTrue(sum / rows.size() <= mean, prefix + " mean |error| " + sum / rows.size());
  }

  /** Megatron-Core r0.8 H100 BF16 weak scaling (the fitting cases of the Hopper BF16 kernels). */
  @Test
  void megatronCoreH100StepTimes() {
    assertStepTimes("mcore2024-h100", 9, HOPPER_EACH, HOPPER_MEAN);
  }

  @Test
  void zeroModelStates() {
    List<CaseResult> rows = report.select("zero-7.5b", "modelStatesBytesPerDevice");
    assertEquals(18, rows.size());
    for (CaseResult c : rows) {
      // The ZeRO paper prints GB with 2-3 significant digits (0.12 GB for 117.2 MB); accept the
      // published rounding interval where it is wider than 1 %.
      double printedUnit = Math.pow(10, Math.floor(Math.log10(c.expected() / 1e9)) - 1) * 1e9;
      double tolerance = Math.max(ZERO_EACH * c.expected(), printedUnit / 2);
      assertTrue(Math.abs(c.predicted() - c.expected()) <= tolerance,
          () -> c.id() + ": expected " + c.expected() + ", predicted " + c.predicted());
    }
  }

  @Test
  void korthikantiMemory() {
    for (String metric : List.of("weightsGradsOptimizerGiB", "activationsGiB")) {
      List<CaseResult> rows = report.select("korthikanti2022", metric);
      assertEquals(8, rows.size());
      double sum = 0;
      for (CaseResult c : rows) {
        assertTrue(Math.abs(c.relativeError()) <= KORTHIKANTI_EACH,
            () -> c.id() + " " + metric + ": expected " + c.expected() + ", predicted "
                + c.predicted());
        sum += Math.abs(c.relativeError());
      }
      assertTrue(sum / rows.size() <= KORTHIKANTI_MEAN, metric + " mean " + sum / rows.size());
    }
  }

  @Test
  void singleNodeCollectives() {
    for (String id : List.of("nccl-a100-8gpu-allreduce", "nccl-h100-8gpu-allreduce-nvls",
        "nccl-h100-8gpu-ring")) {
      CaseResult c = report.select(id, "busBandwidthBytesPerSecond").get(0);
      assertTrue(Math.abs(c.relativeError()) <= COLLECTIVE_EACH,
          () -> id + ": expected " + c.expected() + ", predicted " + c.predicted());
    }
  }

  /**
   * nccl-tests #175 measured 2 nodes with 4 HDR NICs per 8 GPUs; the catalog's default A100 node
   * is the DGX A100 with 8. On the measured hardware (12.5 GB/s per device) the model matches,
   * and the shared case, which names that node, gives the same figure.
   */
  @Test
  void twoNodeAllReduceOnTheMeasuredFabric() {
    Cluster measured = cluster("{\"accelerator\": \"a100-sxm-80gb\", \"devices\": 16,"
        + " \"devicesPerNode\": 8, \"interconnect\": {\"interNode\":"
        + " {\"bandwidthGBpsPerDevice\": 12.5}}}");
    double bus = InterconnectModel.alphaBeta().time(measured, Collective.ALL_REDUCE,
        1 << 30, new CollectiveGroup(16, 8)).busBandwidthBytesPerSecond();
    assertEquals(86e9, bus, COLLECTIVE_EACH * 86e9);
    // The shared case names the node it ran on (template hgx-a100-4hdr): the same fabric.
    CaseResult shared = report.select("nccl-a100-2node-allreduce", "busBandwidthBytesPerSecond")
        .get(0);
    assertEquals(1.0, shared.predicted() / bus, 0.01);
    assertEquals(0, shared.relativeError(), COLLECTIVE_EACH);
  }

  /** The same case naming the node its source describes (4 HDR NICs per 8 GPUs) is within 10 %. */
  @Test
  void twoNodeAllReduceCaseWithItsNodeTemplate() {
    String json = """
        {"cases": [{"id": "nccl-a100-2node-4hdr", "source": "NVIDIA/nccl-tests#175",
          "collective": {"accelerator": "a100-sxm-80gb", "template": "hgx-a100-4hdr",
            "devices": 16, "devicesPerNode": 8, "op": "allReduce", "messageBytes": 1073741824},
          "expected": {"busBandwidthBytesPerSecond": 86000000000.0}}]}
        """;
    CaseResult r = Validator.analytical().run(json).select("nccl-a100-2node-4hdr",
        "busBandwidthBytesPerSecond").get(0);
    assertEquals(0, r.relativeError(), COLLECTIVE_EACH, () -> "predicted " + r.predicted());
  }

  @Test
  void llama65bSearchReachesThePublishedThroughput() {
    CaseResult c = report.select("llama-65b-throughput", "tokensPerSecondPerDevice").get(0);
    assertEquals("atLeast", c.bound());
    assertTrue(c.boundMet(), () -> "best plan " + c.predicted() + " tokens/s/device");
  }

  @Test
  void fasterTransformerServingWithin15PercentAndKvBytesExact() {
    List<CaseResult> rows = new java.util.ArrayList<>();
    for (String metric : List.of("prefillSeconds", "decodeSecondsPerToken", "totalSeconds")) {
      rows.addAll(report.select("fastertransformer-13b", metric));
    }
    assertEquals(6, rows.size());
    for (CaseResult c : rows) {
      assertTrue(Math.abs(c.relativeError()) <= INFERENCE_EACH,
          () -> c.id() + " " + c.metric() + ": expected " + c.expected() + ", predicted "
              + c.predicted());
    }
    CaseResult kv = report.select("vllm-opt13b-kv", "kvCacheBytesPerToken").get(0);
    assertEquals(kv.expected(), kv.predicted(), 0.0);
  }

  private static Cluster cluster(String json) {
    return Requests.parse("{\"model\": {\"name\": \"x\", \"parameters\": 1},"
        + " \"cluster\": " + json + ", \"workload\": {\"type\": \"training\","
        + " \"precision\": \"fp32\"}}").cluster();
  }
}
