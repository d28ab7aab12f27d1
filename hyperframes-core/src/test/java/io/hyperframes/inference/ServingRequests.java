package io.hyperframes.inference;

/** Serving requests that tests of several packages plan. */
public final class ServingRequests {
  private ServingRequests() {}

  /**
   * DeepSeek-V3 in FP8 (BF16 KV cache) on H100 at 20 requests/s, 2000-token prompts and
   * 500-token answers, p99 TTFT ≤ 2 s and TPOT ≤ 100 ms: a model no node of H100 holds, whose
   * plan spreads the experts over several replicas (docs/inference.md, "A model no node holds").
   */
  public static final String DEEPSEEK_H100 = "{\"model\": {\"catalog\": \"deepseek-v3\"},"
      + " \"cluster\": {\"accelerator\": \"h100-sxm-80gb\", \"devices\": 96},"
      + " \"workload\": {\"type\": \"inference\", \"batchSize\": 1, \"precision\": \"fp8\","
      + " \"kvCachePrecision\": \"bf16\", \"promptTokens\": 2000, \"outputTokens\": 500,"
      + " \"arrivalRatePerSecond\": 20,"
      + " \"latencySlo\": {\"ttftSeconds\": 2.0, \"tpotSeconds\": 0.1}}}";

  /**
   * {@link #DEEPSEEK_H100} at 45 requests/s: more than two nodes serve, fewer than four; the plan
   * takes three, an expert-parallel group of 24 devices with 8 redundant experts
   * (docs/inference.md, "A model no node holds").
   */
  public static final String DEEPSEEK_H100_45 = DEEPSEEK_H100.replace(
      "\"arrivalRatePerSecond\": 20", "\"arrivalRatePerSecond\": 45");

  /**
   * Llama 3.1 405B in BF16 on H100 at 2 requests/s, 2000-token prompts and 500-token answers,
   * p99 TTFT ≤ 5 s and TPOT ≤ 100 ms: a dense model no node holds (810 GB of weights against a
   * node's 640), served by pipeline stages over nodes (docs/inference.md, "A dense model no node
   * holds").
   */
  public static final String LLAMA_405B_BF16 = """
      {"model": {"catalog": "llama3.1-405b"}, "cluster": {"accelerator": "h100-sxm-80gb",
       "devices": 8}, "workload": {"type": "inference", "precision": "bf16", "batchSize": 1,
       "promptTokens": 2000, "outputTokens": 500, "arrivalRatePerSecond": 2,
       "latencySlo": {"ttftSeconds": 5, "tpotSeconds": 0.1}},
       "constraints": {"weightFormats": ["bf16"], "kvFormats": ["bf16"]}}
      """;
}
