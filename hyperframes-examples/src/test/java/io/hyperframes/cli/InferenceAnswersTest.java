package io.hyperframes.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.hyperframes.json.Json;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;
import org.junit.jupiter.api.Test;

/**
 * The figures of docs/inference.md "Questions answered" are what {@code estimate} prints for
 * the example requests (and the two variants the page describes), so they cannot drift from
 * the model.
 */
class InferenceAnswersTest {

  private static final Path DOC = Path.of("..", "docs", "inference.md");

  private static JsonNode estimate(String json) throws IOException {
    Path file = Files.createTempFile("answer", ".json");
    try {
      Files.writeString(file, json, StandardCharsets.UTF_8);
      CliTest.Result r = CliTest.run("estimate", "--request", file.toString(), "--format",
          "json");
      assertEquals(0, r.status(), r.err());
      return Json.parseObject("estimate", r.out());
    } finally {
      Files.deleteIfExists(file);
    }
  }

  private static String example(String name) throws IOException {
    return Files.readString(Path.of("..", "examples", name), StandardCharsets.UTF_8);
  }

  private static void quoted(String text, String format, Object... args) {
    String q = String.format(Locale.ROOT, format, args);
    assertTrue(text.contains(q), "docs/inference.md does not say: " + q);
  }

  @Test
  void theSevenBillionAnswerIsTheEstimate() throws IOException {
    String doc = Files.readString(DOC, StandardCharsets.UTF_8).replaceAll("\\s+", " ");
    JsonNode full = estimate(example("7b-fp16-4096.json"));
    quoted(doc, "weights %.1f GiB", full.at("/memory/weightsBytes").asDouble() / (1L << 30));
    quoted(doc, "KV cache %.0f KiB per token",
        full.at("/inference/kvCacheBytesPerToken").asDouble() / 1024);
    quoted(doc, "**%d conversations fit**", full.at("/inference/maxBatchSize").asLong());
    quoted(doc, "(%.0f GiB, `feasible: false`", full.at("/memory/totalBytes").asDouble()
        / (1L << 30));
    JsonNode fits = estimate(example("7b-fp16-4096.json").replace("\"batchSize\": 64",
        "\"batchSize\": 25"));
    quoted(doc, "fits (%.0f GiB): TPOT %.1f ms", fits.at("/memory/totalBytes").asDouble()
        / (1L << 30), fits.at("/inference/tpotSeconds").asDouble() * 1e3);
    quoted(doc, "%.0f per device", fits.at("/inference/outputTokensPerSecondPerDevice")
        .asDouble());
    quoted(doc, "%.1f s to prefill all 25 prompts", fits.at("/inference/prefillSeconds")
        .asDouble());
  }

  @Test
  void theSeventyBillionAnswerIsTheEstimate() throws IOException {
    String doc = Files.readString(DOC, StandardCharsets.UTF_8).replaceAll("\\s+", " ");
    JsonNode busy = estimate(example("70b-8xh100-20rps.json"));
    quoted(doc, "sustains **%.1f requests/s**", busy.at("/inference/capacityRequestsPerSecond")
        .asDouble());
    quoted(doc, "`devicesNeeded: %d`", busy.at("/inference/devicesNeeded").asInt());
    quoted(doc, "`%s`", busy.at("/reasons/0").asText().replaceAll(";.*", ""));
    JsonNode shorter = estimate(example("70b-8xh100-20rps.json").replace(
        "\"promptTokens\": 1024, \"outputTokens\": 256",
        "\"promptTokens\": 512, \"outputTokens\": 128"));
    quoted(doc, "sustains %.1f requests/s and at 20 requests/s the simulation gives **p99 TTFT"
        + " %.3f s**", shorter.at("/inference/capacityRequestsPerSecond").asDouble(),
        shorter.at("/inference/ttftP99Seconds").asDouble());
    quoted(doc, "(p50 %.3f s; unloaded %.3f s) and p99 latency %.2f s",
        shorter.at("/inference/ttftP50Seconds").asDouble(),
        shorter.at("/inference/ttftSeconds").asDouble(),
        shorter.at("/inference/p99LatencySeconds").asDouble());
  }
}
