package io.hyperframes.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.hyperframes.json.Json;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/**
 * {@code bench plan}: every repeated search of a request evaluates the same candidates and
 * finds the same best plan, and the JSON carries each run's time (no time is asserted: timings
 * are measured, not tested). A bad repeat count or an inference request is named.
 */
class BenchPlanCliTest {

  static final Path COST = Path.of("..", "examples", "13b-cost.json");

  @Test
  void repeatedSearchesAgree() throws Exception {
    CliTest.Result r = CliTest.run("bench", "plan", "--request", COST.toString(), "--repeat",
        "2", "--format", "json");
    assertEquals(0, r.status(), r.err());
    JsonNode out = Json.parseObject("output", r.out());
    assertEquals(2, out.get("runs").size());
    long candidates = out.get("candidates").asLong();
    assertTrue(candidates > 0);
    for (JsonNode run : out.get("runs")) {
      assertEquals(candidates, run.get("candidates").asLong());
      assertTrue(run.get("seconds").asDouble() > 0);
    }
    assertTrue(out.get("sameBest").asBoolean());
    assertTrue(out.has("firstSeconds") && out.has("fastestLaterSeconds"), r.out());
    CliTest.Result table = CliTest.run("bench", "plan", "--request", COST.toString(),
        "--repeat", "1");
    assertEquals(0, table.status(), table.err());
    assertTrue(table.out().contains("run 1") && table.out().contains("warm-up"), table.out());
  }

  @Test
  void badInputIsNamed() throws Exception {
    CliTest.Result r = CliTest.run("bench", "plan", "--request", COST.toString(), "--repeat",
        "0");
    assertTrue(r.status() != 0);
    assertTrue(r.err().contains("--repeat: must be in [1, 20], got 0"), r.err());
    CliTest.Result serve = CliTest.run("bench", "plan", "--request",
        Path.of("..", "examples", "serve-llama3-70b-capacity.json").toString());
    assertEquals(2, serve.status());
    // A serving estimate's request (a fixed layout, no rate) is not a serving plan's.
    assertTrue(serve.err().contains("layout: a serving plan searches tp, ep and replicas"
        + " itself"), serve.err());
  }

  /** A serving plan search is timed the same way, and every run finds the same answer. */
  @Test
  void servingPlansAreTimedToo() throws Exception {
    CliTest.Result r = CliTest.run("bench", "plan", "--request",
        Path.of("..", "examples", "serve-mixtral-8xh100-slo.json").toString(), "--repeat", "2",
        "--format", "json");
    assertEquals(0, r.status(), r.err());
    var json = io.hyperframes.json.Json.parseObject("out", r.out());
    assertEquals("serving", json.get("kind").asText());
    assertEquals(2, json.get("runs").size());
    assertEquals(96, json.get("candidates").asLong(), "the configurations docs/inference.md"
        + " prints for this plan");
    assertTrue(json.get("sameBest").asBoolean());
    assertTrue(json.get("firstSeconds").asDouble() > 0);
  }
}
