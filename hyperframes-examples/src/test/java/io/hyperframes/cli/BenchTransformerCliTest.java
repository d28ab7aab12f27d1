package io.hyperframes.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.hyperframes.json.Json;
import io.hyperframes.nd4j.CausalAttention;
import io.hyperframes.nd4j.Kernels;
import io.hyperframes.runtime.BenchmarkRecord;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code bench transformer} on a tiny model: both sides start from the same weights, so their
 * losses before training agree to FP32 rounding and after four FP32 steps of Adam (one untimed,
 * three timed) within 2 %;
 * every figure of the JSON is there and consistent; bad options name themselves.
 */
class BenchTransformerCliTest {

  private static final String CORPUS = "../docs/user-guide.md";

  @TempDir Path dir;

  /** The tiny benchmark, with each option of {@code extra} replacing or adding to it. */
  private static CliTest.Result bench(String... extra) {
    List<String> args = new ArrayList<>(List.of("bench", "transformer", "--layers", "1",
        "--hidden", "32", "--heads", "2", "--ffn", "48", "--sequence", "32", "--batch", "2",
        "--steps", "3", "--warm-up-steps", "1", "--decode-tokens", "8", "--corpus", CORPUS));
    for (int i = 0; i < extra.length; i++) {
      int at = args.indexOf(extra[i]);
      if (at >= 0 && i + 1 < extra.length && !extra[i + 1].startsWith("--")) {
        args.set(at + 1, extra[++i]);
      } else {
        args.add(extra[i]);
      }
    }
    return CliTest.run(args.toArray(String[]::new));
  }

  @Test
  void bothSidesComputeTheSameModelAndEveryFigureIsThere() {
    Assumptions.assumeTrue(CausalAttention.available(), "oneDNN did not load");
    Path record = dir.resolve("transformer.json");
    CliTest.Result r = bench("--precision", "fp32", "--format", "json", "--record",
        record.toString());
    assertEquals(0, r.status(), r.err());
    JsonNode t = Json.parseObject("bench transformer", r.out());
    JsonNode hf = t.get("hyperframes");
    JsonNode djl = t.get("djlPytorch");
    assertEquals("fp32", t.get("precision").asText(), "asked for, it runs on every CPU");
    assertEquals("fp32", t.get("precisionRequested").asText());
    double start = hf.get("initialLoss").asDouble();
    // The first batch is bytes of the corpus (docs/user-guide.md), so the start moves a little
    // with every edit of the guide (0.054 above ln 256 after one of 2026-12-06): 3 % of ln 256.
    assertEquals(Math.log(256), start, 0.03 * Math.log(256),
        "a fresh model guesses nearly uniformly");
    assertEquals(start, djl.get("initialLoss").asDouble(), 1e-4 * start,
        "the same weights give the same loss");
    assertEquals(djl.get("loss").asDouble(), hf.get("loss").asDouble(),
        0.02 * djl.get("loss").asDouble(), "four steps of Adam on the same batches");
    assertTrue(hf.get("loss").asDouble() < start, "training lowers the held-out loss");
    assertEquals(hf.get("loss").asDouble() / djl.get("loss").asDouble() - 1,
        t.get("lossDifference").asDouble(), 1e-12);
    assertEquals(hf.get("samplesPerSecond").asDouble() / djl.get("samplesPerSecond").asDouble(),
        t.get("djlSpeedup").asDouble(), 1e-9);
    for (JsonNode side : List.of(hf, djl)) {
      JsonNode d = side.get("decode");
      assertEquals(8, d.get("tokens").asInt());
      assertTrue(d.get("p50Seconds").asDouble() > 0
          && d.get("p99Seconds").asDouble() >= d.get("p50Seconds").asDouble(), d.toString());
      assertEquals(side.get("samplesPerSecond").asDouble()
          * t.get("limit").get("flopsPerSample").asDouble() / 1e9,
          side.get("gflopsPerSecond").asDouble(), 1e-9);
    }
    assertEquals(hf.get("decode").get("p99Seconds").asDouble()
        / djl.get("decode").get("p99Seconds").asDouble(), t.get("djlP99Ratio").asDouble(),
        1e-12);
    // 6 × (4h² + 3hf + 256h) × T + 6 × T² × h, one layer.
    assertEquals(6.0 * (4 * 32 * 32 + 3 * 32 * 48 + 256 * 32) * 32 + 6.0 * 32 * 32 * 32,
        t.get("limit").get("flopsPerSample").asDouble());
    assertEquals(1 * (4 * 32 * 32 + 3 * 32 * 48) + 2 * 256 * 32 + 3 * 32,
        t.get("model").get("parameters").asLong());
    assertTrue(t.get("machine").has("cores"), t.get("machine").toString());
    BenchmarkRecord rec = BenchmarkRecord.read(record);
    assertEquals(3, rec.metrics().get("hyperframes.stepSeconds").samples().length);
    assertEquals(3, hf.get("stepSeconds").size());
    assertEquals(3, djl.get("stepSeconds").size());
    assertEquals(1, t.get("warmUpSteps").asInt());
    assertEquals(8, rec.metrics().get("djlPytorch.decodeSeconds").samples().length);
    assertEquals("transformer", rec.conditions().get("command").replace("bench ", ""));
  }

  @Test
  void theDefaultPrecisionIsTheFasterOneOnThisCpu() {
    Assumptions.assumeTrue(CausalAttention.available(), "oneDNN did not load");
    CliTest.Result r = bench("--no-djl", "--format", "json");
    assertEquals(0, r.status(), r.err());
    JsonNode t = Json.parseObject("bench transformer", r.out());
    assertEquals("auto", t.get("precisionRequested").asText());
    assertEquals(Kernels.cpu().nativeBf16() ? "bf16" : "fp32", t.get("precision").asText(),
        Kernels.cpu().capabilities().toString());
  }

  @Test
  void badOptionsNameThemselves() {
    CliTest.Result r = bench("--heads", "3");
    assertEquals(2, r.status());
    assertTrue(r.err().contains("--heads: heads: hidden 32 / heads 3"), r.err());
    r = bench("--decode-tokens", "40");
    assertEquals(2, r.status());
    assertTrue(r.err().contains("--decode-tokens: 40 is more than --sequence 32"), r.err());
    r = bench("--corpus", "no-such-file.txt");
    assertEquals(2, r.status());
    assertTrue(r.err().contains("--corpus: no file no-such-file.txt"), r.err());
    r = bench("--precision", "fp8");
    assertEquals(2, r.status());
    assertTrue(r.err().contains("--precision: fp8 is not auto, bf16 or fp32"), r.err());
    r = bench("--warm-up-steps", "-1");
    assertEquals(2, r.status());
    assertTrue(r.err().contains("--warm-up-steps: must be >= 0, got -1"), r.err());
  }
}
