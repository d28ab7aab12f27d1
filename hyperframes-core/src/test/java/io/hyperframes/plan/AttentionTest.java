package io.hyperframes.plan;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.hyperframes.HyperFrames;
import io.hyperframes.request.Requests;
import io.hyperframes.catalog.Catalog;
import io.hyperframes.json.Json;
import io.hyperframes.workload.Attention;
import org.junit.jupiter.api.Test;

/** Fused (flash) against materialised attention: defaults, memory and time. */
class AttentionTest {

  static String request(String accelerator, String attention, String recompute) {
    return """
        {"model": {"catalog": "llama2-7b"},
         "cluster": {"accelerator": "%s", "devices": 8, "devicesPerNode": 8},
         "workload": {"type": "training", "precision": "bf16-mixed", "globalBatchSize": 64
                      %s},
         "layout": {"tp": 2, "pp": 1, "dp": 4, "microBatch": 1, "sequenceParallel": true,
                    "recompute": "%s", "zeroStage": 1}}
        """.formatted(accelerator, attention == null ? "" : ", \"attention\": \"" + attention + "\"",
        recompute);
  }

  @Test
  void defaultFollowsTheAcceleratorGeneration() {
    Catalog c = Catalog.builtIn();
    var a100 = Requests.fromJson(Json.parseObject("request",
        request("a100-sxm-80gb", null, "none")), c);
    var h100 = Requests.fromJson(Json.parseObject("request",
        request("h100-sxm-80gb", null, "none")), c);
    assertEquals(Attention.STANDARD, a100.workload().attentionOn(a100.cluster().accelerator()));
    assertEquals(Attention.FLASH, h100.workload().attentionOn(h100.cluster().accelerator()));
    var forced = Requests.fromJson(Json.parseObject("request",
        request("h100-sxm-80gb", "standard", "none")), c);
    assertEquals(Attention.STANDARD,
        forced.workload().attentionOn(forced.cluster().accelerator()));
    assertEquals(HyperFrames.estimate(request("h100-sxm-80gb", "flash", "none")).time(),
        HyperFrames.estimate(request("h100-sxm-80gb", null, "none")).time());
    assertEquals(HyperFrames.estimate(request("a100-sxm-80gb", "standard", "none")).time(),
        HyperFrames.estimate(request("a100-sxm-80gb", null, "none")).time());
  }

  @Test
  void flashStoresNoScoresAndSkipsTheCausalHalf() {
    TrainingEstimate standard = HyperFrames.estimate(request("a100-sxm-80gb", "standard", "none"));
    TrainingEstimate flash = HyperFrames.estimate(request("a100-sxm-80gb", "flash", "none"));
    TrainingEstimate selective =
        HyperFrames.estimate(request("a100-sxm-80gb", "standard", "selective"));
    // The activations of selective recomputation, without its recompute time.
    assertEquals(selective.memory().activationsBytes(), flash.memory().activationsBytes(), 1.0);
    assertTrue(flash.memory().activationsBytes() < standard.memory().activationsBytes());
    assertTrue(flash.time().stepSeconds() < standard.time().stepSeconds());
    assertEquals(0.0, flash.time().recomputeSeconds());
    // Selective recomputation has nothing left to recompute under flash attention.
    TrainingEstimate flashSelective =
        HyperFrames.estimate(request("a100-sxm-80gb", "flash", "selective"));
    assertEquals(flash.time().stepSeconds(), flashSelective.time().stepSeconds(), 1e-12);
    // Full recomputation still repeats the forward pass.
    TrainingEstimate flashFull = HyperFrames.estimate(request("a100-sxm-80gb", "flash", "full"));
    assertTrue(flashFull.time().stepSeconds() > flash.time().stepSeconds());
    assertTrue(flashFull.memory().activationsBytes() < flash.memory().activationsBytes());
    // Same model FLOPs: MFU counts the work of the model, not of the kernel.
    assertEquals(standard.modelFlopsPerStep(), flash.modelFlopsPerStep(), 1.0);
  }
}
