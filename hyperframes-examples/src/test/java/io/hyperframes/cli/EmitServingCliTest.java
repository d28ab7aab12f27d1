package io.hyperframes.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * docs/launch.md's serving launch line: {@code plan --emit sglang} on DeepSeek-V3 with
 * multi-token prediction prints what the guide shows, and a training plan refuses the serving
 * targets with the reason.
 */
class EmitServingCliTest {

  @TempDir Path dir;

  static final String DEEPSEEK_MTP = """
      {"model": {"catalog": "deepseek-v3"},
       "cluster": {"accelerator": "h200-sxm-141gb", "devices": 8},
       "workload": {"type": "inference", "precision": "fp8", "batchSize": 8,
                    "promptTokens": 2048, "outputTokens": 512, "arrivalRatePerSecond": 0.5,
                    "speculative": {"method": "mtp", "tokens": 1, "acceptance": 0.85},
                    "latencySlo": {"ttftSeconds": 5.0, "tpotSeconds": 0.2, "percentile": 99}}}
      """;

  @Test
  void theGuidePrintsTheSglangLine() throws Exception {
    Path request = Files.writeString(dir.resolve("ds-serve.json"), DEEPSEEK_MTP);
    CliTest.Result r = CliTest.run("plan", "--request", request.toString(), "--emit", "sglang");
    assertEquals(0, r.status(), r.err());
    assertTrue(r.out().startsWith("python -m sglang.launch_server \\\n"), r.out());
    CliTest.assertPrints(Path.of("..", "docs", "launch.md"), r.out());
    assertTrue(r.err().contains("note: one replica of 8 GPUs"), r.err());
  }

  @Test
  void aTrainingPlanRefusesTheServingTargets() throws Exception {
    CliTest.Result r = CliTest.run("plan", "--request",
        Path.of("..", "examples", "gpt3-175b-a100.json").toString(), "--emit", "trtllm");
    assertEquals(2, r.status(), r.out());
    assertTrue(r.err().contains("--emit: trtllm launches a serving plan"), r.err());
  }
}
