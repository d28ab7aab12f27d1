package io.hyperframes.inference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.hyperframes.catalog.Catalog;
import io.hyperframes.hardware.Cluster;
import io.hyperframes.model.TransformerSpec;
import io.hyperframes.precision.NumberFormat;
import io.hyperframes.workload.Attention;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import org.junit.jupiter.api.Test;

/** Laws of the serving estimate. */
class InferenceProperties {

  static final InferenceEstimator ESTIMATOR = InferenceEstimator.analytical();

  static Cluster cluster(String accelerator, int devices) {
    var acc = Catalog.builtIn().accelerators().get(accelerator);
    var node = Catalog.builtIn().nodes().get(acc.defaultNode());
    return new Cluster(acc, devices, node.devicesPerNode(), acc.intraNode(), node.interNode());
  }

  static InferenceWorkload workload(int batch, int prompt, int output) {
    return new InferenceWorkload(NumberFormat.FP16, NumberFormat.FP16, batch, prompt, output, 0,
        0, 0, 99, 16);
  }

  @Property(tries = 1000)
  void memoryNeverDecreasesWithBatchOrContext(@ForAll @IntRange(min = 1, max = 256) int batch,
      @ForAll @IntRange(min = 1, max = 8192) int prompt,
      @ForAll @IntRange(min = 1, max = 4096) int output,
      @ForAll("models") String model, @ForAll("tps") int tp) {
    TransformerSpec m = Catalog.builtIn().models().get(model);
    Cluster c = cluster("h100-sxm-80gb", tp);
    InferenceEstimate base = ESTIMATOR.estimate(m, c, workload(batch, prompt, output), tp, 1, 1);
    InferenceEstimate moreBatch = ESTIMATOR.estimate(m, c, workload(batch + 1, prompt, output),
        tp, 1, 1);
    InferenceEstimate longer = ESTIMATOR.estimate(m, c, workload(batch, prompt + 1, output), tp,
        1, 1);
    assertTrue(moreBatch.totalBytes() >= base.totalBytes());
    assertTrue(longer.totalBytes() >= base.totalBytes());
    for (double v : new double[] {base.prefillSeconds(), base.decodeSecondsPerToken(),
        base.totalBytes(), base.outputTokensPerSecondPerDevice()}) {
      assertTrue(Double.isFinite(v) && v >= 0, "bad figure " + v);
    }
  }

  /**
   * A longer prompt never prefills faster: on H100 (the fused prefill-attention kernel, causal
   * blocks of 128) and on A100 (materialised scores).
   */
  @Property(tries = 500)
  void prefillNeverFallsAsThePromptGrows(@ForAll @IntRange(min = 1, max = 64) int batch,
      @ForAll @IntRange(min = 1, max = 8191) int prompt, @ForAll("models") String model,
      @ForAll("tps") int tp, @ForAll boolean hopper) {
    TransformerSpec m = Catalog.builtIn().models().get(model);
    Cluster c = cluster(hopper ? "h100-sxm-80gb" : "a100-sxm-80gb", tp);
    double shorter = ESTIMATOR.estimate(m, c, workload(batch, prompt, 8), tp, 1, 1)
        .prefillSeconds();
    double longer = ESTIMATOR.estimate(m, c, workload(batch, prompt + 1, 8), tp, 1, 1)
        .prefillSeconds();
    assertTrue(longer >= shorter, () -> prompt + " -> " + (prompt + 1) + " tokens: " + shorter
        + " s -> " + longer + " s");
  }

  /**
   * The per-head decode kernel reads a grouped-query model's KV cache once per query head: its
   * decode step is never faster than the grouped kernel's when both stream at the same fraction
   * and nothing is reread from L2 (the prior), it is slower for every model with fewer KV heads
   * than query heads once the cache weighs, and a multi-head model reads the same bytes either
   * way.
   */
  @Property(tries = 1000)
  void perHeadDecodeReadsTheCacheOncePerQueryHead(@ForAll @IntRange(min = 1, max = 256) int batch,
      @ForAll @IntRange(min = 1, max = 8192) int prompt, @ForAll("models") String model,
      @ForAll("tps") int tp, @ForAll boolean hopper) {
    TransformerSpec m = Catalog.builtIn().models().get(model);
    var acc = Catalog.builtIn().accelerators().get(hopper ? "h100-sxm-80gb" : "a100-sxm-80gb");
    var prior = new java.util.HashMap<NumberFormat, io.hyperframes.hardware.KernelEfficiency>();
    for (NumberFormat f : NumberFormat.values()) {
      if (acc.supports(f)) {
        var k = acc.kernel(f);
        prior.put(f, k.withKvPerHeadBandwidthFraction(0).withKvPerHeadRereadFraction(1));
      }
    }
    var node = Catalog.builtIn().nodes().get(acc.defaultNode());
    var priorAcc = acc.withKernels(prior);
    Cluster c = new Cluster(priorAcc, tp, node.devicesPerNode(), priorAcc.intraNode(),
        node.interNode());
    InferenceWorkload grouped = workload(batch, prompt, 64);
    InferenceWorkload perHead = new InferenceWorkload(NumberFormat.FP16, NumberFormat.FP16,
        batch, prompt, 64, 0, 0, 0, 99, 16, DecodeAttention.PER_HEAD);
    double g = ESTIMATOR.estimate(m, c, grouped, tp, 1, 1).decodeSecondsPerToken();
    double h = ESTIMATOR.estimate(m, c, perHead, tp, 1, 1).decodeSecondsPerToken();
    if (m.kvHeads() == m.heads()) {
      assertEquals(g, h, 1e-12 * g, "multi-head: the same bytes");
    } else {
      assertTrue(h >= g, () -> "per-head " + h + " s < grouped " + g + " s");
      if ((long) batch * prompt >= 1 << 16) {
        assertTrue(h > g, () -> "per-head " + h + " s not above grouped " + g + " s");
      }
    }
  }

  @Test
  void decodeAttentionNamesTheFieldAndTheValue() {
    assertEquals(DecodeAttention.PER_HEAD, DecodeAttention.fromId("f", " Per-Head "));
    assertEquals(DecodeAttention.GROUPED, DecodeAttention.fromId("f", "grouped"));
    assertEquals(8, DecodeAttention.GROUPED.headsRead(64, 8));
    assertEquals(64, DecodeAttention.PER_HEAD.headsRead(64, 8));
    var e = assertThrows(IllegalArgumentException.class, () -> Serving.parse("""
        {"model": {"catalog": "llama2-70b"},
         "cluster": {"accelerator": "h100-sxm-80gb", "devices": 4},
         "workload": {"type": "inference", "precision": "fp8", "batchSize": 8,
                      "promptTokens": 128, "outputTokens": 128, "decodeAttention": "xqa"}}
        """, Catalog.builtIn()));
    assertTrue(e.getMessage().contains("workload.decodeAttention")
        && e.getMessage().contains("'xqa'"), e.getMessage());
    var r = Serving.parse("""
        {"model": {"catalog": "llama2-70b"},
         "cluster": {"accelerator": "h100-sxm-80gb", "devices": 4},
         "workload": {"type": "inference", "precision": "fp8", "batchSize": 8,
                      "promptTokens": 128, "outputTokens": 128, "decodeAttention": "per-head"}}
        """, Catalog.builtIn());
    assertEquals(DecodeAttention.PER_HEAD, r.workload().decodeAttention());
  }

  /**
   * Where no fused-attention efficiency is fitted (A100), a fused prefill runs the two attention
   * products over the causal tiles only and never writes the scores: it is faster than the
   * materialised-scores prefill for every prompt, and the decode step does not change.
   */
  @Property(tries = 1000)
  void fusedPrefillSkipsTheScorePasses(@ForAll @IntRange(min = 1, max = 64) int batch,
      @ForAll @IntRange(min = 1, max = 8192) int prompt, @ForAll("models") String model,
      @ForAll("tps") int tp) {
    TransformerSpec m = Catalog.builtIn().models().get(model);
    Cluster c = cluster("a100-sxm-80gb", tp);
    InferenceWorkload fused = workload(batch, prompt, 8);
    InferenceWorkload standard = new InferenceWorkload(NumberFormat.FP16, NumberFormat.FP16,
        batch, prompt, 8, 0, 0, 0, 99, 16, DecodeAttention.GROUPED, Attention.STANDARD);
    InferenceEstimate f = ESTIMATOR.estimate(m, c, fused, tp, 1, 1);
    InferenceEstimate s = ESTIMATOR.estimate(m, c, standard, tp, 1, 1);
    assertTrue(f.prefillSeconds() < s.prefillSeconds(),
        () -> "fused " + f.prefillSeconds() + " s, standard " + s.prefillSeconds() + " s");
    assertEquals(s.decodeSecondsPerToken(), f.decodeSecondsPerToken(), 0.0);
  }

  @Test
  void prefillAttentionNamesTheFieldAndTheValue() {
    String request = """
        {"model": {"catalog": "llama2-7b"},
         "cluster": {"accelerator": "a100-sxm-80gb", "devices": 1},
         "workload": {"type": "inference", "precision": "fp16", "batchSize": 8,
                      "promptTokens": 128, "outputTokens": 128%s}}
        """;
    assertEquals(Attention.FLASH,
        Serving.parse(request.formatted(""), Catalog.builtIn()).workload().attention());
    assertEquals(Attention.STANDARD, Serving.parse(
        request.formatted(", \"attention\": \"standard\""), Catalog.builtIn())
        .workload().attention());
    var e = assertThrows(IllegalArgumentException.class, () -> Serving.parse(
        request.formatted(", \"attention\": \"paged\""), Catalog.builtIn()));
    assertTrue(e.getMessage().contains("workload.attention")
        && e.getMessage().contains("'paged'"), e.getMessage());
  }

  @net.jqwik.api.Provide
  net.jqwik.api.Arbitrary<String> models() {
    return net.jqwik.api.Arbitraries.of("llama2-7b", "llama2-70b", "mistral-7b", "gpt3-13b");
  }

  @net.jqwik.api.Provide
  net.jqwik.api.Arbitrary<Integer> tps() {
    return net.jqwik.api.Arbitraries.of(1, 2, 4, 8);
  }

  /** devicesNeeded is the minimum: no smaller replica (brute force over tp × pp) meets the SLO. */
  @Property(tries = 200)
  void devicesNeededIsTheMinimumThatMeetsTheSlo(
      @ForAll @IntRange(min = 1, max = 64) int batch,
      @ForAll("models") String model, @ForAll @IntRange(min = 5, max = 200) int tpotMillis) {
    TransformerSpec m = Catalog.builtIn().models().get(model);
    Cluster c = cluster("a100-sxm-80gb", 1);
    InferenceWorkload w = new InferenceWorkload(NumberFormat.FP16, NumberFormat.FP16, batch, 512,
        128, 0, 0, tpotMillis / 1000.0, 99, 16);
    int needed = Serving.devicesForSlo(ESTIMATOR, new InferenceRequest(m, c, w, 1, 1, 1));
    int brute = 0;
    for (int devices = 1; devices <= 64 && brute == 0; devices++) {
      for (int tp = 1; tp <= Math.min(devices, 8) && brute == 0; tp++) {
        if (devices % tp != 0 || m.heads() % tp != 0) {
          continue;
        }
        int pp = devices / tp;
        if (pp > m.layers() || (devices > 8 && devices % 8 != 0)) {
          continue;
        }
        InferenceEstimate e = ESTIMATOR.estimate(m, c.withDevices(devices), w, tp, pp, 1);
        if (e.feasible() && e.tpotSeconds() <= w.tpotSloSeconds()) {
          brute = devices;
        }
      }
    }
    assertEquals(brute, needed);
  }

  @Test
  void kvCacheOfGqaModelsCountsKvHeadsAndReplicatesBeyondThem() {
    TransformerSpec m = Catalog.builtIn().models().get("llama2-70b");
    InferenceEstimate tp1 = ESTIMATOR.estimate(m, cluster("h100-sxm-80gb", 8),
        workload(1, 100, 28), 8, 1, 1);
    // 2 · 80 layers · 8 KV heads · 128 · 2 bytes
    assertEquals(2.0 * 80 * 8 * 128 * 2, tp1.kvCacheBytesPerToken(), 0.0);
    // paged: 128 tokens = 8 blocks of 16
    assertEquals(tp1.kvCacheBytesPerToken() * 128, tp1.kvCacheBytesPerSequence(), 0.0);
  }

  @Test
  void badLayoutsAreRejectedWithTheField() {
    TransformerSpec m = Catalog.builtIn().models().get("llama2-7b");
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> ESTIMATOR.estimate(m, cluster("a100-sxm-80gb", 3), workload(1, 8, 8), 3, 1, 1));
    assertTrue(e.getMessage().startsWith("layout.tp"), e.getMessage());
    IllegalArgumentException f = assertThrows(IllegalArgumentException.class,
        () -> ESTIMATOR.estimate(m, cluster("a100-sxm-80gb", 4), workload(1, 8, 8), 2, 1, 1));
    assertTrue(f.getMessage().startsWith("layout"), f.getMessage());
    IllegalArgumentException g = assertThrows(IllegalArgumentException.class,
        () -> Serving.parse("{\"model\": {\"catalog\": \"llama2-7b\"}, \"cluster\":"
            + " {\"accelerator\": \"a100-sxm-80gb\", \"devices\": 1}, \"workload\": {\"type\":"
            + " \"inference\", \"precision\": \"fp5\", \"batchSize\": 1, \"promptTokens\": 8,"
            + " \"outputTokens\": 8}}", Catalog.builtIn()));
    assertTrue(g.getMessage().startsWith("workload.precision"), g.getMessage());
  }
}
