package io.hyperframes.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * docs/inference.md's trace example: {@code estimate} of
 * examples/serve-llama3-70b-azure-conv.json (lengths from the Azure conversation trace) prints
 * what the guide quotes. The example's trace path is relative to the repository's root, where the
 * guide runs it; this test runs it from the module's directory, so it reads a copy pointing one
 * level up.
 */
class TraceCapacityCliTest {

  @TempDir Path dir;

  @Test
  void theGuidePrintsTheExample() throws Exception {
    Path request = Files.writeString(dir.resolve("azure-conv.json"),
        Files.readString(Path.of("..", "examples", "serve-llama3-70b-azure-conv.json"))
            .replace("\"docs/", "\"../docs/"));
    CliTest.Result r = CliTest.run("estimate", "--request", request.toString());
    assertEquals(0, r.status(), r.err());
    String out = r.out();
    String block = out.substring(out.indexOf("at capacity"));
    CliTest.assertPrints(Path.of("..", "docs", "inference.md"), block);
  }
}
