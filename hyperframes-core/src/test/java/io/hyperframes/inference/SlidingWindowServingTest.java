package io.hyperframes.inference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.hyperframes.catalog.Catalog;
import io.hyperframes.json.Json;
import org.junit.jupiter.api.Test;

/**
 * gpt-oss-120b's windowed layers keep only the blocks of their last 128 tokens: at a 32K-token
 * prompt its KV cache per sequence is about half that of the same model attending fully
 * everywhere, and prefill and decode are faster.
 */
class SlidingWindowServingTest {

  private static final String ARCHITECTURE = "\"name\": \"gpt-oss-120b\", \"layers\": 36,"
      + " \"hidden\": 2880, \"heads\": 64, \"kvHeads\": 8, \"headDim\": 64, \"ffnHidden\": 2880,"
      + " \"gatedMlp\": true, \"vocab\": 201088, \"seqLen\": 4096, \"tiedEmbeddings\": false,"
      + " \"moe\": {\"experts\": 128, \"topK\": 4, \"expertFfnHidden\": 2880}";

  private static JsonNode serve(String model) {
    return serve(model, 2, 8);
  }

  /** An FP8 serving estimate of 32K-token prompts and 1024-token answers on tp H100. */
  private static JsonNode serve(String model, int tp, int batch) {
    String json = "{\"model\": {" + model + "}, \"cluster\": {\"accelerator\":"
        + " \"h100-sxm-80gb\", \"devices\": " + tp + "}, \"workload\": {\"type\":"
        + " \"inference\", \"precision\": \"fp8\", \"batchSize\": " + batch + ","
        + " \"promptTokens\": 32768, \"outputTokens\": 1024}, \"layout\": {\"tp\": " + tp
        + "}}";
    return Serving.toJson(Serving.evaluate(Serving.fromJson(Json.parseObject("request", json),
        Catalog.builtIn()))).get("inference");
  }

  @Test
  void windowedLayersKeepTheirWindowAndSpeedUpLongPrompts() {
    JsonNode windowed = serve("\"catalog\": \"gpt-oss-120b\"");
    JsonNode same = serve(ARCHITECTURE + ", \"slidingWindow\": {\"tokens\": 128,"
        + " \"fullAttentionEvery\": 2}");
    assertEquals(windowed.get("kvCacheBytesPerSequence").asDouble(),
        same.get("kvCacheBytesPerSequence").asDouble(), 0.0, "the catalog entry is the JSON");
    JsonNode full = serve(ARCHITECTURE);
    // 33 792 tokens in 16-token blocks; a windowed layer keeps ceil(128 / 16) + 1 blocks.
    double paged = 32768 + 1024;
    double kept = 0.5 * paged + 0.5 * (128 / 16 + 1) * 16;
    assertEquals(kept / paged, windowed.get("kvCacheBytesPerSequence").asDouble()
        / full.get("kvCacheBytesPerSequence").asDouble(), 1e-12);
    assertEquals(full.get("kvCacheBytesPerToken").asDouble(),
        windowed.get("kvCacheBytesPerToken").asDouble(), 0.0, "a token adds the same KV");
    assertTrue(windowed.get("prefillSeconds").asDouble()
        < full.get("prefillSeconds").asDouble());
    assertTrue(windowed.get("decodeSecondsPerToken").asDouble()
        < full.get("decodeSecondsPerToken").asDouble());
  }

  /**
   * Llama 4 Scout's chunked layers (three in four, chunks of 8192) keep one chunk of a 32K-token
   * prompt; they decode faster than a sliding window of the same length, which reads 8192
   * positions where a chunk reads 4096 on average, and prefill faster (a quarter of the pairs
   * against 0.44).
   */
  @Test
  void chunkedLayersKeepOneChunkAndReadHalfOfOne() {
    String scout = "\"name\": \"scout\", \"layers\": 48, \"hidden\": 5120, \"heads\": 40,"
        + " \"kvHeads\": 8, \"headDim\": 128, \"ffnHidden\": 16384, \"gatedMlp\": true,"
        + " \"vocab\": 202048, \"seqLen\": 8192, \"tiedEmbeddings\": false, \"moe\":"
        + " {\"experts\": 16, \"topK\": 1, \"expertFfnHidden\": 8192, \"sharedExperts\": 1,"
        + " \"sharedExpertFfnHidden\": 8192}";
    JsonNode chunked = serve(scout + ", \"slidingWindow\": {\"tokens\": 8192,"
        + " \"fullAttentionEvery\": 4, \"chunked\": true}", 4, 2);
    assertEquals(serve("\"catalog\": \"llama4-scout\"", 4, 2).get("decodeSecondsPerToken")
        .asDouble(), chunked.get("decodeSecondsPerToken").asDouble(), 0.0,
        "the catalog entry is the JSON");
    JsonNode sliding = serve(scout + ", \"slidingWindow\": {\"tokens\": 8192,"
        + " \"fullAttentionEvery\": 4}", 4, 2);
    JsonNode full = serve(scout, 4, 2);
    double paged = 32768 + 1024;
    double kept = 0.25 * paged + 0.75 * (8192 / 16 + 1) * 16;
    assertEquals(kept / paged, chunked.get("kvCacheBytesPerSequence").asDouble()
        / full.get("kvCacheBytesPerSequence").asDouble(), 1e-12);
    assertEquals(sliding.get("kvCacheBytesPerSequence").asDouble(),
        chunked.get("kvCacheBytesPerSequence").asDouble(), 0.0);
    assertTrue(chunked.get("decodeSecondsPerToken").asDouble()
        < sliding.get("decodeSecondsPerToken").asDouble());
    assertTrue(chunked.get("prefillSeconds").asDouble()
        < sliding.get("prefillSeconds").asDouble());
    assertTrue(sliding.get("prefillSeconds").asDouble() < full.get("prefillSeconds").asDouble());
  }

  /**
   * The serving layer is a sum over the model's blocks, windowed layers a block of their own:
   * a window or chunk at least as long as the whole request (32K-token prompt and 1K answer)
   * keeps every pair and every position, so prefill, decode and the KV cache equal those of the
   * same model attending fully everywhere; a window of the prompt alone still saves on the
   * decode reads past it.
   */
  @Test
  void aWindowCoveringTheRequestIsFullAttention() {
    JsonNode full = serve(ARCHITECTURE);
    for (String window : new String[] {"\"tokens\": 33792, \"fullAttentionEvery\": 2",
        "\"tokens\": 65536, \"fullAttentionEvery\": 0",
        "\"tokens\": 40000, \"fullAttentionEvery\": 4, \"chunked\": true"}) {
      JsonNode covered = serve(ARCHITECTURE + ", \"slidingWindow\": {" + window + "}");
      for (String field : new String[] {"prefillSeconds", "decodeSecondsPerToken",
          "kvCacheBytesPerSequence"}) {
        assertEquals(full.get(field).asDouble(), covered.get(field).asDouble(),
            1e-12 * full.get(field).asDouble(), window + " " + field);
      }
    }
    JsonNode prompt = serve(ARCHITECTURE + ", \"slidingWindow\": {\"tokens\": 32768,"
        + " \"fullAttentionEvery\": 2}");
    assertEquals(full.get("prefillSeconds").asDouble(), prompt.get("prefillSeconds").asDouble(),
        1e-12 * full.get("prefillSeconds").asDouble());
    assertTrue(prompt.get("decodeSecondsPerToken").asDouble()
        < full.get("decodeSecondsPerToken").asDouble());
  }

}
