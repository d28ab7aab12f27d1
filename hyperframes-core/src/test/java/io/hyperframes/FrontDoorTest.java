package io.hyperframes;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.hyperframes.hardware.Cluster;
import io.hyperframes.hardware.Fabric;
import io.hyperframes.inference.InferenceResult;
import io.hyperframes.interconnect.Collective;
import io.hyperframes.interconnect.CollectiveGroup;
import io.hyperframes.interconnect.CollectiveTime;
import io.hyperframes.interconnect.InterconnectModel;
import io.hyperframes.model.TransformerSpec;
import io.hyperframes.parallel.Recompute;
import io.hyperframes.plan.Objective;
import io.hyperframes.plan.Plan;
import io.hyperframes.plan.TrainingEstimate;
import io.hyperframes.plan.GoldenParameter;
import io.hyperframes.validate.ValidationReport;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.ForkJoinPool;
import org.junit.jupiter.api.Test;

/** The builders of {@link HyperFrames}: the JSON requests' twins, with swappable models. */
class FrontDoorTest {

  /** The analytical model on fabrics of half the bandwidth (same latencies). */
  private static final InterconnectModel HALF_BANDWIDTH = new InterconnectModel() {
    @Override
    public CollectiveTime time(Cluster cluster, Collective op, double bytes,
        CollectiveGroup group) {
      Cluster half = new Cluster(cluster.accelerator(), cluster.devices(),
          cluster.devicesPerNode(), half(cluster.intraNode()), half(cluster.interNode()));
      return InterconnectModel.alphaBeta().time(half, op, bytes, group);
    }

    private Fabric half(Fabric f) {
      return new Fabric(f.id(), f.bandwidthBytesPerSecond() / 2, f.latencySeconds(),
          f.launchSeconds(), f.efficiency(), f.halfEfficiencyBytes(),
          f.inNetworkReductionBytesPerSecond() / 2, "half of " + f.id());
    }
  };

  /** The analytical model with 100 times its per-step latency: large buckets pay off. */
  private static final InterconnectModel HIGH_LATENCY = new InterconnectModel() {
    @Override
    public CollectiveTime time(Cluster cluster, Collective op, double bytes,
        CollectiveGroup group) {
      var intra = cluster.intraNode();
      var inter = cluster.interNode();
      Cluster slow = new Cluster(cluster.accelerator(), cluster.devices(),
          cluster.devicesPerNode(),
          intra.withBandwidthAndLatency(intra.bandwidthBytesPerSecond(),
              100 * intra.latencySeconds(), "slow"),
          inter.withBandwidthAndLatency(inter.bandwidthBytesPerSecond(),
              100 * inter.latencySeconds(), "slow"));
      return InterconnectModel.alphaBeta().time(slow, op, bytes, group);
    }
  };

  private static final Models SLOW_NETWORK = Models.analytical().withInterconnect(HALF_BANDWIDTH);

  private static String example(String name) throws IOException {
    return Files.readString(Path.of("..", "examples", name), StandardCharsets.UTF_8);
  }

  /** The plan of examples/10b-on-2t.json, built in Java, is the plan of the file. */
  @Test
  void javaBuiltPlanEqualsThePlanOfTheJsonExample() throws IOException {
    TransformerSpec m = new TransformerSpec("llama-style-10b", 40, 4608, 36, 36,
        TransformerSpec.defaultFfnHidden(4608, true), true, 32000, 4096, false);
    PlanBuilder java = HyperFrames.plan().model(m)
        .accelerator("h100-sxm-80gb").devices(64, 1024)
        .training(t -> t.precision("bf16-mixed").tokens(2e12))
        .minimize(Objective.DEVICES).deadlineDays(30);
    Plan fromJava = java.run();
    Plan fromFile = io.hyperframes.plan.Planner.analytical()
        .plan(PlanRequests.parse(example("10b-on-2t.json")));
    assertEquals(fromFile.best().estimate().layout(), fromJava.best().estimate().layout());
    assertEquals(fromFile.best().estimate().stepSeconds(),
        fromJava.best().estimate().stepSeconds(), 0.0);
    assertEquals(fromFile.best().cost().totalUsd(), fromJava.best().cost().totalUsd(), 0.0);
    // and the builder's JSON is a request the planner reads to the same plan
    assertEquals(fromJava.best().estimate().layout(), io.hyperframes.plan.Planner.analytical()
        .plan(PlanRequests.parse(java.toJson())).best().estimate().layout());
  }

  @Test
  void estimateOfTheLlamaExampleEqualsTheFile() throws IOException {
    TrainingEstimate java = HyperFrames.estimate()
        .model("llama2-70b").node("dgx-h100").devices(256)
        .training(t -> t.precision("bf16-mixed").globalBatchSize(1024).tokens(2e12)
            .optimizer(io.hyperframes.precision.Optimizer.ADAM))
        .layout(l -> l.tp(8).pp(4).dp(8).sequenceParallel(true).recompute(Recompute.SELECTIVE))
        .run();
    TrainingEstimate file = HyperFrames.estimate(example("llama2-70b-h100.json"));
    assertEquals(file, java);
  }

  @Test
  void aUsersInterconnectChangesThePlanItsGoldenParametersAndServing() {
    PlanBuilder plan = HyperFrames.plan().model("llama2-13b").accelerator("a100-sxm-80gb")
        .devices(64).training(t -> t.precision("bf16-mixed").globalBatchSize(512).tokens(1e12))
        .layout(l -> l.tp(2).pp(1).dp(32).zeroStage(0).microBatch(1)
            .recompute(Recompute.SELECTIVE).sequenceParallel(true).virtualStages(1));
    Plan fast = plan.run();
    Plan slow = plan.models(SLOW_NETWORK).run();
    assertTrue(slow.best().estimate().stepSeconds() > fast.best().estimate().stepSeconds(),
        "half the bandwidth makes the step longer");
    assertNotEquals(value(fast, "storageReadBytesPerSecond"),
        value(slow, "storageReadBytesPerSecond"), "the loader rate follows the step time");
    Plan laggy = plan.models(Models.analytical().withInterconnect(HIGH_LATENCY)).run();
    assertTrue((double) value(laggy, "gradientBucketBytes")
        > (double) value(fast, "gradientBucketBytes"), "the bucket is sized from the interconnect");

    ServeBuilder serve = HyperFrames.serve().model("llama2-70b").accelerator("h100-sxm-80gb")
        .devices(8).precision("fp16").batch(16).prompt(1024).output(128)
        .layout(l -> l.tp(8));
    InferenceResult quick = serve.run();
    InferenceResult slowServe = serve.models(SLOW_NETWORK).run();
    assertTrue(slowServe.estimate().decodeSecondsPerToken()
        > quick.estimate().decodeSecondsPerToken(), "tensor-parallel all-reduces take longer");

    String cases = "{\"cases\": [{\"id\": \"nccl-8\", \"source\": \"test\", \"collective\":"
        + " {\"accelerator\": \"a100-sxm-80gb\", \"devices\": 8, \"devicesPerNode\": 8,"
        + " \"op\": \"allReduce\", \"messageBytes\": 1073741824},"
        + " \"expected\": {\"busBandwidthBytesPerSecond\": 230000000000.0}}]}";
    ValidationReport analytical = HyperFrames.validate().cases(cases).run();
    ValidationReport mine = HyperFrames.validate().cases(cases).models(SLOW_NETWORK).run();
    assertEquals(analytical.cases().get(0).predicted() / 2, mine.cases().get(0).predicted(),
        0.01 * analytical.cases().get(0).predicted(), "a 1 GiB all-reduce is bandwidth-bound");
  }

  /** A precision model with half the catalog's peaks: serving prefill, compute-bound, slows. */
  @Test
  void aUsersPrecisionAndMemoryModelsReachServingAndTraining() {
    io.hyperframes.precision.model.PrecisionModel halfPeak =
        new io.hyperframes.precision.model.PrecisionModel() {
          @Override
          public double peakFlopsPerSecond(io.hyperframes.hardware.Accelerator a,
              io.hyperframes.precision.PrecisionRecipe recipe) {
            return a.peakFlops(recipe.compute()) / 2;
          }

          @Override
          public double peakFlopsPerSecond(io.hyperframes.hardware.Accelerator a,
              io.hyperframes.precision.NumberFormat format) {
            return a.peakFlops(format) / 2;
          }
        };
    ServeBuilder serve = HyperFrames.serve().model("llama2-7b").accelerator("a100-sxm-80gb")
        .devices(1).precision("fp16").batch(8).prompt(2048).output(16);
    double prefill = serve.run().estimate().prefillSeconds();
    double slower = serve.models(Models.analytical().withPrecision(halfPeak)).run().estimate()
        .prefillSeconds();
    assertTrue(slower > 1.5 * prefill, prefill + " -> " + slower);

    io.hyperframes.memory.MemoryHierarchyModel slowMemory =
        new io.hyperframes.memory.MemoryHierarchyModel() {
          private final io.hyperframes.memory.MemoryHierarchyModel base =
              io.hyperframes.memory.MemoryHierarchyModel.analytical();

          @Override
          public java.util.List<io.hyperframes.memory.MemoryLevel> levels(
              io.hyperframes.hardware.Accelerator a) {
            return base.levels(a);
          }

          @Override
          public double rooflineSeconds(io.hyperframes.hardware.Accelerator a, double flops,
              double bytes, io.hyperframes.precision.NumberFormat f, double peak) {
            return base.rooflineSeconds(a, flops, bytes, f, peak);
          }

          @Override
          public double matmulSeconds(io.hyperframes.hardware.Accelerator a, double m, double n,
              double k, double batch, double e, io.hyperframes.precision.NumberFormat f,
              double peak) {
            return base.matmulSeconds(a, m, n, k, batch, e, f, peak);
          }

          @Override
          public double streamingBytesPerSecond(io.hyperframes.hardware.Accelerator a) {
            return base.streamingBytesPerSecond(a) / 4;
          }
        };
    EstimateBuilder train = HyperFrames.estimate().model("llama2-7b").accelerator("a100-sxm-80gb")
        .devices(8).training(t -> t.precision("bf16-mixed").globalBatchSize(64))
        .layout(l -> l.tp(1).pp(1).dp(8).microBatch(1).recompute(Recompute.NONE).zeroStage(1));
    assertTrue(train.models(Models.analytical().withMemory(slowMemory)).run().stepSeconds()
        > train.run().stepSeconds(), "element-wise work streams at the model's bandwidth");
  }

  /** The serving plan of examples/serve-70b-slo.json, built in Java, with the user's models. */
  @Test
  void servingPlanFromTheBuilderEqualsTheJsonExampleAndFollowsTheModels() throws IOException {
    ServeBuilder serve = HyperFrames.serve().model("llama2-70b").accelerator("h100-sxm-80gb")
        .devices(8).precision("fp16").batch(1).prompt(1024).output(256).arrivalRate(20)
        .latencySlo(Duration.ofMillis(500), 99).timePerOutputToken(Duration.ofMillis(50))
        .weightFormats("fp16", "fp8", "int8").kvFormats("fp16", "fp8");
    var java = serve.plan().plan().best();
    var file = io.hyperframes.inference.ServingPlans.plan(io.hyperframes.json.Json
        .parseObject("request", example("serve-70b-slo.json")),
        io.hyperframes.catalog.Catalog.builtIn()).plan().best();
    assertEquals(file.tp(), java.tp());
    assertEquals(file.replicas(), java.replicas());
    assertEquals(file.weights(), java.weights());
    assertEquals(file.usdPerMillionTokens(), java.usdPerMillionTokens(), 0.0);
    var slow = serve.models(SLOW_NETWORK).plan().plan().best();
    assertTrue(slow.load().p99() > java.load().p99() || slow.devices() > java.devices()
        || slow.tp() != java.tp(), "half the bandwidth changes the serving plan");
  }

  private static Object value(Plan p, String name) {
    return p.goldenParameters().stream().filter(g -> g.name().equals(name))
        .map(GoldenParameter::value).findFirst().orElseThrow();
  }

  @Test
  void servingHonoursTheSloPercentileAndRunsOnAGivenPool() {
    InferenceResult r = HyperFrames.serve().model("llama2-7b").accelerator("h100-sxm-80gb")
        .devices(1).precision("fp16").batch(32).prompt(1024).output(256).arrivalRate(10)
        .latencySlo(Duration.ofSeconds(2), 95).run();
    assertTrue(r.p99LatencySeconds() >= r.p50LatencySeconds());
    ForkJoinPool pool = new ForkJoinPool(1);
    try {
      Plan p = HyperFrames.plan().model("llama2-7b").accelerator("h100-sxm-80gb").devices(8, 16)
          .training(t -> t.precision("bf16-mixed").globalBatchSize(256)).run(pool,
              io.hyperframes.plan.PlanListener.NONE);
      assertTrue(p.best().estimate().feasible());
    } finally {
      pool.shutdown();
    }
  }

  @Test
  void fieldsAreSetOnceAndBuildersAreImmutable() {
    EstimateBuilder base = HyperFrames.estimate().model("llama2-7b");
    IllegalStateException twice = assertThrows(IllegalStateException.class,
        () -> base.model("llama2-13b"));
    assertEquals("model.catalog: already set to \"llama2-7b\"", twice.getMessage());
    EstimateBuilder a = base.accelerator("a100-sxm-80gb");
    EstimateBuilder h = base.accelerator("h100-sxm-80gb");
    assertTrue(a.toJson().contains("a100") && !a.toJson().contains("h100"));
    assertTrue(h.toJson().contains("h100") && !base.toJson().contains("accelerator"));
  }
}
