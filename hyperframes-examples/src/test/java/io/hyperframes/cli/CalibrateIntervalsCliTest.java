package io.hyperframes.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.hyperframes.json.Json;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code calibrate --intervals} writes, beside the fitted constants, the step-time bands of the
 * regimes the calibrating runs fall in, from their leave-one-source-out residuals (issue 33:
 * the band is written by calibrate), and an estimate with that catalog carries them.
 */
class CalibrateIntervalsCliTest {

  @TempDir Path dir;

  @Test
  void theOverrideCarriesTheBandsOfTheRegimesTheRunsFallIn() throws IOException {
    Path out = dir.resolve("fitted.json");
    CliTest.Result r = CliTest.run("calibrate", "--cases",
        "../docs/validation/training-cases.json", "--fit", "halfdim,elementwise", "--out",
        out.toString(), "--intervals");
    assertEquals(0, r.status(), r.err());
    JsonNode written = Json.parseObject("fitted", Files.readString(out));
    assertTrue(written.get("kernels").size() >= 1, written.toString());
    Set<String> regimes = new HashSet<>();
    for (JsonNode e : written.get("intervals")) {
      // Only regimes with cases of these runs: the others keep the catalog's bands.
      assertTrue(e.get("cases").asInt() > 0, e.toString());
      assertTrue(e.get("low").asDouble() <= 1 && e.get("high").asDouble() >= 1, e.toString());
      assertTrue(e.get("source").asText().contains("hyperframes calibrate --intervals"),
          e.toString());
      regimes.add(e.get("generation").asText() + " " + e.get("regime").asText());
    }
    assertTrue(r.out().contains("intervals: " + regimes.size() + " regime(s) from "), r.out());
    assertTrue(regimes.contains("hopper model-parallel"), regimes.toString());
    // An estimate with the override takes its band: the 70B H100 example is hopper
    // model-parallel, and its interval is the written band around its step time.
    JsonNode band = null;
    for (JsonNode e : written.get("intervals")) {
      if (e.get("generation").asText().equals("hopper")
          && e.get("regime").asText().equals("model-parallel")) {
        band = e;
      }
    }
    CliTest.Result est = CliTest.run("estimate", "--request", "../examples/llama2-70b-h100.json",
        "--catalog", out.toString(), "--format", "json");
    assertEquals(0, est.status(), est.err());
    JsonNode doc = Json.parseObject("estimate", est.out());
    double seconds = doc.findValue("stepSeconds").asDouble();
    assertTrue(seconds > 0, est.out());
    assertEquals(seconds * band.get("low").asDouble(), doc.findValue("stepSecondsLow").asDouble(),
        seconds * 1e-3);
    assertEquals(seconds * band.get("high").asDouble(),
        doc.findValue("stepSecondsHigh").asDouble(), seconds * 1e-3);
    assertEquals(band.get("cases").asInt(), doc.get("interval").get("cases").asInt());
  }

  @Test
  void intervalsWithoutAnOutputFileIsRefusedNamingTheOption() {
    CliTest.Result r = CliTest.run("calibrate", "--cases",
        "../docs/validation/training-cases.json", "--intervals");
    assertEquals(2, r.status());
    assertTrue(r.err().contains("--intervals") && r.err().contains("--out"), r.err());
  }
}
