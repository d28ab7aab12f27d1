package io.hyperframes.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code serve-plan}: its short options write the request a file would, it prints the same plan
 * as {@code plan} with an inference workload (table, JSON, HTML, launch line), and it refuses what
 * it cannot do, naming the option.
 */
class ServePlanCliTest {

  @TempDir Path dir;

  static final String SEVEN_B = """
      {"model": {"catalog": "llama2-7b"},
       "cluster": {"accelerator": "h100-sxm-80gb", "devices": 8},
       "workload": {"type": "inference", "precision": "fp16", "batchSize": 1,
                    "promptTokens": 512, "outputTokens": 128, "arrivalRatePerSecond": 5,
                    "latencySlo": {"ttftSeconds": 0.5, "tpotSeconds": 0.05, "percentile": 99}},
       "constraints": {"weightFormats": ["fp16", "fp8"]}}
      """;

  @Test
  void shortOptionsPlanWhatTheRequestFilePlans() throws Exception {
    Path request = Files.writeString(dir.resolve("7b.json"), SEVEN_B);
    CliTest.Result file = CliTest.run("serve-plan", "--request", request.toString());
    assertEquals(0, file.status(), file.err());
    assertTrue(file.out().startsWith("HyperFrames serving plan ("), file.out());
    assertTrue(file.out().contains("\nbest: "), file.out());
    CliTest.Result flags = CliTest.run("serve-plan", "--model", "llama2-7b", "--accelerator",
        "h100-sxm-80gb", "--rate", "5", "--prompt", "512", "--output", "128", "--ttft", "0.5",
        "--tpot", "0.05", "--weight-formats", "fp16,fp8");
    assertEquals(0, flags.status(), flags.err());
    assertEquals(file.out(), flags.out());
    CliTest.Result plan = CliTest.run("plan", "--request", request.toString());
    assertEquals(file.out(), plan.out(), "plan with an inference workload is the same search");
  }

  /**
   * docs/inference.md prints the DeepSeek-V3 plan on H100, whose aggregated configuration and
   * pools spread the experts over several replicas; {@code --emit dynamo} writes its multi-node
   * workers, and
   * {@code --backend trtllm} is refused as the page prints.
   */
  @Test
  void theGuidePrintsTheDeepSeekPlanAndItsRefusal() throws Exception {
    String[] plan = {"serve-plan", "--model", "deepseek-v3", "--accelerator", "h100-sxm-80gb",
        "--rate", "20", "--prompt", "2000", "--output", "500", "--ttft", "2", "--tpot", "0.1",
        "--weight-formats", "fp8", "--kv-formats", "bf16"};
    CliTest.Result r = CliTest.run(plan);
    assertEquals(0, r.status(), r.err());
    String head = r.out().substring(0, r.out().indexOf("pareto front"));
    assertTrue(head.contains("\nbest: 16 devices (tp 1 ep 16 × 16 replicas)")
        && head.contains("\ndisaggregated: 32 devices (prefill tp 2 ep 16 × 8 replicas")
        && head.contains("\nfewer devices: aggregated\n"), head);
    CliTest.assertPrints(Path.of("..", "docs", "inference.md"), head);
    String[] emit = with(plan, "--emit", "dynamo");
    CliTest.Result dynamo = CliTest.run(emit);
    assertEquals(0, dynamo.status(), dynamo.err());
    assertTrue(dynamo.out().contains("multinode:\n      nodeCount: 2"), dynamo.out());
    CliTest.Result refused = CliTest.run(with(emit, "--backend", "trtllm"));
    assertTrue(refused.status() != 0, refused.out());
    String message = refused.err().strip();
    assertTrue(message.startsWith("error: --emit dynamo --backend trtllm: the plan's prefill pool"
        + " spreads the experts"), refused.err());
    CliTest.assertPrints(Path.of("..", "docs", "inference.md"), message);
  }

  /**
   * docs/inference.md prints the DeepSeek-V3 plan at 45 requests/s: three nodes, an
   * expert-parallel group of 24 devices holding 8 redundant experts.
   */
  @Test
  void theGuidePrintsTheDeepSeekPlanOnThreeNodes() throws Exception {
    CliTest.Result r = CliTest.run("serve-plan", "--model", "deepseek-v3", "--accelerator",
        "h100-sxm-80gb", "--rate", "45", "--prompt", "2000", "--output", "500", "--ttft", "2",
        "--tpot", "0.1", "--weight-formats", "fp8", "--kv-formats", "bf16");
    assertEquals(0, r.status(), r.err());
    String head = r.out().substring(0, r.out().indexOf("pareto front"));
    assertTrue(head.contains("\nbest: 24 devices (tp 1 ep 24 × 24 replicas, 8 redundant"
        + " experts"), head);
    CliTest.assertPrints(Path.of("..", "docs", "inference.md"), head);
  }

  /**
   * docs/inference.md prints the plan of a dense model no node holds (Llama 3.1 405B in BF16 on
   * H100): replicas of pipeline stages over nodes, and its vLLM launch on Ray.
   */
  @Test
  void theGuidePrintsThe405bPlanOverNodes() throws Exception {
    String[] plan = {"serve-plan", "--model", "llama3.1-405b", "--accelerator",
        "h100-sxm-80gb", "--rate", "2", "--prompt", "2000", "--output", "500", "--ttft", "5",
        "--tpot", "0.1", "--weight-formats", "bf16", "--kv-formats", "bf16"};
    CliTest.Result r = CliTest.run(plan);
    assertEquals(0, r.status(), r.err());
    String head = r.out().substring(0, r.out().indexOf("pareto front"));
    assertTrue(head.contains("\nbest: ") && head.contains(" pp "), head);
    CliTest.assertPrints(Path.of("..", "docs", "inference.md"), head);
    CliTest.Result vllm = CliTest.run(with(plan, "--emit", "vllm"));
    assertEquals(0, vllm.status(), vllm.err());
    CliTest.assertPrints(Path.of("..", "docs", "inference.md"), vllm.out());
  }

  /** {@code args} followed by {@code more}. */
  private static String[] with(String[] args, String... more) {
    String[] out = java.util.Arrays.copyOf(args, args.length + more.length);
    System.arraycopy(more, 0, out, args.length, more.length);
    return out;
  }

  /**
   * docs/inference.md prints the 70B plan above its front: the aggregated best, the alternatives,
   * the disaggregated pools and the kind with fewer devices.
   */
  @Test
  void theGuidePrintsThe70bPlan() throws Exception {
    CliTest.Result r = serve70b();
    assertEquals(0, r.status(), r.err());
    String head = r.out().substring(0, r.out().indexOf("pareto front"));
    assertTrue(head.contains("\ndisaggregated: ") && head.contains("\nfewer devices: "), head);
    CliTest.assertPrints(Path.of("..", "docs", "inference.md"), head);
    // The launch stays with the aggregated best, and says that disaggregation needs fewer.
    CliTest.Result vllm = serve70b("--emit", "vllm");
    assertEquals(0, vllm.status(), vllm.err());
    assertTrue(vllm.out().startsWith("vllm serve "), vllm.out());
    assertTrue(vllm.err().contains("note: disaggregated prefill and decode need 6 devices against"
        + " the 8 of this aggregated configuration"), vllm.err());
    // --emit dynamo writes the disaggregated pools (docs/launch.md).
    CliTest.Result dynamo = serve70b("--emit", "dynamo", "--out", dir.toString());
    assertEquals(0, dynamo.status(), dynamo.err());
    String yaml = Files.readString(dir.resolve("hyperframes-serve.yaml"));
    assertTrue(yaml.contains("kind: \"DynamoGraphDeployment\"")
        && yaml.contains("type: \"prefill\"\n    replicas: 4")
        && yaml.contains("type: \"decode\"\n    replicas: 1"), yaml);
    assertTrue(dynamo.err().contains("wrote " + dir.resolve("hyperframes-serve.yaml")),
        dynamo.err());
    // --backend sglang: the same pools as Dynamo SGLang workers; refused for another target.
    CliTest.Result sglang = serve70b("--emit", "dynamo", "--backend", "sglang");
    assertEquals(0, sglang.status(), sglang.err());
    assertTrue(sglang.out().contains("backendFramework: \"sglang\"")
        && sglang.out().contains("- \"dynamo.sglang\"")
        && sglang.out().contains("type: \"prefill\"\n    replicas: 4"), sglang.out());
    // --backend trtllm: the pools' engine files in a ConfigMap, then the deployment.
    CliTest.Result trtllm = serve70b("--emit", "dynamo", "--backend", "trtllm");
    assertEquals(0, trtllm.status(), trtllm.err());
    assertTrue(trtllm.out().startsWith("---\napiVersion: \"v1\"\nkind: \"ConfigMap\"")
        && trtllm.out().contains("backendFramework: \"trtllm\"")
        && trtllm.out().contains("- \"dynamo.trtllm\"")
        && trtllm.out().contains("prefill.yaml: |")
        && trtllm.out().contains("type: \"prefill\"\n    replicas: 4"), trtllm.out());
    CliTest.Result wrong = serve70b("--emit", "vllm", "--backend", "sglang");
    assertEquals(2, wrong.status(), wrong.err());
    assertTrue(wrong.err().contains("--backend: only with --emit dynamo"), wrong.err());
    CliTest.Result training = CliTest.run("plan", "--request",
        Path.of("..", "examples", "70b-finetune.json").toString(), "--emit", "megatron",
        "--backend", "sglang");
    assertEquals(2, training.status(), training.err());
    assertTrue(training.err().contains("--backend: only with --emit dynamo (the engine of its"
        + " workers), not with --emit megatron"), training.err());
  }

  @Test
  void jsonHtmlAndLaunchLineAreThePlans() throws Exception {
    Path request = Files.writeString(dir.resolve("7b.json"), SEVEN_B);
    CliTest.Result json = CliTest.run("serve-plan", "--request", request.toString(), "--format",
        "json");
    assertEquals(0, json.status(), json.err());
    var root = io.hyperframes.json.Json.parseObject("out", json.out());
    assertTrue(root.get("pareto").size() > 2, json.out());
    assertTrue(root.get("best").get("devices").asInt() >= 1, json.out());
    CliTest.Result html = CliTest.run("serve-plan", "--request", request.toString(), "--format",
        "html");
    assertEquals(0, html.status(), html.err());
    assertTrue(html.out().startsWith("<!DOCTYPE html>"), html.out());
    assertTrue(html.out().contains("HyperFrames serving plan: llama2-7b on h100-sxm-80gb"));
    assertEquals(root.get("pareto").size(),
        html.out().split("<circle ", -1).length - 1, "one point per point of the front");
    CliTest.Result planHtml = CliTest.run("plan", "--request", request.toString(), "--format",
        "html");
    assertEquals(html.out(), planHtml.out());
    CliTest.Result vllm = CliTest.run("serve-plan", "--request", request.toString(), "--emit",
        "vllm");
    assertEquals(0, vllm.status(), vllm.err());
    assertTrue(vllm.out().startsWith("vllm serve "), vllm.out());
    assertEquals(vllm.out(), CliTest.run("plan", "--request", request.toString(), "--emit",
        "vllm").out());
  }

  @Test
  void refusalsNameTheOption() throws Exception {
    Path request = Files.writeString(dir.resolve("7b.json"), SEVEN_B);
    CliTest.Result markdown = CliTest.run("serve-plan", "--request", request.toString(),
        "--format", "markdown");
    assertEquals(2, markdown.status());
    assertTrue(markdown.err().contains("--format: markdown is not available for hyperframes"
        + " serve-plan (table, json, html)"), markdown.err());
    CliTest.Result planMarkdown = CliTest.run("plan", "--request", request.toString(),
        "--format", "markdown");
    assertEquals(2, planMarkdown.status());
    assertTrue(planMarkdown.err().contains("--format: markdown is not available for a serving"
        + " plan"), planMarkdown.err());
    CliTest.Result missing = CliTest.run("serve-plan", "--model", "llama2-7b", "--accelerator",
        "h100-sxm-80gb", "--rate", "5", "--prompt", "512", "--output", "128");
    assertEquals(2, missing.status());
    assertTrue(missing.err().contains("(missing --ttft or --tpot)"), missing.err());
    CliTest.Result training = CliTest.run("serve-plan", "--request",
        Path.of("..", "examples", "gpt3-175b-a100.json").toString());
    assertEquals(2, training.status());
    assertTrue(training.err().contains("workload.type: serve-plan plans serving"),
        training.err());
    CliTest.Result negative = CliTest.run("serve-plan", "--model", "llama2-7b", "--accelerator",
        "h100-sxm-80gb", "--rate", "5", "--prompt", "512", "--output", "128", "--ttft", "-1");
    assertEquals(2, negative.status());
    assertTrue(negative.err().contains("--ttft: must be a positive number of seconds, got -1.0"),
        negative.err());
    CliTest.Result dockerfile = CliTest.run("serve-plan", "--request", request.toString(),
        "--emit", "dockerfile");
    assertEquals(2, dockerfile.status());
    assertTrue(dockerfile.err().contains("--emit"), dockerfile.err());
  }

  /** {@code serve-plan} of examples/serve-70b-slo.json with {@code more} options. */
  private static CliTest.Result serve70b(String... more) {
    String[] args = new String[3 + more.length];
    args[0] = "serve-plan";
    args[1] = "--request";
    args[2] = Path.of("..", "examples", "serve-70b-slo.json").toString();
    System.arraycopy(more, 0, args, 3, more.length);
    return CliTest.run(args);
  }
}
