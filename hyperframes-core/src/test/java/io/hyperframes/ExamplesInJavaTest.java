package io.hyperframes;

import io.hyperframes.request.Requests;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;

import io.hyperframes.catalog.Catalog;
import io.hyperframes.inference.InferencePlanner;
import io.hyperframes.inference.Serving;
import io.hyperframes.inference.ServingPlans;
import io.hyperframes.json.Json;
import io.hyperframes.model.TransformerSpec;
import io.hyperframes.parallel.Engine;
import io.hyperframes.parallel.Recompute;
import io.hyperframes.plan.Objective;
import io.hyperframes.plan.Plan;
import io.hyperframes.plan.Planner;
import io.hyperframes.precision.Optimizer;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * Every JSON contract file in {@code examples/} written with the Java builders: the file and the
 * builder read to the same request, and plans of the same request are the same plan.
 */
class ExamplesInJavaTest {

  private static String example(String name) throws IOException {
    return Files.readString(Path.of("..", "examples", name), StandardCharsets.UTF_8);
  }

  @Test
  void everyExampleHasItsJavaTwinHere() throws IOException {
    List<String> covered = List.of("10b-on-2t.json", "13b-cost.json", "70b-8xh100-20rps.json",
        "70b-finetune.json", "7b-fp16-4096.json", "gpt3-175b-a100.json", "llama2-70b-h100.json",
        "llama65b-2048.json", "serve-70b-slo.json", "serve-deepseek-v3-disaggregated.json",
        "serve-llama2-70b-h100-tp4-fp8.json", "serve-llama2-70b-mlperf-slo.json",
        "serve-llama3-70b-azure-conv.json", "serve-llama3-70b-capacity.json",
        "serve-llama3-70b-slo-mode.json",
        "serve-mixtral-8xh100-slo.json");
    try (Stream<Path> files = Files.list(Path.of("..", "examples"))) {
      assertEquals(covered, files.map(p -> p.getFileName().toString())
          .filter(n -> n.endsWith(".json")).sorted().toList());
    }
  }

  @Test
  void trainingPlans() throws IOException {
    TransformerSpec tenB = new TransformerSpec("llama-style-10b", 40, 4608, 36, 36,
        TransformerSpec.defaultFfnHidden(4608, true), true, 32000, 4096, false);
    PlanBuilder tenBOn2T = HyperFrames.plan().model(tenB).accelerator("h100-sxm-80gb")
        .devices(64, 1024).training(t -> t.precision("bf16-mixed").tokens(2e12))
        .minimize(Objective.DEVICES).deadlineDays(30);
    PlanBuilder cost = HyperFrames.plan().model("llama2-13b").accelerator("a100-sxm-80gb")
        .devices(32, 512).training(t -> t.precision("bf16-mixed").tokens(5e11))
        .minimize(Objective.COST).pricePerDeviceHour(1.79).pue(1.2).electricityPerKwh(0.10);
    PlanBuilder finetune = HyperFrames.plan().model("llama2-70b").node("dgx-h100").devices(64)
        .training(t -> t.precision("bf16-mixed").globalBatchSize(128).tokens(2e9)
            .optimizer(Optimizer.ADAM));
    assertEquals(PlanRequests.parse(example("10b-on-2t.json")), tenBOn2T.request());
    assertEquals(PlanRequests.parse(example("13b-cost.json")), cost.request());
    assertEquals(PlanRequests.parse(example("70b-finetune.json")), finetune.request());

    Plan fromFile = Planner.analytical().plan(PlanRequests.parse(example("13b-cost.json")));
    Plan fromJava = cost.run();
    assertEquals(fromFile.best().estimate(), fromJava.best().estimate());
    assertEquals(fromFile.best().cost(), fromJava.best().cost());
    assertEquals(fromFile.goldenParameters(), fromJava.goldenParameters());
  }

  @Test
  void trainingEstimates() throws IOException {
    EstimateBuilder gpt3 = HyperFrames.estimate().model("gpt3-175b").accelerator("a100-sxm-80gb")
        .devices(1024).training(t -> t.precision("bf16-mixed").globalBatchSize(1536).tokens(3e11)
            .optimizer(Optimizer.ADAM).gradientPrecision("fp32"))
        .layout(l -> l.tp(8).pp(8).dp(16).engine(Engine.MEGATRON));
    EstimateBuilder llama = HyperFrames.estimate().model("llama2-70b").node("dgx-h100")
        .devices(256).training(t -> t.precision("bf16-mixed").globalBatchSize(1024).tokens(2e12)
            .optimizer(Optimizer.ADAM))
        .layout(l -> l.tp(8).pp(4).dp(8).sequenceParallel(true).recompute(Recompute.SELECTIVE));
    EstimateBuilder llama65 = HyperFrames.estimate().model("llama-65b")
        .accelerator("a100-sxm-80gb").devices(2048).training(t -> t.precision("bf16-mixed")
            .globalBatchSize(2048).tokens(1.4e12).optimizer(Optimizer.ADAM));
    EstimateBuilder finetune = HyperFrames.estimate().model("llama2-70b").node("dgx-h100")
        .devices(64).training(t -> t.precision("bf16-mixed").globalBatchSize(128).tokens(2e9)
            .optimizer(Optimizer.ADAM));
    assertEquals(Requests.parse(example("gpt3-175b-a100.json")), gpt3.request());
    assertEquals(Requests.parse(example("llama2-70b-h100.json")), llama.request());
    assertEquals(Requests.parse(example("llama65b-2048.json")), llama65.request());
    assertEquals(Requests.parse(example("70b-finetune.json")), finetune.request());
    assertEquals(HyperFrames.estimate(example("gpt3-175b-a100.json")), gpt3.run());
  }

  @Test
  void servingEstimatesAndPlans() throws IOException {
    ServeBuilder rps = HyperFrames.serve().model("llama2-70b").accelerator("h100-sxm-80gb")
        .devices(8).precision("fp16").batch(1).prompt(1024).output(256).arrivalRate(20)
        .latencySlo(Duration.ofMillis(500), 99).timePerOutputToken(Duration.ofMillis(50))
        .layout(l -> l.tp(8).pp(1).dp(1));
    ServeBuilder long7b = HyperFrames.serve().model("llama2-7b").accelerator("a100-sxm-80gb")
        .devices(1).precision("fp16").batch(64).prompt(3072).output(1024);
    ServeBuilder slo = HyperFrames.serve().model("llama2-70b").accelerator("h100-sxm-80gb")
        .devices(8).precision("fp16").batch(1).prompt(1024).output(256).arrivalRate(20)
        .latencySlo(Duration.ofMillis(500), 99).timePerOutputToken(Duration.ofMillis(50))
        .weightFormats("fp16", "fp8", "int8").kvFormats("fp16", "fp8");
    // The replica of the scheduling guide's inference service (docs/scheduling.md).
    ServeBuilder replica = HyperFrames.serve().model("llama2-70b").accelerator("h100-sxm-80gb")
        .devices(4).precision("fp8").kvCachePrecision("fp8").batch(128).prompt(1024)
        .output(256).layout(l -> l.tp(4).pp(1).dp(1));
    ServeBuilder capacity = HyperFrames.serve().model("llama3-70b").accelerator("h100-sxm-80gb")
        .devices(8).mode("capacity").engine("vllm").precision("fp8").kvCachePrecision("fp8")
        .prompt(1000).output(1000).layout(l -> l.tp(4).dp(2));
    Catalog catalog = Catalog.builtIn();
    assertEquals(Serving.parse(example("serve-llama3-70b-capacity.json"), catalog),
        capacity.request());
    assertEquals(Serving.evaluate(Serving.parse(example("serve-llama3-70b-capacity.json"),
        catalog)).capacity(), capacity.run().capacity());
    ServeBuilder sloMode = HyperFrames.serve().model("llama3-70b").accelerator("h100-sxm-80gb")
        .devices(8).mode("slo").precision("fp8").kvCachePrecision("fp8").prompt(1000)
        .output(250).latencySlo(Duration.ofSeconds(1), 99)
        .timePerOutputToken(Duration.ofMillis(50)).layout(l -> l.tp(4).dp(2));
    assertEquals(Serving.parse(example("serve-llama3-70b-slo-mode.json"), catalog),
        sloMode.request());
    ServeBuilder mlperf = HyperFrames.serve().model("llama2-70b").accelerator("h100-sxm-80gb")
        .devices(8).mode("slo").engine("trtllm").precision("fp8").kvCachePrecision("fp8")
        .prompt(222).output(294).maxNumSeqs(1024).maxNumTokens(4096).chunkedPrefill(false)
        .memoryFraction(0.9).latencySlo(Duration.ofSeconds(2), 99)
        .timePerOutputToken(Duration.ofMillis(200)).tpotPercentile(99)
        .layout(l -> l.tp(2).dp(4));
    assertEquals(Serving.parse(example("serve-llama2-70b-mlperf-slo.json"), catalog),
        mlperf.request());
    ServeBuilder disaggregated = HyperFrames.serve().model("deepseek-v3")
        .accelerator("h100-sxm-80gb").devices(96).precision("fp8")
        .kvCachePrecision("bf16").batch(8).prompt(2000).output(500)
        .latencySlo(Duration.ofSeconds(2), 99).timePerOutputToken(Duration.ofMillis(100))
        .disaggregated(1, 16, 32, 1, 32, 64).twoBatchOverlap(true, true);
    assertEquals(Serving.parse(example("serve-deepseek-v3-disaggregated.json"), catalog),
        disaggregated.request());
    assertEquals(Serving.evaluate(Serving.parse(example("serve-deepseek-v3-disaggregated.json"),
        catalog)).disaggregated(), disaggregated.run().disaggregated());
    // A trace's path is read from the working directory: the examples are run from the
    // repository's root, these tests from the module's.
    ServeBuilder trace = HyperFrames.serve().model("llama3-70b").accelerator("h100-sxm-80gb")
        .devices(8).mode("capacity").engine("vllm").precision("fp8").kvCachePrecision("fp8")
        .lengthsTrace("../docs/validation/azure-llm/AzureLLMInferenceTrace_conv.csv")
        .layout(l -> l.tp(4).dp(2));
    assertEquals(Serving.parse(example("serve-llama3-70b-azure-conv.json")
        .replace("\"docs/", "\"../docs/"), catalog), trace.request());
    // A distribution written with the builder reads as its JSON list.
    var mixed = HyperFrames.serve().model("llama3-70b").accelerator("h100-sxm-80gb")
        .devices(8).mode("capacity").engine("vllm").precision("fp8").kvCachePrecision("fp8")
        .prompts(java.util.Map.of(500, 1.0)).outputs(java.util.Map.of(2000, 1.0))
        .layout(l -> l.tp(4).dp(2));
    assertEquals(Serving.parse(example("serve-llama3-70b-capacity.json")
        .replace("\"promptTokens\": 1000", "\"promptTokens\": [[500, 1]]")
        .replace("\"outputTokens\": 1000", "\"outputTokens\": [[2000, 1]]"), catalog),
        mixed.request());
    assertEquals(Serving.parse(example("serve-llama2-70b-h100-tp4-fp8.json"), catalog),
        replica.request());
    assertEquals(Serving.parse(example("70b-8xh100-20rps.json"), catalog), rps.request());
    assertEquals(Serving.parse(example("7b-fp16-4096.json"), catalog), long7b.request());
    assertEquals(Serving.evaluate(Serving.parse(example("7b-fp16-4096.json"), catalog)),
        long7b.run());

    ServingPlans.Result file = ServingPlans.plan(
        Json.parseObject("request", example("serve-70b-slo.json")), catalog);
    ServingPlans.Result java = slo.plan();
    assertEquals(file.request(), java.request());
    InferencePlanner.Config best = java.plan().best();
    assertNotNull(best, "the example's SLO is met");
    assertEquals(file.plan().best().devices(), best.devices());
    assertEquals(file.plan().best().weights(), best.weights());
    assertEquals(file.plan().best().kvCache(), best.kvCache());
    assertEquals(file.plan().best().batchLimit(), best.batchLimit());

    ServeBuilder mixtral = HyperFrames.serve().model("mixtral-8x7b").accelerator("h100-sxm-80gb")
        .devices(8).precision("fp16").batch(64).prompt(1024).output(256).arrivalRate(50)
        .latencySlo(Duration.ofMillis(500), 99).timePerOutputToken(Duration.ofMillis(50))
        .alternatives(8);
    ServingPlans.Result mixtralFile = ServingPlans.plan(
        Json.parseObject("request", example("serve-mixtral-8xh100-slo.json")), catalog);
    ServingPlans.Result mixtralJava = mixtral.plan();
    assertEquals(mixtralFile.request(), mixtralJava.request());
    assertEquals(mixtralFile.plan().best().tp(), mixtralJava.plan().best().tp());
    assertEquals(mixtralFile.plan().best().ep(), mixtralJava.plan().best().ep());
    assertEquals(mixtralFile.plan().best().devices(), mixtralJava.plan().best().devices());
    assertEquals(mixtralFile.plan().best().load().p99(), mixtralJava.plan().best().load().p99());
  }
}
