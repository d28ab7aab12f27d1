package io.hyperframes.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * docs/inference.md's capacity example: {@code estimate} of
 * examples/serve-llama3-70b-capacity.json prints what the guide quotes, and the same request on
 * SGLang's and TensorRT-LLM's schedulers runs the requests the guide names at about the same
 * throughput.
 */
class CapacityCliTest {

  @TempDir Path dir;

  static final Path EXAMPLE = Path.of("..", "examples", "serve-llama3-70b-capacity.json");

  static JsonNode capacity(Path request) {
    return CliTest.estimateJson(request).get("capacity");
  }

  @Test
  void theGuidePrintsTheExample() throws Exception {
    CliTest.estimateInGuide(EXAMPLE, "at capacity", null);
    JsonNode vllm = capacity(EXAMPLE);
    assertEquals("kv-cache", vllm.get("limitedBy").asText());
    String text = Files.readString(EXAMPLE);
    for (String[] e : new String[][] {{"sglang", "828"}, {"trtllm", "712"}}) {
      Path other = Files.writeString(dir.resolve(e[0] + ".json"),
          text.replace("\"vllm\"", "\"" + e[0] + "\""));
      JsonNode c = capacity(other);
      assertEquals(Double.parseDouble(e[1]), c.get("concurrency").asDouble(), e[0]);
      double ratio = c.get("outputTokensPerSecond").asDouble()
          / vllm.get("outputTokensPerSecond").asDouble();
      assertTrue(ratio > 0.97 && ratio < 1.03, e[0] + " " + ratio);
    }
  }

  @Test
  void aBadModeIsNamed() throws Exception {
    Path bad = Files.writeString(dir.resolve("bad.json"),
        Files.readString(EXAMPLE).replace("\"capacity\"", "\"max\""));
    CliTest.Result r = CliTest.run("estimate", "--request", bad.toString());
    assertTrue(r.status() != 0);
    assertTrue(r.err().contains("workload.mode: unknown mode 'max'"), r.err());
  }
}
