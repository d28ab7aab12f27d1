package io.hyperframes.inference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.hyperframes.HyperFrames;
import io.hyperframes.ServeBuilder;
import io.hyperframes.json.Json;
import io.hyperframes.inference.ServingJson;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.Test;

/**
 * Speculative decoding ({@code workload.speculative}): the expected tokens per step of
 * Leviathan et al. 2023 (Eq. 1), the draft's and the verification's costs, the draft's memory,
 * and every bad value named.
 */
class SpeculativeDecodingTest {

  private static ServeBuilder llama70b(UnaryOperator<ServeBuilder> more) {
    return more.apply(HyperFrames.serve().model("llama3-70b").accelerator("h100-sxm-80gb")
        .devices(4).precision("bf16").batch(1).prompt(1024).output(256));
  }

  @Test
  void aStepYieldsTheExpectedTokensOfLeviathanEtAl() {
    assertEquals(1.0, new Speculative(Speculative.Method.EAGLE, 3, 0.0, null)
        .expectedTokensPerStep(), 0.0);
    assertEquals(4.0, new Speculative(Speculative.Method.EAGLE, 3, 1.0, null)
        .expectedTokensPerStep(), 0.0);
    // (1 − 0.8^4) / (1 − 0.8) = 2.952
    assertEquals(2.952, new Speculative(Speculative.Method.EAGLE, 3, 0.8, null)
        .expectedTokensPerStep(), 1e-12);
  }

  @Test
  void aGoodDraftSpeedsUpDecodeAtBatchOne() {
    InferenceEstimate plain = llama70b(b -> b).run().estimate();
    InferenceEstimate eagle = llama70b(b -> b.speculative("eagle", 3, 0.8)).run().estimate();
    double speedup = plain.tpotSeconds() / eagle.tpotSeconds();
    // At batch 1 the verification of 4 positions reads the weights once, as one decode step:
    // close to the 2.95 tokens a step yields, less the draft's passes.
    assertTrue(speedup > 2.0 && speedup < 2.952, "speedup " + speedup);
    assertEquals(2.952, eagle.tokensPerDecodeStep(), 1e-12);
    // The head's weights and its one layer of KV cache sit beside the model's.
    assertTrue(eagle.weightsBytes() > plain.weightsBytes());
    assertTrue(eagle.kvCacheBytes() > plain.kvCacheBytes());
    assertTrue(eagle.prefillSeconds() > plain.prefillSeconds());
  }

  @Test
  void aDraftModelAndTheModelsOwnMtpModuleAreEstimated() {
    InferenceEstimate plain = llama70b(b -> b).run().estimate();
    InferenceEstimate draft = llama70b(b -> b.speculative("draft", 4, 0.7).draftModel("llama3-8b"))
        .run().estimate();
    assertTrue(draft.tpotSeconds() < plain.tpotSeconds(), draft + " vs " + plain);
    // An 8 B draft is about a ninth of the weights again.
    double extra = draft.weightsBytes() - plain.weightsBytes();
    assertTrue(extra > 0.08 * plain.weightsBytes() && extra < 0.2 * plain.weightsBytes(),
        "extra " + extra);
    InferenceEstimate v3 = HyperFrames.serve().model("deepseek-v3").accelerator("h200-sxm-141gb")
        .devices(8).precision("fp8").batch(8).prompt(2048).output(512)
        .speculative("mtp", 1, 0.85).run().estimate();
    assertTrue(v3.feasible(), v3.reasons().toString());
    assertEquals(1.85, v3.tokensPerDecodeStep(), 1e-12);
    // The verification routes 2 tokens per sequence: it touches more experts than one token.
    InferenceEstimate plainV3 = HyperFrames.serve().model("deepseek-v3")
        .accelerator("h200-sxm-141gb").devices(8).precision("fp8").batch(8).prompt(2048)
        .output(512).run().estimate();
    assertTrue(v3.expertWeightBytesPerDecodeStep() > plainV3.expertWeightBytesPerDecodeStep());
  }

  @Test
  void theJsonSaysWhatWasEstimatedAndNothingWithoutIt() {
    JsonNode with = Json.mapper().valueToTree(ServingJson.Serving.of(
        llama70b(b -> b.speculative("eagle", 3, 0.8)).run()));
    assertEquals("eagle", with.at("/inference/speculative/method").asText());
    assertEquals(3, with.at("/inference/speculative/tokens").asInt());
    assertEquals(2.952, with.at("/inference/speculative/tokensPerDecodeStep").asDouble(), 1e-12);
    JsonNode without = Json.mapper().valueToTree(ServingJson.Serving.of(llama70b(b -> b).run()));
    assertTrue(without.at("/inference/speculative").isMissingNode(), without.toString());
    assertNull(llama70b(b -> b).run().estimate().speculative());
  }

  @Test
  void badValuesAreNamed() {
    assertMessage("workload.speculative.method", () -> llama70b(
        b -> b.speculative("mtp", 1, 0.5)).run());
    assertMessage("workload.speculative.method", () -> llama70b(
        b -> b.speculative("medusa", 1, 0.5)).run());
    assertMessage("workload.speculative.acceptance", () -> llama70b(
        b -> b.speculative("eagle", 3, 1.5)).run());
    assertMessage("workload.speculative.tokens", () -> llama70b(
        b -> b.speculative("eagle", 0, 0.5)).run());
    assertMessage("workload.speculative.draftModel", () -> llama70b(
        b -> b.speculative("draft", 3, 0.5)).run());
    assertMessage("workload.speculative.draftModel", () -> llama70b(
        b -> b.speculative("draft", 3, 0.5).draftModel("llama2-7b")).run());
    assertMessage("workload.speculative", () -> HyperFrames.serve().model("llama3-70b")
        .accelerator("h100-sxm-80gb").devices(4).precision("bf16").batch(1).prompt(1024)
        .output(256).layout(l -> l.tp(2).pp(2)).speculative("eagle", 3, 0.5).run());
  }

  private static void assertMessage(String field, org.junit.jupiter.api.function.Executable e) {
    IllegalArgumentException x = assertThrows(IllegalArgumentException.class, e);
    assertTrue(x.getMessage().contains(field), x.getMessage());
  }
}
