package io.hyperframes.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * docs/inference.md's speculative-decoding example: {@code estimate} of Llama 3 70B on 4 H100
 * with an EAGLE head prints what the guide quotes, and the same request without it decodes at
 * the TPOT the guide compares it with.
 */
class SpeculativeCliTest {

  @TempDir Path dir;

  static final String EAGLE = """
      {"model": {"catalog": "llama3-70b"},
       "cluster": {"accelerator": "h100-sxm-80gb", "devices": 4},
       "workload": {"type": "inference", "precision": "bf16", "batchSize": 1,
                    "promptTokens": 1024, "outputTokens": 256,
                    "speculative": {"method": "eagle", "tokens": 3, "acceptance": 0.8}}}
      """;

  static final String PLAIN = """
      {"model": {"catalog": "llama3-70b"},
       "cluster": {"accelerator": "h100-sxm-80gb", "devices": 4},
       "workload": {"type": "inference", "precision": "bf16", "batchSize": 1,
                    "promptTokens": 1024, "outputTokens": 256}}
      """;

  @Test
  void theGuidePrintsTheEagleEstimate() throws Exception {
    Path eagle = Files.writeString(dir.resolve("eagle.json"), EAGLE);
    CliTest.Result r = CliTest.run("estimate", "--request", eagle.toString());
    assertEquals(0, r.status(), r.err());
    assertTrue(r.out().contains("speculative             2.952 tokens a step"), r.out());
    CliTest.assertPrints(Path.of("..", "docs", "inference.md"), r.out());
    Path without = Files.writeString(dir.resolve("plain.json"), PLAIN);
    CliTest.Result plain = CliTest.run("estimate", "--request", without.toString());
    assertEquals(0, plain.status(), plain.err());
    assertTrue(plain.out().contains("TPOT                    16.42 ms per output token"),
        plain.out());
    assertTrue(!plain.out().contains("speculative"), plain.out());
  }

  @Test
  void aBadAcceptanceIsNamed() throws Exception {
    Path bad = Files.writeString(dir.resolve("bad.json"), EAGLE.replace("0.8}", "1.5}"));
    CliTest.Result r = CliTest.run("estimate", "--request", bad.toString());
    assertTrue(r.status() != 0);
    assertTrue(r.err().contains("workload.speculative.acceptance"), r.err());
  }
}
