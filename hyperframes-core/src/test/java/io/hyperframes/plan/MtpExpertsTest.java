package io.hyperframes.plan;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.hyperframes.HyperFrames;
import io.hyperframes.catalog.Catalog;
import io.hyperframes.model.TransformerSpec;
import io.hyperframes.parallel.Recompute;
import org.junit.jupiter.api.Test;

/**
 * The multi-token-prediction module repeats the last layer, and with it, when that layer is an
 * MoE layer, its routed experts: they split over the expert-parallel group as the decoder's do
 * (Megatron-Core builds the module's block with the decoder's layer spec). Until 2026-12-04 every
 * rank of the last stage held all 256 of DeepSeek-V3's, which put dgxc-benchmarking's 1024-H100
 * layouts, which ran, at 105-116 GiB per device.
 */
class MtpExpertsTest {

  private static TrainingEstimate deepSeek(int ep) {
    return HyperFrames.estimate().model("deepseek-v3").accelerator("h100-sxm-80gb").devices(1024)
        .training(t -> t.precision("bf16-mixed").globalBatchSize(8192).tokens(1e11))
        .layout(l -> l.tp(2).pp(16).dp(32).ep(ep).etp(1).microBatch(1).sequenceParallel(true)
            .zeroStage(1).recompute(Recompute.SELECTIVE).recomputeModules("mla_up_proj"))
        .run();
  }

  @Test
  void theModulesExpertsSplitOverTheExpertParallelGroup() {
    TransformerSpec m = Catalog.builtIn().model("model", "deepseek-v3");
    assertEquals(1, m.mtpLayers());
    double expert = m.mlpParameters(m.moe().expertFfnHidden());
    assertEquals(256 * expert, m.mtpRoutedExpertParameters(), 1e-6 * expert);
    // pp 16: ceil(61 / 16) = 4 layers on the last stage, beside the module. From ep 32 to
    // ep 64 the rank's share of every routed expert it holds halves: the stage's and the
    // module's.
    double stage = 4 * m.moeLayerShare() * 256 * expert;
    double held = stage + m.mtpRoutedExpertParameters();
    TrainingEstimate ep32 = deepSeek(32);
    TrainingEstimate ep64 = deepSeek(64);
    double bytes = 2.0; // BF16 weights
    double drop = (ep32.memory().weightsBytes() - ep64.memory().weightsBytes()) / bytes;
    assertEquals(held * (1.0 / 32 - 1.0 / 64), drop, 1e-6 * drop);
    // The run fits an 80 GB H100 (dgxc-benchmarking v25.05, 52.04 s a step); its largest stage
    // holds about 2 B parameters: 4 layers' attention and shared expert over tp 2 and 4 of 256
    // experts each, the output layer over tp 2, the module likewise.
    double params = ep64.memory().weightsBytes() / bytes;
    assertTrue(params > 1.5e9 && params < 2.5e9, "parameters on the last stage: " + params);
    assertTrue(ep64.feasible(), ep64.reasons().toString());
  }
}
