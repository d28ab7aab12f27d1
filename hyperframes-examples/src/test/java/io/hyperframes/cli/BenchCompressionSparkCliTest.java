package io.hyperframes.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.hyperframes.json.Json;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * {@code bench compression --spark MASTER}: the Spark module's jar runs in a process of its own
 * and its JSON comes back whole; bad settings are named before anything starts.
 */
class BenchCompressionSparkCliTest {

  @Test
  void theSparkRunReportsBothTrainingModesAndEveryCodec() {
    Path jar = Path.of("..", SparkRun.JAR);
    assumeTrue(Files.isRegularFile(jar), "the Spark module's jar is built by the reactor's"
        + " package phase before this module's tests; not there when this module builds alone");
    CliTest.Result r = CliTest.run("bench", "compression", "--spark", "local[2]", "--steps", "2",
        "--hidden", "16", "--rows", "512", "--codecs", "topk-0.01-ef,dl4j-threshold",
        "--format", "json");
    assertEquals(0, r.status(), r.err());
    JsonNode json = Json.parseObject("spark", r.out().substring(r.out().indexOf('{')));
    assertEquals("local[2]", json.get("master").asText());
    assertEquals(1, json.get("epochs").asInt(), "2 steps of 512 rows: one epoch");
    for (String side : List.of("default", "fused")) {
      assertTrue(json.get("parameterAveraging").get(side).get("samplesPerSecond").asDouble() > 0);
    }
    assertTrue(json.get("parameterAveraging").get("fusedSpeedup").asDouble() > 0);
    List<String> codecs = new ArrayList<>();
    for (JsonNode row : json.get("encoded")) {
      codecs.add(row.get("codec").asText());
      assertTrue(row.get("bytesPerStep").asDouble() > 0, row.toString());
    }
    assertEquals(List.of("none", "topk-0.01-ef"), codecs, "dl4j-threshold cannot run on Spark");
    assertTrue(json.get("encoded").get(1).get("ratio").asDouble() > 20, json.toString());
  }

  @Test
  void aLocalClusterRunTrainsInExecutorProcesses() {
    Path jar = Path.of("..", SparkRun.JAR);
    assumeTrue(Files.isRegularFile(jar), "the Spark module's jar is built by the reactor's"
        + " package phase before this module's tests; not there when this module builds alone");
    // Executors in processes of their own: DL4J's parameter averaging hands them the batches
    // directly, and the temporary Spark home (with the executors' logs under work/) goes.
    CliTest.Result r = CliTest.run("bench", "compression", "--spark", "local-cluster[2,1,1024]",
        "--steps", "2", "--hidden", "16", "--rows", "512", "--codecs", "topk-0.01-ef",
        "--format", "json");
    assertEquals(0, r.status(), r.err());
    JsonNode json = Json.parseObject("spark", r.out().substring(r.out().indexOf('{')));
    assertEquals("local-cluster[2,1,1024]", json.get("master").asText());
    assertTrue(json.get("parameterAveraging").get("fused").get("samplesPerSecond").asDouble() > 0);
    assertEquals(2, json.get("encoded").size());
  }

  @Test
  void badSparkSettingsAreNamed() {
    CliTest.Result r = CliTest.run("bench", "compression", "--spark", "local[2]", "--spark-jar",
        "no/such.jar");
    assertEquals(2, r.status());
    assertTrue(r.err().contains("--spark-jar: no/such.jar is not a file"), r.err());
    r = CliTest.run("bench", "compression", "--spark", " ");
    assertEquals(2, r.status());
    assertTrue(r.err().contains("--spark: a master must be given"), r.err());
    r = CliTest.run("bench", "compression", "--spark", "local[2]", "--record", "x.json");
    assertEquals(2, r.status());
    assertTrue(r.err().contains("--record: not available with --spark"), r.err());
  }
}
