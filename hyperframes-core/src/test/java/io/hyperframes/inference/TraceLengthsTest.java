package io.hyperframes.inference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.hyperframes.catalog.Catalog;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Size;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Request lengths read from a trace ({@code {"trace": FILE}} in capacity mode): the Azure LLM
 * inference traces' lengths, summarised in bins that keep the mean and the longest; every bad
 * field named.
 */
class TraceLengthsTest {

  static final String CONV = "../docs/validation/azure-llm/AzureLLMInferenceTrace_conv.csv";

  static final String REQUEST = """
      {"model": {"catalog": "llama3-70b"},
       "cluster": {"accelerator": "h100-sxm-80gb", "devices": 8},
       "workload": {"type": "inference", "mode": "MODE", "engine": "vllm", "precision": "fp8",
                    "kvCachePrecision": "fp8", "promptTokens": PROMPT, "outputTokens": OUTPUT},
       "layout": {"tp": 4, "dp": 2}}
      """;

  static String request(String prompt, String output) {
    return REQUEST.replace("MODE", "capacity").replace("PROMPT", prompt)
        .replace("OUTPUT", output);
  }

  static InferenceResult run(String json) {
    return Serving.evaluate(Serving.parse(json, Catalog.builtIn()));
  }

  static IllegalArgumentException bad(String json) {
    return assertThrows(IllegalArgumentException.class, () -> run(json));
  }

  /** A column of the trace, rows of 0 left out, read here without the library's reader. */
  static int[] column(String file, int index) throws IOException {
    List<String> lines = Files.readAllLines(Path.of(file));
    return lines.subList(1, lines.size()).stream().filter(l -> !l.isBlank())
        .mapToInt(l -> Integer.parseInt(l.split(",")[index].strip())).filter(v -> v > 0)
        .toArray();
  }

  @Property(tries = 1000)
  void binsKeepTheMeanAndTheLongest(
      @ForAll @Size(min = 1, max = 400) List<@IntRange(min = 1, max = 200_000) Integer> lengths,
      @ForAll @IntRange(min = 2, max = 80) int groups) {
    int[] samples = lengths.stream().mapToInt(Integer::intValue).toArray();
    LengthDistribution d = LengthDistribution.ofSamples("lengths", samples, groups);
    double mean = lengths.stream().mapToDouble(Integer::doubleValue).average().orElseThrow();
    assertEquals(mean, d.mean(), 0.5 + 1e-9 * mean);
    assertEquals(lengths.stream().mapToInt(Integer::intValue).max().orElseThrow(), d.max());
    assertTrue(d.bins().size() <= groups, d::toString);
    assertEquals(1.0, d.bins().stream().mapToDouble(LengthDistribution.Bin::weight).sum(), 1e-12);
  }

  @Test
  void theAzureConversationTraceIsRead() throws IOException {
    int[] prompts = column(CONV, 1);
    int[] outputs = column(CONV, 2);
    CapacityEstimate c = run(request("{\"trace\": \"" + CONV + "\"}",
        "{\"trace\": \"" + CONV + "\"}")).capacity();
    assertTrue(c.feasible(), c::toString);
    assertEquals(java.util.Arrays.stream(prompts).average().orElseThrow(), c.meanPromptTokens(),
        0.5);
    assertEquals(java.util.Arrays.stream(outputs).average().orElseThrow(), c.meanOutputTokens(),
        0.5);
    assertTrue(c.outputTokensPerSecond() > 0 && Double.isFinite(c.outputTokensPerSecond()));
    // A column named explicitly reads the same.
    CapacityEstimate named = run(request("{\"trace\": \"" + CONV + "\", \"column\":"
        + " \"ContextTokens\"}", "{\"trace\": \"" + CONV + "\"}")).capacity();
    assertEquals(c, named);
  }

  @Test
  void badTracesAreNamed(@TempDir Path dir) throws IOException {
    assertTrue(bad(request("{\"trace\": \"no/such.csv\"}", "100")).getMessage()
        .startsWith("workload.promptTokens.trace: no such file no/such.csv"));
    assertTrue(bad(request("{\"trace\": \"" + CONV + "\", \"col\": \"x\"}", "100"))
        .getMessage().startsWith("workload.promptTokens.col: unknown field"));
    assertTrue(bad(request("{\"trace\": 3}", "100")).getMessage()
        .startsWith("workload.promptTokens.trace: must be a file path"));
    assertTrue(bad(request("{\"trace\": \"" + CONV + "\", \"column\": \"Tokens\"}", "100"))
        .getMessage().contains("missing column 'Tokens'"));
    Path empty = Files.writeString(dir.resolve("empty.csv"),
        "TIMESTAMP,ContextTokens,GeneratedTokens\nt,0,5\n");
    assertTrue(bad(request("{\"trace\": \"" + empty + "\"}", "100")).getMessage()
        .endsWith("has no row with ContextTokens > 0"));
    Path broken = Files.writeString(dir.resolve("broken.csv"),
        "TIMESTAMP,ContextTokens,GeneratedTokens\nt,12x,5\n");
    assertTrue(bad(request("{\"trace\": \"" + broken + "\"}", "100")).getMessage()
        .contains("column ContextTokens (2): must be an integer, got '12x'"));
    String fixed = request("{\"trace\": \"" + CONV + "\"}", "100")
        .replace("\"mode\": \"capacity\", \"engine\": \"vllm\",", "\"batchSize\": 8,");
    assertTrue(bad(fixed).getMessage().startsWith("workload.promptTokens: a trace needs"
        + " workload.mode capacity"));
  }
}
