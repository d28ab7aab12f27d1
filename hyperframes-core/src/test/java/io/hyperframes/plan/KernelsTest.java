package io.hyperframes.plan;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.hyperframes.HyperFrames;
import io.hyperframes.model.TransformerSpec;
import io.hyperframes.parallel.Layout;
import io.hyperframes.parallel.Recompute;
import org.junit.jupiter.api.Test;

/** Eager element-wise kernels against fused ones: bytes counted, time added, nothing else. */
class KernelsTest {

  static String request(String model, String kernels) {
    return """
        {"model": {"catalog": "%s"},
         "cluster": {"accelerator": "a100-sxm-80gb", "devices": 64, "devicesPerNode": 8},
         "workload": {"type": "training", "precision": "bf16-mixed", "globalBatchSize": 128
                      %s},
         "layout": {"tp": 1, "pp": 1, "dp": 64, "microBatch": 2, "recompute": "none",
                    "zeroStage": 3, "engine": "fsdp"}}
        """.formatted(model, kernels == null ? "" : ", \"kernels\": \"" + kernels + "\"");
  }

  @Test
  void fusedIsTheDefaultAndEagerOnlyAddsElementWiseTime() {
    TrainingEstimate byDefault = HyperFrames.estimate(request("llama2-7b", null));
    TrainingEstimate fused = HyperFrames.estimate(request("llama2-7b", "fused"));
    TrainingEstimate eager = HyperFrames.estimate(request("llama2-7b", "eager"));
    assertEquals(byDefault.time(), fused.time());
    assertTrue(eager.time().computeSeconds() > fused.time().computeSeconds());
    // Same work, same memory, same communication: only the kernels' memory traffic differs.
    assertEquals(fused.modelFlopsPerStep(), eager.modelFlopsPerStep(), 1.0);
    assertEquals(fused.memory(), eager.memory());
  }

  @Test
  void eagerBytesFollowTheOperatorCount() {
    // LLaMA-2-7B, multi-head: per token and layer, two RMSNorms at 28 + 2e extra bytes per
    // element, rotary embedding at 16 + 2e per q and k element, SwiGLU at 2e per FFN element.
    TransformerSpec llama = new TransformerSpec("llama", 32, 4096, 32, 32, 11008, true, 32000,
        4096, false);
    Layout l = new Layout(1, 1, 8, 1, 1, false, Recompute.NONE, 0);
    double e = 2.0;
    double perToken = 2 * (28 + 2 * e) * 4096 + (16 + 2 * e) * 8192 + 2 * e * 11008;
    assertEquals(perToken * 4096, LayerTime.eagerExtraBytes(llama, l, e, 4096, false),
        1e-6);
    // Grouped-query attention adds the repeat_kv copies of k and v.
    TransformerSpec gqa = new TransformerSpec("gqa", 32, 4096, 32, 8, 14336, true, 128256, 8192,
        false);
    double gqaToken = 2 * (28 + 2 * e) * 4096 + (16 + 2 * e) * (4096 + 1024)
        + 2 * e * 14336 + 2 * e * (1024 + 4096);
    assertEquals(gqaToken, LayerTime.eagerExtraBytes(gqa, l, e, 1, false), 1e-6);
    // A GPT block: LayerNorm and GeLU are single kernels; only dropout before each residual add
    // runs apart.
    TransformerSpec gpt = new TransformerSpec("gpt", 24, 2048, 16, 16, 8192, false, 51200, 2048,
        false);
    assertEquals(2 * 2 * e * 2048, LayerTime.eagerExtraBytes(gpt, l, e, 1, true), 1e-9);
    assertEquals(0.0, LayerTime.eagerExtraBytes(gpt, l, e, 1, false));
  }
}
