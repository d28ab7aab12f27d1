package io.hyperframes.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The Megatron-Core mixture-of-experts runs with context parallelism: docs/validation.md prints
 * what {@code validate} says of their step times. The four long-context rows (16K-128K tokens)
 * are within ±15 % (issue 32's bound) since the Hopper fused attention runs at its kernel's
 * measured efficiency (2026-12-04; they were 10-66 % too slow before), each slightly too fast
 * (the sign is asserted, so that a change that turns it is seen). Of the 4096-token runs the one
 * on the all-to-all dispatcher, the cross-node DeepEP one with the EP A2A overlap and the
 * Megatron-FSDP one are within ±15 %; the cross-node DeepEP one without the overlap just outside.
 */
class MoeCasesCliTest {

  @Test
  void theReportPrintsTheRows() throws IOException {
    String out = CliTest.validatedInDocs("moe-cases.json");
    Map<String, Double> errors = CliTest.stepErrors(out);
    int longContext = 0;
    for (Map.Entry<String, Double> row : errors.entrySet()) {
      String id = row.getKey();
      double error = row.getValue();
      if (id.matches("mcoremoe-qwen3-235b-256h100-\\d+k-cp\\d")) {
        longContext++;
        assertTrue(error < 0 && error > -15.0, id + ": " + error + " %");
      }
    }
    assertEquals(4, longContext, out);
    // The 4096-token rows: the all-to-all dispatcher's, the cross-node DeepEP one (ep 32 over
    // four nodes, layout.moeDispatcher deepep), the same with the EP A2A overlap
    // (layout.overlapMoeComm) within ±15 %; the Megatron-FSDP one too slow since its expert
    // weights are gathered over the expert data-parallel group (EDP 32, one rank per node); the
    // tp-4 DeepEP row is too fast (reported, signs asserted).
    assertEquals(17, errors.size(), out);
    // NeMo Automodel's single-node rows (2026-12-04, 23rd session; looked at since): GPT-OSS 20B
    // within ±15 %, Qwen3-30B-A3B predicted too slow (reported, not met; the sign is asserted).
    double oss20 = errors.get("automodel2510-gpt-oss-20b-h100-8gpu-bf16");
    assertTrue(Math.abs(oss20) <= 15.0, oss20 + " %");
    double qwen30 = errors.get("automodel2510-qwen3-30b-a3b-h100-8gpu-bf16");
    assertTrue(qwen30 > 15.0 && qwen30 < 60.0, qwen30 + " %");
    // Megatron-Bridge 26.04.01's H100 MoE rows (tokens/s per GPU; not met, the signs are
    // asserted so that a change that turns one is seen): Qwen3-30B-A3B FP8 and GPT-OSS 120B BF16
    // predicted too fast; Qwen3-235B-A22B FP8 on the cross-node all-to-all within ±15 % since
    // the all-to-all reads its message-size curve at the bytes one rank sends (it prompted
    // that change, so it is not out of sample).
    java.util.regex.Matcher rows = java.util.regex.Pattern.compile(
        "(?m)^\\| (mbridge\\d+-\\S+) \\| tokensPerSecondPerDevice \\| [0-9.]+ \\| [0-9.]+ \\|"
            + " ([-+][0-9.]+) % \\|").matcher(out);
    Map<String, Double> bridge = new java.util.HashMap<>();
    while (rows.find()) {
      bridge.put(rows.group(1), Double.parseDouble(rows.group(2)));
    }
    assertEquals(7, bridge.size(), out);
    // Recorded 2026-12-04 (22nd session) before any change of the session: Megatron-Bridge
    // 25.11's Qwen3-235B-A22B FP8 on 256 H100 and DeepSeek-V3 and GPT-OSS 120B in BF16 on
    // GB200, and 26.02's Qwen3-30B-A3B FP8 on 16 H100, all predicted too fast (not met; the
    // signs are asserted).
    for (String id : new String[] {"mbridge2511-qwen3-235b-a22b-h100-256gpu-fp8",
        "mbridge2511-deepseek-v3-gb200-256gpu-bf16", "mbridge2511-gpt-oss-120b-gb200-64gpu-bf16",
        "mbridge2602-qwen3-30b-a3b-h100-16gpu-fp8"}) {
      double e = bridge.get(id);
      assertTrue(e > 0 && e < 250.0, id + ": " + e + " %");
    }
    double small = bridge.get("mbridge2604-qwen3-30b-a3b-h100-16gpu-fp8");
    double large = bridge.get("mbridge2604-qwen3-235b-a22b-h100-256gpu-fp8");
    double oss = bridge.get("mbridge2604-gpt-oss-120b-h100-64gpu-bf16");
    assertTrue(small > 15.0 && small < 80.0, small + " %");
    assertTrue(oss > 15.0 && oss < 80.0, oss + " %");
    assertTrue(Math.abs(large) <= 15.0, large + " %");
    for (String id : new String[] {"a2a-tp2-ep8-pp32", "deepep-tp2-ep32-pp8-overlap"}) {
      double e = errors.get("mcoremoe-qwen3-235b-256h100-4k-" + id);
      assertTrue(Math.abs(e) <= 15.0, id + ": " + e + " %");
    }
    // Megatron-FSDP: the routed experts (28 B parameters a rank) gathered and reduced over the
    // expert data-parallel group of 32, one rank per node at its own NIC, since 2026-12-04 (24th
    // session; +7.9 % before, when they travelled with the dense weights over dp 128).
    double fsdp = errors.get("mcoremoe-qwen3-235b-256h100-4k-deepep-tp2-ep8-fsdp");
    assertTrue(fsdp > 0 && fsdp < 25.0, fsdp + " %");
    // The cross-node DeepEP run without the overlap: too slow, just outside ±15 % since the
    // token permutation is counted (2026-12-04, 22nd session; +9.7 % before).
    double crossNode = errors.get("mcoremoe-qwen3-235b-256h100-4k-deepep-tp2-ep32-pp8");
    assertTrue(crossNode > 0 && crossNode < 20.0, crossNode + " %");
    // Mixtral 8x22B on 128 H100, forced balance, the all-to-all dispatcher: within ±15 %.
    double mixtral = errors.get("mcoremoe-mixtral-8x22b-128h100-4k-a2a-forced-balance");
    assertTrue(Math.abs(mixtral) <= 15.0, mixtral + " %");
    // Grok-1 with context parallelism 2 on 512 H100 (dgxc-benchmarking): BF16 too slow, FP8 too
    // fast, each by under 20 % (reported, not met; the signs are asserted).
    double grokBf16 = errors.get("dgxc2505-grok1-314b-h100-512gpu-bf16-cp2");
    double grokFp8 = errors.get("dgxc2505-grok1-314b-h100-512gpu-fp8-cp2");
    assertTrue(grokBf16 > 0 && grokBf16 < 20.0, grokBf16 + " %");
    assertTrue(grokFp8 < 0 && grokFp8 > -20.0, grokFp8 + " %");
    double tp4 = errors.get("mcoremoe-qwen3-235b-256h100-4k-deepep-tp4-ep8-pp8");
    assertTrue(tp4 < 0 && tp4 > -50.0, tp4 + " %");
    // DeepSeek-V3 BF16 on 512 and 1024 H100 (dgxc-benchmarking 25.05 and 25.08; checks, each
    // with its run's uneven pipeline split): the 25.08 run on DeepEP within ±15 %, the two 25.05
    // runs on the all-to-all dispatcher with token drop too fast (the 1024-GPU one by more than
    // 15 %; signs asserted).
    for (String id : new String[] {"dgxc2505-deepseek-v3-h100-1024gpu-bf16",
        "dgxc2505-deepseek-v3-h100-512gpu-bf16"}) {
      double e = errors.get(id);
      assertTrue(e < 0.0 && e > -30.0, id + ": " + e + " %");
    }
    double deepEp = errors.get("dgxc2508-deepseek-v3-h100-1024gpu-bf16-deepep");
    assertTrue(Math.abs(deepEp) <= 15.0, deepEp + " %");
  }
}
