package io.hyperframes;

import io.hyperframes.request.Requests;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.hyperframes.parallel.Engine;
import io.hyperframes.parallel.Recompute;
import java.util.List;
import java.util.function.Supplier;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import org.junit.jupiter.api.Test;

/** A request built in Java and the same request as JSON are one request, with one set of errors. */
class BuilderJsonProperties {

  @Provide
  Arbitrary<EstimateBuilder> builders() {
    Arbitrary<String> model = Arbitraries.of("llama2-7b", "llama2-13b", "llama2-70b",
        "gpt3-175b", "mistral-7b");
    Arbitrary<String> accelerator = Arbitraries.of("a100-sxm-80gb", "h100-sxm-80gb",
        "h200-sxm-141gb", "mi300x-192gb");
    Arbitrary<Integer> devices = Arbitraries.of(8, 16, 64, 256);
    Arbitrary<String> precision = Arbitraries.of("bf16-mixed", "fp16-mixed", "fp8-mixed");
    Arbitrary<Integer> batch = Arbitraries.of(64, 256, 1024);
    Arbitrary<Double> tokens = Arbitraries.doubles().between(1e9, 1e13);
    Arbitrary<Integer> tp = Arbitraries.of(1, 2, 4, 8);
    Arbitrary<Recompute> recompute = Arbitraries.of(Recompute.class);
    Arbitrary<Engine> engine = Arbitraries.of(Engine.class);
    Arbitrary<Boolean> sp = Arbitraries.of(true, false);
    return Combinators.combine(model, accelerator, devices, precision, batch, tokens, tp,
        Combinators.combine(recompute, engine, sp).as(List::of))
        .as((m, a, d, p, b, t, tpDegree, rest) -> HyperFrames.estimate().model(m).accelerator(a)
            .devices(d).training(x -> x.precision(p).globalBatchSize(b).tokens(t))
            .layout(l -> l.tp(tpDegree).recompute((Recompute) rest.get(0))
                .engine((Engine) rest.get(1)).sequenceParallel((Boolean) rest.get(2))));
  }

  /** Built, written as JSON and read back: the same request. */
  @Property(tries = 1000)
  void writtenAndReadBackEqualsTheBuiltRequest(@ForAll("builders") EstimateBuilder b) {
    assertEquals(b.request(), Requests.parse(b.toJson()));
  }

  @Provide
  Arbitrary<PlanBuilder> planBuilders() {
    Arbitrary<String> model = Arbitraries.of("llama2-7b", "llama2-70b", "gpt3-175b");
    Arbitrary<Integer> low = Arbitraries.of(8, 16, 64);
    Arbitrary<Integer> span = Arbitraries.of(0, 8, 448);
    Arbitrary<io.hyperframes.plan.Objective> objective =
        Arbitraries.of(io.hyperframes.plan.Objective.TIME, io.hyperframes.plan.Objective.COST);
    Arbitrary<Double> price = Arbitraries.doubles().between(0.5, 10);
    Arbitrary<Double> pue = Arbitraries.doubles().between(1.0, 2.0);
    Arbitrary<Double> kwh = Arbitraries.doubles().between(0, 0.5);
    Arbitrary<Double> nvlink = Arbitraries.doubles().between(100, 900);
    Arbitrary<Integer> alternatives = Arbitraries.integers().between(0, 10);
    return Combinators.combine(model, low, span, objective, price, pue, kwh,
        Combinators.combine(nvlink, alternatives).as(List::of))
        .as((m, lo, sp, o, usd, ratio, perKwh, rest) -> HyperFrames.plan().model(m)
            .accelerator("h100-sxm-80gb").devices(lo, lo + sp)
            .intraNode((Double) rest.get(0), 2.5)
            .training(t -> t.precision("bf16-mixed").tokens(1e12)).minimize(o)
            .pricePerDeviceHour(usd).pue(ratio).electricityPerKwh(perKwh)
            .alternatives((Integer) rest.get(1)).precisions("bf16-mixed", "fp8-mixed"));
  }

  /** A plan request built, written and read back: the same request. */
  @Property(tries = 1000)
  void planRequestsRoundTrip(@ForAll("planBuilders") PlanBuilder b) {
    assertEquals(b.request(), PlanRequests.parse(b.toJson()));
  }

  @Provide
  Arbitrary<ServeBuilder> serveBuilders() {
    Arbitrary<String> model = Arbitraries.of("llama2-7b", "llama2-13b", "llama2-70b");
    Arbitrary<String> weights = Arbitraries.of("fp16", "bf16", "fp8", "int8");
    Arbitrary<Integer> batch = Arbitraries.integers().between(1, 256);
    Arbitrary<Integer> prompt = Arbitraries.integers().between(1, 8192);
    Arbitrary<Integer> output = Arbitraries.integers().between(1, 2048);
    Arbitrary<Double> rate = Arbitraries.doubles().between(0, 50);
    Arbitrary<Integer> ttftMs = Arbitraries.integers().between(10, 5000);
    Arbitrary<Double> percentile = Arbitraries.doubles().between(50, 99.9);
    return Combinators.combine(model, weights, batch, prompt, output, rate, ttftMs, percentile)
        .as((m, w, b, p, o, r, t, q) -> HyperFrames.serve().model(m).accelerator("h100-sxm-80gb")
            .devices(8).precision(w).batch(b).prompt(p).output(o).arrivalRate(r)
            .latencySlo(java.time.Duration.ofMillis(t), q).blockTokens(32)
            .decodeAttention(b % 2 == 0 ? "grouped" : "per-head")
            .attention(p % 2 == 0 ? "flash" : "standard"));
  }

  /** A serving request built, written and read back: the same request. */
  @Property(tries = 1000)
  void servingRequestsRoundTrip(@ForAll("serveBuilders") ServeBuilder b) {
    assertEquals(b.request(), io.hyperframes.inference.Serving.parse(b.toJson(),
        io.hyperframes.catalog.Catalog.builtIn()));
  }

  private record Mistake(String name, Supplier<Object> builder, String json) {}

  private static String request(String model, String cluster, String workload, String layout) {
    return "{\"model\": " + model + ", \"cluster\": " + cluster + ", \"workload\": " + workload
        + (layout == null ? "" : ", \"layout\": " + layout) + "}";
  }

  private static final String MODEL = "{\"catalog\": \"llama2-7b\"}";
  private static final String CLUSTER = "{\"accelerator\": \"a100-sxm-80gb\", \"devices\": 8}";
  private static final String WORKLOAD = "{\"type\": \"training\", \"precision\": \"bf16-mixed\","
      + " \"globalBatchSize\": 64}";

  private static EstimateBuilder good() {
    return HyperFrames.estimate().model("llama2-7b").accelerator("a100-sxm-80gb").devices(8);
  }

  private static EstimateBuilder goodWorkload() {
    return good().training(t -> t.precision("bf16-mixed").globalBatchSize(64));
  }

  /** The same mistake gives the same message through the builder and through JSON. */
  @Test
  void sameMistakeSameMessage() {
    List<Mistake> mistakes = List.of(
        new Mistake("unknown model", () -> HyperFrames.estimate().model("llama9").accelerator(
            "a100-sxm-80gb").devices(8).training(t -> t.precision("bf16-mixed")
                .globalBatchSize(64)).run(),
            request("{\"catalog\": \"llama9\"}", CLUSTER, WORKLOAD, null)),
        new Mistake("unknown accelerator", () -> HyperFrames.estimate().model("llama2-7b")
            .accelerator("a99").devices(8).training(t -> t.precision("bf16-mixed")
                .globalBatchSize(64)).run(),
            request(MODEL, "{\"accelerator\": \"a99\", \"devices\": 8}", WORKLOAD, null)),
        new Mistake("zero devices", () -> HyperFrames.estimate().model("llama2-7b")
            .accelerator("a100-sxm-80gb").devices(0).training(t -> t.precision("bf16-mixed")
                .globalBatchSize(64)).run(),
            request(MODEL, "{\"accelerator\": \"a100-sxm-80gb\", \"devices\": 0}", WORKLOAD,
                null)),
        new Mistake("negative devices", () -> HyperFrames.estimate().model("llama2-7b")
            .accelerator("a100-sxm-80gb").devices(-8).training(t -> t.precision("bf16-mixed")
                .globalBatchSize(64)).run(),
            request(MODEL, "{\"accelerator\": \"a100-sxm-80gb\", \"devices\": -8}", WORKLOAD,
                null)),
        new Mistake("partial node", () -> HyperFrames.estimate().model("llama2-7b")
            .accelerator("a100-sxm-80gb").devices(12).training(t -> t.precision("bf16-mixed")
                .globalBatchSize(64)).run(),
            request(MODEL, "{\"accelerator\": \"a100-sxm-80gb\", \"devices\": 12}", WORKLOAD,
                null)),
        new Mistake("unknown node", () -> HyperFrames.estimate().model("llama2-7b")
            .node("dgx-z").devices(8).training(t -> t.precision("bf16-mixed")
                .globalBatchSize(64)).run(),
            request(MODEL, "{\"template\": \"dgx-z\", \"devices\": 8}", WORKLOAD, null)),
        new Mistake("unknown precision", () -> good().training(t -> t.precision("bf13")
            .globalBatchSize(64)).run(),
            request(MODEL, CLUSTER, "{\"type\": \"training\", \"precision\": \"bf13\","
                + " \"globalBatchSize\": 64}", null)),
        new Mistake("zero batch", () -> good().training(t -> t.precision("bf16-mixed")
            .globalBatchSize(0)).run(),
            request(MODEL, CLUSTER, "{\"type\": \"training\", \"precision\": \"bf16-mixed\","
                + " \"globalBatchSize\": 0}", null)),
        new Mistake("negative tokens", () -> good().training(t -> t.precision("bf16-mixed")
            .globalBatchSize(64).tokens(-1)).run(),
            request(MODEL, CLUSTER, "{\"type\": \"training\", \"precision\": \"bf16-mixed\","
                + " \"globalBatchSize\": 64, \"trainingTokens\": -1.0}", null)),
        new Mistake("unknown gradient format", () -> good().training(t -> t.precision(
            "bf16-mixed").globalBatchSize(64).gradientPrecision("fp7")).run(),
            request(MODEL, CLUSTER, "{\"type\": \"training\", \"precision\": \"bf16-mixed\","
                + " \"globalBatchSize\": 64, \"gradientPrecision\": \"fp7\"}", null)),
        new Mistake("tp not dividing heads", () -> goodWorkload().layout(l -> l.tp(3)).run(),
            request(MODEL, CLUSTER, WORKLOAD, "{\"tp\": 3}")),
        new Mistake("zero tp", () -> goodWorkload().layout(l -> l.tp(0)).run(),
            request(MODEL, CLUSTER, WORKLOAD, "{\"tp\": 0}")),
        new Mistake("pp above layers", () -> goodWorkload().layout(l -> l.pp(64)).run(),
            request(MODEL, CLUSTER, WORKLOAD, "{\"pp\": 64}")),
        new Mistake("product not devices", () -> goodWorkload().layout(l -> l.tp(2).pp(2).dp(4))
            .run(), request(MODEL, CLUSTER, WORKLOAD, "{\"tp\": 2, \"pp\": 2, \"dp\": 4}")),
        new Mistake("zero stage 4", () -> goodWorkload().layout(l -> l.zeroStage(4)).run(),
            request(MODEL, CLUSTER, WORKLOAD, "{\"zeroStage\": 4}")),
        new Mistake("micro-batch not dividing", () -> goodWorkload().layout(l -> l.dp(8)
            .microBatch(3)).run(), request(MODEL, CLUSTER, WORKLOAD,
                "{\"dp\": 8, \"microBatch\": 3}")),
        new Mistake("virtual stages without pipeline", () -> goodWorkload().layout(l -> l.pp(1)
            .virtualStages(2)).run(), request(MODEL, CLUSTER, WORKLOAD,
                "{\"pp\": 1, \"virtualStages\": 2}")),
        new Mistake("deepspeed interleaving", () -> goodWorkload().layout(l -> l.pp(2)
            .virtualStages(2).engine(Engine.DEEPSPEED)).run(), request(MODEL, CLUSTER, WORKLOAD,
                "{\"pp\": 2, \"virtualStages\": 2, \"engine\": \"deepspeed\"}")),
        new Mistake("shard group without ZeRO-3", () -> goodWorkload().layout(l -> l.zeroStage(1)
            .shardGroupSize(4)).run(), request(MODEL, CLUSTER, WORKLOAD,
                "{\"zeroStage\": 1, \"shardGroupSize\": 4}")),
        new Mistake("shard group not dividing dp", () -> goodWorkload().layout(l -> l.dp(8)
            .zeroStage(3).shardGroupSize(3)).run(), request(MODEL, CLUSTER, WORKLOAD,
                "{\"dp\": 8, \"zeroStage\": 3, \"shardGroupSize\": 3}")),
        new Mistake("reshard without ZeRO-3", () -> goodWorkload().layout(l -> l.zeroStage(2)
            .reshardAfterForward(false)).run(), request(MODEL, CLUSTER, WORKLOAD,
                "{\"zeroStage\": 2, \"reshardAfterForward\": false}")),
        new Mistake("no workload", () -> good().run(), request(MODEL, CLUSTER, "null", null)),
        new Mistake("serving without prompt", () -> HyperFrames.serve().model("llama2-7b")
            .accelerator("a100-sxm-80gb").devices(1).precision("fp16").batch(1).output(8).run(),
            "{\"model\": " + MODEL + ", \"cluster\": {\"accelerator\": \"a100-sxm-80gb\","
                + " \"devices\": 1}, \"workload\": {\"type\": \"inference\", \"precision\":"
                + " \"fp16\", \"batchSize\": 1, \"outputTokens\": 8}}"),
        new Mistake("serving SLO percentile 100", () -> HyperFrames.serve().model("llama2-7b")
            .accelerator("a100-sxm-80gb").devices(1).precision("fp16").batch(1).prompt(8)
            .output(8).latencySlo(java.time.Duration.ofSeconds(1), 100).run(),
            "{\"model\": " + MODEL + ", \"cluster\": {\"accelerator\": \"a100-sxm-80gb\","
                + " \"devices\": 1}, \"workload\": {\"type\": \"inference\", \"precision\":"
                + " \"fp16\", \"batchSize\": 1, \"promptTokens\": 8, \"outputTokens\": 8,"
                + " \"latencySlo\": {\"ttftSeconds\": 1.0, \"percentile\": 100.0}}}"));
    assertEquals(24, mistakes.size());
    for (Mistake m : mistakes) {
      IllegalArgumentException fromBuilder = assertThrows(IllegalArgumentException.class,
          () -> m.builder().get(), m.name());
      IllegalArgumentException fromJson = assertThrows(IllegalArgumentException.class,
          () -> {
            if (m.json().contains("\"inference\"")) {
              io.hyperframes.inference.Serving.evaluate(io.hyperframes.inference.Serving.parse(
                  m.json(), io.hyperframes.catalog.Catalog.builtIn()));
            } else {
              HyperFrames.estimate(m.json());
            }
          }, m.name());
      assertEquals(fromJson.getMessage(), fromBuilder.getMessage(), m.name());
    }
  }
}
