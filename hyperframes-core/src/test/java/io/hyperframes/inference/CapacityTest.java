package io.hyperframes.inference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.hyperframes.catalog.Catalog;
import io.hyperframes.json.Json;
import org.junit.jupiter.api.Test;

/**
 * Capacity mode ({@code workload.mode: capacity}): the request fields, each bad value named; the
 * scheduler's limits; and the flow of the estimate.
 */
class CapacityTest {

  static final String REQUEST = """
      {"model": {"catalog": "llama3-70b"},
       "cluster": {"accelerator": "h100-sxm-80gb", "devices": 8},
       "workload": {"type": "inference", "mode": "capacity", "engine": "ENGINE",
                    "precision": "fp8", "kvCachePrecision": "fp8",
                    "promptTokens": PROMPT, "outputTokens": 1000 EXTRA},
       "layout": {"tp": 4, "dp": 2}}
      """;

  static String request(String engine, String prompt, String extra) {
    return REQUEST.replace("ENGINE", engine).replace("PROMPT", prompt).replace("EXTRA", extra);
  }

  static InferenceResult run(String json) {
    return Serving.evaluate(Serving.parse(json, Catalog.builtIn()));
  }

  static IllegalArgumentException bad(String json) {
    return assertThrows(IllegalArgumentException.class, () -> run(json));
  }

  /** A fixed request without a batch says what the batch is and where a server's limit is. */
  @Test
  void aFixedRequestNamesItsMissingBatch() {
    String json = request("vllm", "1000", ", \"arrivalRatePerSecond\": 2")
        .replace("\"mode\": \"capacity\", ", "").replace("\"engine\": \"vllm\",", "");
    String message = bad(json).getMessage();
    assertTrue(message.startsWith("workload.batchSize: missing required field (or give"
        + " workload.concurrency): the batch of the fixed estimate."), message);
    assertTrue(message.contains("workload.maxNumSeqs (default 256), the limit serve-plan"
        + " searches"), message);
  }

  @Test
  void aFixedRequestHasNoCapacity() {
    InferenceResult r = run(request("vllm", "1000", "").replace("\"mode\": \"capacity\", ", "")
        .replace("\"engine\": \"vllm\",", "\"batchSize\": 8,"));
    assertNull(r.capacity());
    JsonNode json = Serving.toJson(r);
    assertFalse(json.has("capacity"), json::toString);
  }

  @Test
  void theEnginesDefaultsAreUsed() {
    CapacityEstimate v = run(request("vllm", "1000", "")).capacity();
    assertEquals(1024, v.maxNumSeqs());
    assertEquals(8192, v.maxNumTokens());
    assertEquals(0.92, v.memoryFraction());
    CapacityEstimate t = run(request("trtllm", "1000", "")).capacity();
    assertEquals(2048, t.maxNumSeqs());
    assertEquals(8192, t.maxNumTokens());
    assertEquals(0.9, t.memoryFraction());
    CapacityEstimate s = run(request("sglang", "1000", "")).capacity();
    assertEquals(Integer.MAX_VALUE, s.maxNumSeqs());
    assertEquals(8192, s.maxNumTokens());
    assertTrue(s.memoryFraction() > 0.7 && s.memoryFraction() < 0.9, s::toString);
    // TensorRT-LLM reserves each request's whole sequence: fewer run than on vLLM.
    assertTrue(t.concurrency() < v.concurrency(), () -> t + " vs " + v);
    JsonNode json = Serving.toJson(run(request("vllm", "1000", "")));
    for (String f : java.util.List.of("engine", "concurrency", "limitedBy", "kvCacheTokens",
        "requestsPerSecond", "outputTokensPerSecond", "outputTokensPerSecondPerDevice",
        "inputTokensPerSecond", "iterationSeconds", "tpotSeconds", "ttftSeconds")) {
      assertTrue(json.get("capacity").has(f), f);
    }
  }

  @Test
  void aSingleLengthListEqualsTheNumber() {
    CapacityEstimate number = run(request("vllm", "1000", "")).capacity();
    CapacityEstimate list = run(request("vllm", "[[1000, 3]]", "")).capacity();
    assertEquals(number, list);
  }

  @Test
  void longerPromptsLowerTheThroughput() {
    CapacityEstimate shorter = run(request("vllm", "[[500, 1], [1500, 1]]", "")).capacity();
    CapacityEstimate longer = run(request("vllm", "[[500, 1], [4000, 1]]", "")).capacity();
    assertEquals(1000, shorter.meanPromptTokens(), 1e-9);
    assertEquals(2250, longer.meanPromptTokens(), 1e-9);
    assertTrue(longer.outputTokensPerSecond() < shorter.outputTokensPerSecond());
  }

  @Test
  void aSmallBudgetBindsAndFillsEveryIteration() {
    CapacityEstimate c = run(request("vllm", "1000", ", \"maxNumTokens\": 1024")).capacity();
    assertEquals("max-num-tokens", c.limitedBy(), c::toString);
    assertEquals(1024, c.decodesPerIteration() + c.prefillTokensPerIteration(), 1e-6);
    // x = B / (P + O − 1) requests enter per iteration, on each of the two replicas.
    double x = 1024.0 / (1000 + 999);
    assertEquals(2 * x / c.iterationSeconds(), c.requestsPerSecond(), 1e-9 * x);
    assertEquals(1000 * c.requestsPerSecond(), c.outputTokensPerSecond(), 1e-6);
  }

  @Test
  void aRequestLimitBinds() {
    CapacityEstimate c = run(request("vllm", "1000", ", \"maxNumSeqs\": 64")).capacity();
    assertEquals("max-num-seqs", c.limitedBy());
    assertEquals(64, c.concurrency());
    assertEquals(64.0 / 1000, c.requestsPerSecond() / 2 * c.iterationSeconds(), 1e-12);
  }

  @Test
  void tensorRtLlmRefusesAPromptOverItsBudgetWithoutChunking() {
    InferenceResult r = run(request("trtllm", "[[1000, 1], [9000, 1]]", ""));
    assertFalse(r.capacity().feasible());
    assertTrue(r.capacity().reasons().get(0).contains("workload.maxNumTokens"),
        r.capacity()::toString);
    assertTrue(run(request("trtllm", "[[1000, 1], [9000, 1]]", ", \"chunkedPrefill\": true"))
        .capacity().feasible());
  }

  @Test
  void aModelThatDoesNotFitSaysWhy() {
    InferenceResult r = run(request("vllm", "1000", "").replace("\"tp\": 4, \"dp\": 2",
        "\"tp\": 1, \"dp\": 8").replace("\"fp8\", \"kvCachePrecision\": \"fp8\"", "\"bf16\""));
    assertFalse(r.capacity().feasible());
    assertTrue(r.capacity().reasons().get(0).startsWith("memory:"), r.capacity()::toString);
    assertEquals(0, r.capacity().outputTokensPerSecond());
  }

  @Test
  void badFieldsAreNamed() {
    assertTrue(bad(request("vllm", "1000", "").replace("\"capacity\"", "\"peak\""))
        .getMessage().startsWith("workload.mode: unknown mode 'peak'"));
    assertTrue(bad(request("trtllm", "1000", ", \"engineSettings\": \"trtllm-bench\"")
        .replace("\"capacity\"", "\"slo\"")).getMessage().startsWith("workload.engineSettings:"
            + " needs workload.mode capacity (got trtllm-bench with mode slo)"));
    assertTrue(bad(request("vllm-x", "1000", "")).getMessage()
        .startsWith("workload.engine: unknown serving engine 'vllm-x'"));
    assertTrue(bad(request("vllm", "[[1000, -1]]", "")).getMessage()
        .startsWith("workload.promptTokens[0].weight"));
    assertTrue(bad(request("vllm", "[[0, 1]]", "")).getMessage()
        .startsWith("workload.promptTokens[0].tokens"));
    assertTrue(bad(request("vllm", "[[10.5, 1]]", "")).getMessage()
        .startsWith("workload.promptTokens[0]"));
    assertTrue(bad(request("vllm", "[]", "")).getMessage()
        .startsWith("workload.promptTokens: at least one"));
    assertTrue(bad(request("vllm", "\"long\"", "")).getMessage()
        .startsWith("workload.promptTokens: must be a whole number"));
    assertTrue(bad(request("vllm", "1000", ", \"memoryFraction\": 1.5")).getMessage()
        .startsWith("workload.memoryFraction: must be in (0, 1]"));
    assertTrue(bad(request("vllm", "1000", ", \"maxNumTokens\": 0")).getMessage()
        .startsWith("workload.maxNumTokens"));
    assertTrue(bad(request("vllm", "1000", ", \"arrivalRatePerSecond\": 3")).getMessage()
        .startsWith("workload.arrivalRatePerSecond: capacity mode"));
    String fixed = request("vllm", "1000", ", \"batchSize\": 8")
        .replace("\"mode\": \"capacity\", \"engine\": \"vllm\",", "");
    assertTrue(bad(fixed.replace("\"promptTokens\": 1000", "\"promptTokens\": [[1000, 1]]"))
        .getMessage().startsWith("workload.promptTokens: a length distribution needs"));
    assertTrue(bad(fixed.replace("\"batchSize\": 8", "\"batchSize\": 8, \"maxNumSeqs\": 4"))
        .getMessage().startsWith("workload.maxNumSeqs: the batch limit of a server under load"
            + " needs workload.arrivalRatePerSecond"));
    assertTrue(bad(request("vllm", "1000", "").replace("\"tp\": 4, \"dp\": 2",
        "\"tp\": 4, \"pp\": 2, \"dp\": 1")).getMessage().startsWith("layout.pp"));
  }

  @Test
  void trtllmBenchPicksItsOwnLimits() {
    CapacityEstimate c = run(request("trtllm", "1000", ", \"engineSettings\": \"trtllm-bench\""))
        .capacity();
    // The requests the KV cache holds at the mean lengths (≤ 4096), and that many times
    // 1 + ISL/OSL tokens rounded up to 1024 above 8192 (tuning.py).
    assertTrue(c.maxNumSeqs() > 64 && c.maxNumSeqs() <= 4096, c::toString);
    assertEquals(Math.min(32768, (int) (1024 * Math.ceil(2.0 * c.maxNumSeqs() / 1024))),
        c.maxNumTokens(), c::toString);
    var h100 = Catalog.builtIn().accelerators().get("h100-sxm-80gb");
    int[] small = ServingEngine.trtllmBenchSettings(h100, 1, 1e6, 70e9, 2048, 128, 20000, 0.9,
        false);
    int seqs = (int) Math.ceil((h100.memoryBytes() - 70e9) * 0.9 / (1e6 * (2048 + 128)));
    assertEquals(seqs, small[0]);
    // seqs · 17 tokens is under 2048: the floor 2048, then the longest prompt plus the limit
    // without chunking.
    assertTrue(seqs * 17 < 2048);
    assertEquals(20000 + seqs, small[1]);
    assertTrue(bad(request("vllm", "1000", ", \"engineSettings\": \"trtllm-bench\""))
        .getMessage().startsWith("workload.engineSettings: trtllm-bench needs"));
    assertTrue(bad(request("trtllm", "1000", ", \"engineSettings\": \"bench\""))
        .getMessage().startsWith("workload.engineSettings: unknown settings 'bench'"));
    assertTrue(bad(request("trtllm", "1000",
        ", \"engineSettings\": \"trtllm-bench\", \"maxNumSeqs\": 8")).getMessage()
        .startsWith("workload.engineSettings: trtllm-bench picks"));
  }

  @Test
  void theJsonFormIsReadBack() {
    JsonNode json = Serving.toJson(run(request("sglang", "1000", "")));
    assertEquals("sglang", json.get("capacity").get("engine").asText());
    assertTrue(Json.parseObject("x", json.toString()).get("capacity").get("feasible")
        .asBoolean());
  }
}
