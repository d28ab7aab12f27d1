package io.hyperframes.inference;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.hyperframes.catalog.Catalog;
import io.hyperframes.hardware.Cluster;
import io.hyperframes.model.TransformerSpec;
import io.hyperframes.precision.NumberFormat;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;

/**
 * Laws of speculative decoding: with an acceptance rate of 0 every step yields one token, so it
 * is never faster than decoding without it (the draft's passes and a wider verification are
 * added); and a higher acceptance never makes a step slower per token.
 */
class SpeculativeProperties {

  private static final String[] MODELS = {"llama3-8b", "llama2-70b", "qwen3-30b-a3b",
      "mixtral-8x7b", "deepseek-v3", "gpt-oss-20b"};
  private static final String[] DRAFTS = {"llama3-8b", "llama2-7b", "qwen3-30b-a3b",
      "mistral-7b", null, "gpt-oss-20b"};

  private static InferenceEstimate estimate(TransformerSpec m, int devices, int batch,
      int prompt, int output, Speculative s) {
    var acc = Catalog.builtIn().accelerators().get("h200-sxm-141gb");
    var node = Catalog.builtIn().nodes().get(acc.defaultNode());
    Cluster c = new Cluster(acc, devices, node.devicesPerNode(), acc.intraNode(),
        node.interNode());
    InferenceWorkload w = new InferenceWorkload(NumberFormat.FP8_E4M3, NumberFormat.FP8_E4M3,
        batch, prompt, output, 0, 0, 0, 99, 16).withSpeculative(s);
    return InferenceEstimator.analytical().estimate(m, c, w, devices, 1, 1);
  }

  private static Speculative speculative(int model, int method, int tokens, double acceptance) {
    Speculative.Method[] methods = Speculative.Method.values();
    Speculative.Method chosen = methods[method % methods.length];
    TransformerSpec m = Catalog.builtIn().models().get(MODELS[model]);
    if (chosen == Speculative.Method.MTP && m.mtpLayers() == 0) {
      chosen = Speculative.Method.EAGLE;
    }
    if (chosen == Speculative.Method.DRAFT && DRAFTS[model] == null) {
      chosen = Speculative.Method.MTP;
    }
    TransformerSpec draft = chosen == Speculative.Method.DRAFT
        ? Catalog.builtIn().models().get(DRAFTS[model]) : null;
    return new Speculative(chosen, tokens, acceptance, draft);
  }

  @Property(tries = 1000)
  void acceptanceZeroIsNeverFaster(@ForAll @IntRange(min = 0, max = 5) int model,
      @ForAll @IntRange(min = 0, max = 2) int method, @ForAll @IntRange(min = 1, max = 8) int tokens,
      @ForAll @IntRange(min = 1, max = 256) int batch,
      @ForAll @IntRange(min = 16, max = 8192) int prompt,
      @ForAll @IntRange(min = 1, max = 2048) int output) {
    TransformerSpec m = Catalog.builtIn().models().get(MODELS[model]);
    int devices = 8;
    Speculative s = speculative(model, method, tokens, 0.0);
    InferenceEstimate plain = estimate(m, devices, batch, prompt, output, null);
    InferenceEstimate zero = estimate(m, devices, batch, prompt, output, s);
    assertTrue(zero.tpotSeconds() >= plain.tpotSeconds(), zero.tpotSeconds() + " < "
        + plain.tpotSeconds() + " for " + s);
    assertTrue(zero.totalSeconds() >= plain.totalSeconds());
    assertTrue(zero.totalBytes() >= plain.totalBytes());
    assertTrue(Double.isFinite(zero.tpotSeconds()) && zero.tpotSeconds() > 0);
  }

  @Property(tries = 1000)
  void higherAcceptanceIsNeverSlower(@ForAll @IntRange(min = 0, max = 5) int model,
      @ForAll @IntRange(min = 0, max = 2) int method, @ForAll @IntRange(min = 1, max = 8) int tokens,
      @ForAll @IntRange(min = 1, max = 256) int batch,
      @ForAll @IntRange(min = 0, max = 99) int low, @ForAll @IntRange(min = 0, max = 99) int up) {
    TransformerSpec m = Catalog.builtIn().models().get(MODELS[model]);
    double a = low / 100.0;
    double b = Math.min(1.0, a + up / 100.0);
    InferenceEstimate lo = estimate(m, 8, batch, 1024, 256, speculative(model, method, tokens,
        a));
    InferenceEstimate hi = estimate(m, 8, batch, 1024, 256, speculative(model, method, tokens,
        b));
    assertTrue(hi.tpotSeconds() <= lo.tpotSeconds() * (1 + 1e-12), a + " -> " + b);
  }
}
