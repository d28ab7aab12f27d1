package io.hyperframes.launch;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.MappingIterator;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import com.networknt.schema.Error;
import com.networknt.schema.Schema;
import com.networknt.schema.SchemaRegistry;
import com.networknt.schema.SpecificationVersion;
import io.hyperframes.PlanRequests;
import io.hyperframes.catalog.Catalog;
import io.hyperframes.inference.ServingPlans;
import io.hyperframes.json.Json;
import io.hyperframes.plan.Plan;
import io.hyperframes.plan.Planner;
import io.hyperframes.plan.GoldenParameters;
import java.io.IOException;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import org.junit.jupiter.api.Test;

/**
 * Every emitted manifest against the published schemas (src/test/resources/launch/schemas, see
 * its README for sources), every Dockerfile against the instruction grammar, and the laws of
 * the emitted layout.
 */
class LaunchTest {

  private static final Map<String, Schema> SCHEMAS = new HashMap<>();

  /** The schema of a manifest's kind. */
  private static Schema schema(String kind) {
    return SCHEMAS.computeIfAbsent(kind, k -> {
      String file = switch (k) {
        case "PyTorchJob" -> "pytorchjob-kubeflow-v1.json";
        case "JobSet" -> "jobset-v1alpha2.json";
        case "Deployment" -> "deployment-apps-v1.json";
        case "ConfigMap" -> "configmap-v1.json";
        case "DynamoGraphDeployment" -> "dynamographdeployment-v1beta1.json";
        default -> throw new AssertionError("no schema for kind " + k);
      };
      try (InputStream in = LaunchTest.class.getResourceAsStream("/launch/schemas/" + file)) {
        return SchemaRegistry.withDefaultDialect(SpecificationVersion.DRAFT_7).getSchema(in);
      } catch (IOException e) {
        throw new AssertionError(e);
      }
    });
  }

  /** Parses every YAML document of {@code text} and validates it against its kind's schema. */
  static List<JsonNode> validate(String text) throws IOException {
    List<JsonNode> docs = new ArrayList<>();
    try (MappingIterator<JsonNode> it = new YAMLMapper().readerFor(JsonNode.class)
        .readValues(text)) {
      while (it.hasNext()) {
        JsonNode d = it.next();
        if (d == null || d.isEmpty()) {
          continue;
        }
        List<Error> errors = schema(d.path("kind").asText()).validate(d);
        assertTrue(errors.isEmpty(), d.path("kind").asText() + ": " + errors + "\n" + text);
        docs.add(d);
      }
    }
    assertFalse(docs.isEmpty(), "no document in\n" + text);
    return docs;
  }

  static Plan plan(String json) {
    return Planner.analytical().plan(PlanRequests.parse(json, Catalog.builtIn()));
  }

  /** A training plan request: a catalog model on nodes of a template, BF16 mixed with Adam. */
  static String training(String model, String template, int devices, int globalBatch,
      String tokens, String layout) {
    return """
        {"model": {"catalog": "%s"},
         "cluster": {"template": "%s", "devices": %d},
         "workload": {"type": "training", "precision": "bf16-mixed", "globalBatchSize": %d,
                      "trainingTokens": %s, "optimizer": "adam"},
         "layout": {%s}}
        """.formatted(model, template, devices, globalBatch, tokens, layout);
  }

  static final String SINGLE_NODE = training("llama2-7b", "dgx-h100", 8, 256, "1e11",
      "\"tp\": 1, \"pp\": 1, \"dp\": 8");
  static final String MULTI_NODE = training("llama2-13b", "dgx-a100", 64, 512, "2e11",
      "\"tp\": 2, \"pp\": 1, \"dp\": 32");
  static final String THREE_D = training("gpt3-175b", "dgx-a100", 1024, 1536, "3e11",
      "\"tp\": 8, \"pp\": 8, \"dp\": 16, \"engine\": \"megatron\"");
  static final String ZERO3_FSDP = training("llama2-70b", "dgx-h100", 128, 1024, "2e11",
      "\"tp\": 1, \"pp\": 1, \"dp\": 128, \"zeroStage\": 3, \"engine\": \"fsdp\","
          + " \"recompute\": \"full\", \"microBatch\": 1");
  static final String DEEPSPEED = training("gpt3-175b", "dgx-a100", 384, 1536, "3e11",
      "\"tp\": 4, \"pp\": 12, \"dp\": 8, \"engine\": \"deepspeed\", \"zeroStage\": 1");
  static final String SERVING = """
      {"model": {"catalog": "llama2-70b"},
       "cluster": {"accelerator": "h100-sxm-80gb", "devices": 8},
       "workload": {"type": "inference", "precision": "fp8", "batchSize": 1,
                    "promptTokens": 1024, "outputTokens": 256, "arrivalRatePerSecond": 20,
                    "latencySlo": {"ttftSeconds": 0.5, "tpotSeconds": 0.05, "percentile": 99}},
       "constraints": {"weightFormats": ["fp8"], "kvFormats": ["fp8"]}}
      """;

  @Test
  void everyTrainingManifestValidatesAgainstThePublishedSchemas() throws IOException {
    for (String request : List.of(SINGLE_NODE, MULTI_NODE, THREE_D, ZERO3_FSDP, DEEPSPEED)) {
      Plan plan = plan(request);
      for (LaunchOptions options : List.of(LaunchOptions.defaults(),
          LaunchOptions.defaults().withGang("kueue").withQueue("team-a"),
          LaunchOptions.defaults().withGang("none"))) {
        for (Target t : List.of(Target.KUBERNETES, Target.JOBSET)) {
          List<JsonNode> docs = validate(Launch.training(plan, t, options).text());
          JsonNode job = docs.get(docs.size() - 1);
          assertPodsTimesGpus(plan, job);
          if (options.gang().equals("kueue")) {
            assertEquals("team-a", job.at("/metadata/labels/kueue.x-k8s.io~1queue-name")
                .asText(), t + " " + job);
          }
        }
      }
    }
  }

  @Test
  void aPyTorchJobCarriesTheLayoutGangAndGoldenParameters() throws IOException {
    Plan plan = plan(THREE_D);
    JsonNode job = validate(Launch.emit(plan, Target.KUBERNETES)).get(0);
    assertEquals("PyTorchJob", job.get("kind").asText());
    assertEquals(128, job.at("/spec/runPolicy/schedulingPolicy/minAvailable").asInt(),
        "gang: every pod");
    assertEquals(1, job.at("/spec/pytorchReplicaSpecs/Master/replicas").asInt());
    assertEquals(127, job.at("/spec/pytorchReplicaSpecs/Worker/replicas").asInt());
    JsonNode pod = job.at("/spec/pytorchReplicaSpecs/Worker/template/spec");
    assertEquals("volcano", pod.get("schedulerName").asText());
    JsonNode c = pod.get("containers").get(0);
    assertEquals("8", c.at("/resources/limits/nvidia.com~1gpu").asText());
    assertEquals("1", c.at("/resources/limits/rdma~1rdma_shared_device_a").asText(),
        "InfiniBand nodes get RDMA");
    List<String> args = new ArrayList<>();
    c.get("args").forEach(a -> args.add(a.asText()));
    assertEquals("8", args.get(args.indexOf("--tensor-model-parallel-size") + 1));
    assertEquals("8", args.get(args.indexOf("--pipeline-model-parallel-size") + 1));
    Map<String, String> env = new HashMap<>();
    c.get("env").forEach(e -> env.put(e.get("name").asText(), e.get("value").asText()));
    assertEquals("1", env.get("CUDA_DEVICE_MAX_CONNECTIONS"), "tp > 1");
    String shm = pod.at("/volumes/0/emptyDir/sizeLimit").asText();
    double golden = plan.goldenParameters().stream()
        .filter(g -> g.name().equals("sharedMemoryBytesPerNode")).findFirst().orElseThrow()
        .value() instanceof Number n ? n.doubleValue() : -1;
    assertEquals(golden / (1L << 30), gib(shm), 1.0);
    assertEquals("Memory", pod.at("/volumes/0/emptyDir/medium").asText());
  }

  @Test
  void aJobSetRanksNodesByCompletionIndex() throws IOException {
    JsonNode set = validate(Launch.emit(plan(MULTI_NODE), Target.JOBSET)).get(0);
    JsonNode job = set.at("/spec/replicatedJobs/0/template/spec");
    assertEquals(8, job.get("parallelism").asInt());
    assertEquals("Indexed", job.get("completionMode").asText());
    String args = job.at("/template/spec/containers/0/args").toString();
    assertTrue(args.contains("--node-rank=$(JOB_COMPLETION_INDEX)")
        && args.contains("--master-addr=hyperframes-train-node-0-0.hyperframes-train"), args);
  }

  @Test
  void deepSpeedShipsItsConfigAsAConfigMap() throws IOException {
    List<JsonNode> docs = validate(Launch.emit(plan(DEEPSPEED), Target.KUBERNETES));
    assertEquals("ConfigMap", docs.get(0).get("kind").asText());
    JsonNode config = Json.parseObject("ds", docs.get(0).at("/data/ds_config.json").asText());
    assertEquals(1, config.at("/zero_optimization/stage").asInt());
    assertTrue(docs.get(1).toString().contains("--deepspeed_config"));
  }

  @Test
  void aServingPlanIsAVllmDeployment() throws IOException {
    ServingPlans.Result r = ServingPlans.plan(Json.parseObject("r", SERVING), Catalog.builtIn());
    LaunchConfigs.Emitted e = Launch.serving(r, Target.KUBERNETES, LaunchOptions.defaults());
    JsonNode d = validate(e.text()).get(0);
    assertEquals("Deployment", d.get("kind").asText());
    var best = r.plan().best();
    assertEquals(best.replicas(), d.at("/spec/replicas").asInt());
    JsonNode c = d.at("/spec/template/spec/containers/0");
    assertEquals(Integer.toString(best.tp()), c.at("/resources/limits/nvidia.com~1gpu").asText());
    assertEquals(best.devices(), best.replicas() * best.tp());
    String args = c.get("args").toString();
    assertTrue(args.contains("--tensor-parallel-size=" + best.tp())
        && args.contains("--max-num-seqs=" + best.batchLimit())
        && args.contains("--kv-cache-dtype=fp8"), args);
    assertTrue(assertThrows(IllegalArgumentException.class,
        () -> Launch.serving(r, Target.DOCKERFILE, LaunchOptions.defaults())).getMessage()
        .contains("kubernetes"));
  }

  @Test
  void everyDockerfileParsesAndItsStagesRunBaseFrameworkCode() {
    for (String request : List.of(SINGLE_NODE, MULTI_NODE, THREE_D, ZERO3_FSDP, DEEPSPEED)) {
      Plan plan = plan(request);
      String text = Launch.emit(plan, Target.DOCKERFILE);
      List<DockerfileGrammar.Instruction> ins = DockerfileGrammar.parse(text);
      List<String> stages = new ArrayList<>();
      for (DockerfileGrammar.Instruction i : ins) {
        if (i.keyword().equals("FROM")) {
          stages.add(i.arguments().replaceAll("(?i).*\\s+AS\\s+", ""));
        }
      }
      assertEquals(List.of("base", "framework", "code"), stages, text);
      assertTrue(ins.get(ins.size() - 1).keyword().equals("CMD")
          && ins.stream().anyMatch(i -> i.keyword().equals("ENTRYPOINT")), text);
      assertTrue(ins.stream().filter(i -> i.keyword().equals("FROM")).skip(1)
          .allMatch(i -> i.arguments().startsWith("base ") || i.arguments()
              .startsWith("framework ")), "each stage builds on the previous one: " + text);
      assertTrue(ins.stream().anyMatch(i -> i.keyword().equals("ENV")
          && i.arguments().contains("TORCH_NCCL_ASYNC_ERROR_HANDLING=1")), text);
    }
    assertTrue(Launch.dockerignore().contains(".git"));
  }

  @Test
  void badInputSaysWhy() {
    assertTrue(assertThrows(IllegalArgumentException.class,
        () -> LaunchOptions.defaults().withName("Bad_Name")).getMessage()
        .contains("launch.name"));
    assertTrue(assertThrows(IllegalArgumentException.class,
        () -> LaunchOptions.defaults().withGang("slurm")).getMessage().contains("slurm"));
    assertTrue(assertThrows(IllegalArgumentException.class,
        () -> Target.fromId("--emit", "helm")).getMessage().contains("kubernetes"));
    Plan dense = plan("""
        {"model": {"name": "mlp", "dense": [784, 2048, 10]},
         "cluster": {"accelerator": "h100-sxm-80gb", "devices": 1},
         "workload": {"type": "training", "precision": "bf16-mixed", "globalBatchSize": 256,
                      "optimizer": "adam"},
         "layout": {"tp": 1, "pp": 1, "dp": 1}}
        """);
    assertTrue(assertThrows(IllegalArgumentException.class,
        () -> Launch.emit(dense, Target.KUBERNETES)).getMessage().contains("dense stack"));
  }

  /**
   * Pods × GPUs per pod of a manifest equal the plan's devices, and {@code /dev/shm} is never
   * below what the loader workers hold, over layouts and node sizes.
   */
  @Property(tries = 60)
  void podsTimesGpusIsTheDeviceCountAndShmCoversTheLoaders(
      @ForAll @IntRange(min = 0, max = 3) int tpLog, @ForAll @IntRange(min = 0, max = 3) int ppLog,
      @ForAll @IntRange(min = 0, max = 4) int dpLog, @ForAll @IntRange(min = 0, max = 1) int node,
      @ForAll @IntRange(min = 0, max = 1) int target) throws IOException {
    int tp = 1 << tpLog;
    int pp = 1 << ppLog;
    int dp = 1 << dpLog;
    int devices = tp * pp * dp;
    String template = node == 0 ? "dgx-h100" : "dgx-a100";
    Plan plan = plan(String.format(java.util.Locale.ROOT, """
        {"model": {"catalog": "llama2-13b"},
         "cluster": {"template": "%s", "devices": %d},
         "workload": {"type": "training", "precision": "bf16-mixed",
                      "globalBatchSize": %d, "optimizer": "adam"},
         "layout": {"tp": %d, "pp": %d, "dp": %d, "microBatch": 1}}
        """, template, devices, 8 * dp * pp, tp, pp, dp));
    Target t = target == 0 ? Target.KUBERNETES : Target.JOBSET;
    List<JsonNode> docs = validate(Launch.emit(plan, t));
    JsonNode job = docs.get(docs.size() - 1);
    assertPodsTimesGpus(plan, job);
    int perNode = Math.min(devices, 8);
    int workers = (int) Math.round(golden(plan, "dataLoaderWorkers"));
    int prefetch = (int) Math.round(golden(plan, "prefetchDepth"));
    double need = GoldenParameters.loaderSharedMemoryBytes(perNode, workers, prefetch, 1,
        GoldenParameters.loaderSampleBytes(plan.request().model()));
    for (String shm : job.findValuesAsText("sizeLimit")) {
      assertTrue(gib(shm) * (1L << 30) >= need, shm + " < " + need);
    }
  }

  private static double golden(Plan plan, String name) {
    return ((Number) plan.goldenParameters().stream().filter(g -> g.name().equals(name))
        .findFirst().orElseThrow().value()).doubleValue();
  }

  private static void assertPodsTimesGpus(Plan plan, JsonNode job) {
    long devices = plan.best().estimate().devices();
    int pods = 0;
    int gpus = 0;
    List<JsonNode> podSpecs = new ArrayList<>();
    if (job.get("kind").asText().equals("PyTorchJob")) {
      for (JsonNode r : job.at("/spec/pytorchReplicaSpecs")) {
        pods += r.get("replicas").asInt();
        podSpecs.add(r.at("/template/spec"));
      }
    } else {
      JsonNode j = job.at("/spec/replicatedJobs/0");
      pods = j.get("replicas").asInt() * j.at("/template/spec/parallelism").asInt();
      podSpecs.add(j.at("/template/spec/template/spec"));
    }
    for (JsonNode p : podSpecs) {
      int g = Integer.parseInt(p.at("/containers/0/resources/limits/nvidia.com~1gpu").asText());
      assertTrue(gpus == 0 || gpus == g, "every pod the same GPUs");
      gpus = g;
    }
    assertEquals(devices, (long) pods * gpus, job.toString());
  }

  private static double gib(String quantity) {
    assertTrue(quantity.endsWith("Gi"), quantity);
    return Double.parseDouble(quantity.substring(0, quantity.length() - 2));
  }
}
