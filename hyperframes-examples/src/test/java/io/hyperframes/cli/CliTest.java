package io.hyperframes.cli;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.hyperframes.json.Json;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The command line: output contracts, exit statuses and one-line errors. */
class CliTest {

  @TempDir Path dir;

  record Result(int status, String out, String err) {}

  static Result run(String... args) {
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    int status = Main.run(args, new PrintWriter(out, true), new PrintWriter(err, true));
    return new Result(status, out.toString(), err.toString());
  }

  /**
   * {@code validate --cases docs/validation/FILE --format markdown}, asserted to succeed and to
   * be printed line by line in docs/validation.md; its output.
   */
  static String validatedInDocs(String casesFile) throws IOException {
    Result r = run("validate", "--cases", Path.of("..", "docs", "validation", casesFile)
        .toString(), "--format", "markdown");
    org.junit.jupiter.api.Assertions.assertEquals(0, r.status(), r.err());
    assertPrints(Path.of("..", "docs", "validation.md"), r.out());
    return r.out();
  }

  /**
   * The step-time error in percent of every case of a {@code validate --format markdown} report,
   * by case id, in the report's order.
   */
  static java.util.Map<String, Double> stepErrors(String report) {
    return errorsById(report, "stepSeconds");
  }

  /**
   * The error in percent of every row of metric {@code metric} (a regular expression without
   * capturing groups) of a {@code validate --format markdown} report, by case id, in the
   * report's order.
   */
  static java.util.Map<String, Double> errorsById(String report, String metric) {
    java.util.Map<String, Double> out = new java.util.LinkedHashMap<>();
    java.util.regex.Matcher m = java.util.regex.Pattern.compile("(?m)^\\| (\\S+) \\| "
        + metric + " \\| [0-9.e+]+ \\| [0-9.e+]+ \\| ([-+][0-9.]+) % \\|").matcher(report);
    while (m.find()) {
      out.put(m.group(1), Double.parseDouble(m.group(2)));
    }
    return out;
  }

  /**
   * {@link #validatedInDocs} of {@code casesFile}, asserted to report the mean |error|
   * {@code mean} (as printed, in percent): the errors of its rows of case ids {@code ids} and
   * metric {@code metric} ({@link #errors}).
   */
  static java.util.List<Double> reportErrors(String casesFile, String mean, String ids,
      String metric) throws IOException {
    String out = validatedInDocs(casesFile);
    assertTrue(out.contains("Mean |error| " + mean + " %"), out);
    return errors(out, ids, metric);
  }

  /**
   * {@link #validatedInDocs} of {@code casesFile}, asserted to have {@code rows} step-time rows:
   * their errors by case id ({@link #stepErrors}).
   */
  static java.util.Map<String, Double> stepErrorsInDocs(String casesFile, int rows)
      throws IOException {
    String out = validatedInDocs(casesFile);
    java.util.Map<String, Double> errors = stepErrors(out);
    assertEquals(rows, errors.size(), out);
    return errors;
  }

  /**
   * The errors in percent of the rows of a {@code validate --format markdown} report whose case
   * id matches {@code ids} and whose metric is {@code metric} (regular expressions without
   * capturing groups), in the report's order.
   */
  static java.util.List<Double> errors(String report, String ids, String metric) {
    java.util.List<Double> out = new java.util.ArrayList<>();
    java.util.regex.Matcher m = java.util.regex.Pattern.compile("(?m)^\\| " + ids + " \\| "
        + metric + " \\| [0-9.e+]+ \\| [0-9.e+]+ \\| ([-+][0-9.]+) % \\|").matcher(report);
    while (m.find()) {
      out.add(Double.parseDouble(m.group(1)));
    }
    return out;
  }

  /** Asserts that the document prints every non-blank line of a command's output. */
  static void assertPrints(Path document, String output) throws IOException {
    String text = Files.readString(document, java.nio.charset.StandardCharsets.UTF_8);
    java.util.List<String> missing = new java.util.ArrayList<>();
    for (String line : output.split("\n")) {
      if (!line.isBlank() && !text.contains(line.strip())) {
        missing.add(line);
      }
    }
    org.junit.jupiter.api.Assertions.assertTrue(missing.isEmpty(),
        document + " does not print: " + missing);
  }

  /**
   * {@code estimate --request REQUEST}, asserted to succeed; the part of its table from the first
   * {@code from} (to the first {@code to} after it, or to the end where {@code to} is null) is
   * asserted to be printed in docs/inference.md, and returned.
   */
  static String estimateInGuide(Path request, String from, String to) throws IOException {
    Result r = run("estimate", "--request", request.toString());
    assertEquals(0, r.status(), r.err());
    int start = r.out().indexOf(from);
    assertTrue(start >= 0, "no '" + from + "' in " + r.out());
    String block = to == null ? r.out().substring(start)
        : r.out().substring(start, r.out().indexOf(to, start));
    assertPrints(Path.of("..", "docs", "inference.md"), block);
    return block;
  }

  /** {@code estimate --request REQUEST --format json}, asserted to succeed: its output. */
  static JsonNode estimateJson(Path request) {
    Result r = run("estimate", "--request", request.toString(), "--format", "json");
    assertEquals(0, r.status(), r.err());
    return Json.parseObject("output", r.out());
  }

  Path write(String name, String text) throws IOException {
    return Files.writeString(dir.resolve(name), text);
  }

  static final String REQUEST = """
      {"model": {"catalog": "llama2-70b"},
       "cluster": {"accelerator": "h100-sxm-80gb", "devices": 256},
       "workload": {"type": "training", "precision": "bf16-mixed", "globalBatchSize": 1024,
                    "trainingTokens": 2e12},
       "layout": {"tp": 8, "pp": 4, "dp": 8}}
      """;

  @Test
  void estimateJsonHasTheContractFields() throws IOException {
    Result r = run("estimate", "--request", write("r.json", REQUEST).toString(), "--format",
        "json");
    assertEquals(0, r.status(), r.err());
    JsonNode json = Json.parseObject("output", r.out());
    for (String f : List.of("feasible", "reasons", "layout", "parameters", "memory", "time", "mfu",
        "hfu", "tflopsPerDevice", "tokensPerSecond", "tokensPerSecondPerDevice", "commShare",
        "trainingDays", "gpuHours")) {
      assertTrue(json.has(f), "missing " + f);
    }
    for (String f : List.of("weightsBytes", "gradientsBytes", "optimizerBytes",
        "activationsBytes", "otherBytes", "totalBytes", "modelStatesBytes")) {
      assertTrue(json.get("memory").has(f), "missing memory." + f);
    }
    for (String f : List.of("stepSeconds", "computeSeconds", "recomputeSeconds",
        "exposedCommSeconds", "bubbleSeconds")) {
      assertTrue(json.get("time").has(f), "missing time." + f);
    }
    for (String f : List.of("tp", "pp", "dp", "virtualStages", "microBatch", "sequenceParallel",
        "recompute", "zeroStage")) {
      assertTrue(json.get("layout").has(f), "missing layout." + f);
    }
    assertTrue(json.get("trainingDays").asDouble() > 0);
  }

  @Test
  void estimateTableIsReadable() throws IOException {
    Result r = run("estimate", "--request", write("r.json", REQUEST).toString());
    assertEquals(0, r.status(), r.err());
    assertTrue(r.out().contains("MFU"));
    assertTrue(r.out().contains("GPU-hours"));
  }

  @Test
  void badInputExitsTwoWithOneLine() throws IOException {
    Result r = run("estimate", "--request",
        write("bad.json", REQUEST.replace("\"tp\": 8", "\"tp\": 3")).toString());
    assertEquals(2, r.status());
    assertEquals(1, r.err().strip().lines().count(), r.err());
    assertTrue(r.err().contains("layout.tp") && r.err().contains("3"), r.err());
    assertFalse(r.err().contains("Exception"), r.err());
  }

  @Test
  void emptyAndMissingFilesExitTwo() throws IOException {
    Result empty = run("estimate", "--request", write("empty.json", "").toString());
    assertEquals(2, empty.status());
    assertTrue(empty.err().contains("empty"), empty.err());
    Result missing = run("estimate", "--request", dir.resolve("nope.json").toString());
    assertEquals(2, missing.status());
    assertTrue(missing.err().contains("nope.json"), missing.err());
    Result malformed = run("estimate", "--request", write("m.json", "{\"model\":").toString());
    assertEquals(2, malformed.status());
    assertTrue(malformed.err().contains("malformed JSON"), malformed.err());
  }

  @Test
  void validateJsonHasTheContractFields() throws IOException {
    String cases;
    try (var in = CliTest.class.getResourceAsStream("/validation/published-runs.json")) {
      cases = new String(in.readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
    }
    Result r = run("validate", "--cases", write("c.json", cases).toString(), "--format", "json");
    assertEquals(0, r.status(), r.err());
    JsonNode json = Json.parseObject("output", r.out());
    assertTrue(json.get("meanAbsRelativeError").isNumber());
    assertTrue(json.get("maxAbsRelativeError").isNumber());
    JsonNode first = json.get("cases").get(0);
    for (String f : List.of("id", "metric", "expected", "predicted", "relativeError")) {
      assertTrue(first.has(f), "missing cases[0]." + f);
    }
    // An empty file is an error, not a mean error of 0 % over nothing.
    Result empty = run("validate", "--cases", write("e.json", "{\"cases\": []}").toString());
    assertEquals(2, empty.status(), empty.out());
    assertTrue(empty.err().contains("cases: the array is empty"), empty.err());
  }

  @Test
  void catalogListsTheRequiredAccelerators() {
    Result r = run("catalog", "accelerators");
    assertEquals(0, r.status(), r.err());
    for (String id : List.of("v100-sxm-32gb", "a100-sxm-40gb", "a100-sxm-80gb", "h100-sxm-80gb",
        "h100-pcie-80gb", "h800-sxm-80gb", "h200-sxm-141gb", "b200-sxm-192gb", "l40s-48gb",
        "mi300x-192gb")) {
      assertTrue(r.out().contains(id), "missing " + id);
    }
  }

  @Test
  void planShortFormPrintsAPlanWithItsContractFields() {
    Result r = run("plan", "--model", "llama2-7b", "--accelerator", "a100-sxm-80gb", "--devices",
        "8-32", "--tokens", "1e11", "--objective", "cost", "--format", "json", "--no-progress");
    assertEquals(0, r.status(), r.err());
    JsonNode json = Json.parseObject("output", r.out());
    for (String f : List.of("feasible", "layout", "memory", "time", "mfu", "search",
        "alternatives", "pareto", "goldenParameters", "findings", "cost")) {
      assertTrue(json.has(f), "missing " + f);
    }
    Result table = run("plan", "--model", "llama2-7b", "--accelerator", "a100-sxm-80gb",
        "--devices", "16", "--tokens", "1e11", "--no-progress");
    assertEquals(0, table.status(), table.err());
    assertTrue(table.out().contains("golden parameters"), table.out());
  }

  @Test
  void planShortFormTakesACatalogModelAtAnotherLength() {
    Result r = run("plan", "--model", "llama2-7b", "--seq-len", "16384", "--accelerator",
        "a100-sxm-80gb", "--devices", "16", "--tokens", "1e11", "--engine", "megatron",
        "--format", "json", "--no-progress");
    assertEquals(0, r.status(), r.err());
    JsonNode json = Json.parseObject("output", r.out());
    // Tokens a step over sequences a step: the plan ran at the given length.
    assertEquals(16384.0, json.get("tokensPerSecond").asDouble()
        * json.get("time").get("stepSeconds").asDouble()
        / json.get("globalBatchSize").asDouble(), 1e-6 * 16384);
    Result megatron = run("plan", "--model", "llama2-7b", "--seq-len", "16384",
        "--accelerator", "a100-sxm-80gb", "--devices", "16", "--tokens", "1e11", "--engine",
        "megatron", "--emit", "megatron", "--no-progress");
    assertEquals(0, megatron.status(), megatron.err());
    assertTrue(megatron.out().contains("--seq-length 16384"), megatron.out());
  }

  @Test
  void planEmitsLaunchConfigurations() {
    Result megatron = run("plan", "--model", "llama2-7b", "--accelerator", "a100-sxm-80gb",
        "--devices", "16", "--tokens", "1e11", "--engine", "megatron", "--emit", "megatron",
        "--no-progress");
    assertEquals(0, megatron.status(), megatron.err());
    assertTrue(megatron.out().contains("--tensor-model-parallel-size"), megatron.out());
    // The engine left open: FSDP wins on A100 (fused attention by default), and the plan is
    // what launches, so Megatron-LM arguments for it are an error naming both engines.
    Result open = run("plan", "--model", "llama2-7b", "--accelerator", "a100-sxm-80gb",
        "--devices", "16", "--tokens", "1e11", "--emit", "megatron", "--no-progress");
    assertEquals(2, open.status(), open.out());
    assertTrue(open.err().contains("runs on fsdp") && open.err().contains("megatron"),
        open.err());
    Result ds = run("plan", "--model", "llama2-7b", "--accelerator", "a100-sxm-80gb",
        "--devices", "16", "--tokens", "1e11", "--engine", "deepspeed", "--emit", "deepspeed",
        "--no-progress");
    assertEquals(0, ds.status(), ds.err());
    assertTrue(Json.parseObject("deepspeed", ds.out()).has("zero_optimization"));
    Result torchrun = run("plan", "--model", "llama2-7b", "--accelerator", "a100-sxm-80gb",
        "--devices", "16", "--tokens", "1e11", "--emit", "torchrun", "--no-progress");
    assertEquals(0, torchrun.status(), torchrun.err());
    assertTrue(torchrun.out().contains("torchrun --nnodes=2 --nproc-per-node=8"),
        torchrun.out());
  }

  /** A record of {@code command} with metric {@code metric} of {@code samples} samples. */
  static void assertRecord(Path file, String command, String metric, int samples) {
    var rec = io.hyperframes.runtime.BenchmarkRecord.read(file);
    assertEquals(command, rec.conditions().get("command"));
    assertTrue(rec.conditions().containsKey("machine.onednn.isa")
        || rec.conditions().containsKey("machine.cpu"), rec.conditions().toString());
    var m = rec.metrics().get(metric);
    assertTrue(m != null, metric + " missing from " + rec.metrics().keySet());
    assertEquals(samples, m.samples().length, metric);
  }

  @Test
  void benchKernelsRecordsEveryTimedCall() {
    Path rec = dir.resolve("kernels-record.json");
    Result r = run("bench", "kernels", "--budget", "0.01", "--format", "json", "--record",
        rec.toString());
    assertEquals(0, r.status(), r.err());
    var record = io.hyperframes.runtime.BenchmarkRecord.read(rec);
    assertEquals("bench kernels", record.conditions().get("command"));
    JsonNode json = Json.parseObject("kernels", r.out());
    assertEquals(json.get("results").size(), record.metrics().size(), record.metrics().keySet()
        .toString());
    assertTrue(record.metrics().values().stream().allMatch(m -> m.samples().length >= 3));
  }

  @Test
  void benchCompressionReportsEveryCodecOfTheContract() {
    Path rec = dir.resolve("compression-record.json");
    Result r = run("bench", "compression", "--steps", "3", "--hidden", "16", "--rows", "512",
        "--repeats", "1", "--format", "json", "--record", rec.toString());
    assertEquals(0, r.status(), r.err());
    assertRecord(rec, "bench compression", "topk-0.01-ef.stepSeconds", 3);
    JsonNode json = Json.parseObject("compression", r.out().substring(r.out().indexOf('{')));
    List<String> codecs = new java.util.ArrayList<>();
    for (JsonNode row : json.get("results")) {
      codecs.add(row.get("codec").asText());
      for (String f : List.of("ratio", "encodeDecodeGBps", "accuracy", "accuracyDelta",
          "bytesPerStep")) {
        assertTrue(row.get(f).isNumber(), row.get("codec") + " " + f);
      }
      assertTrue(row.get("ratio").asDouble() >= 1.9, row.toString());
    }
    assertEquals(List.of(BenchCompressionCommand.CODECS.split(",")), codecs);
    assertEquals(0.0, json.get("uncompressed").get("accuracyDelta").asDouble());
    Result bad = run("bench", "compression", "--workers", "3");
    assertEquals(2, bad.status());
    assertTrue(bad.err().contains("--workers: 3 does not divide"), bad.err());
  }

  @Test
  void compareExitsOneOnARegressionAndNamesDifferingConditions() throws IOException {
    double[] base = new double[30];
    double[] slower = new double[30];
    for (int i = 0; i < 30; i++) {
      base[i] = 1000 + i;
      slower[i] = 900 + i;
    }
    String a = write("a.json", new io.hyperframes.runtime.BenchmarkRecord(
        io.hyperframes.runtime.BenchmarkRecord.SCHEMA, java.util.Map.of("threads", "2"),
        java.util.Map.of("throughput", new io.hyperframes.runtime.BenchmarkRecord.Metric(
            "samples/s", true, base))).toJson()).toString();
    String b = write("b.json", new io.hyperframes.runtime.BenchmarkRecord(
        io.hyperframes.runtime.BenchmarkRecord.SCHEMA, java.util.Map.of("threads", "1"),
        java.util.Map.of("throughput", new io.hyperframes.runtime.BenchmarkRecord.Metric(
            "samples/s", true, slower))).toJson()).toString();
    Result same = run("compare", a, a);
    assertEquals(0, same.status(), same.err());
    assertTrue(same.out().contains("no change"), same.out());
    Result worse = run("compare", a, b);
    assertEquals(1, worse.status(), worse.out());
    assertTrue(worse.out().contains("REGRESSION") && worse.out().contains("threads: 2 → 1"),
        worse.out());
    Result json = run("compare", a, b, "--format", "json");
    assertTrue(Json.parseObject("compare", json.out()).get("regressed").asBoolean());
    Result missing = run("compare", a, "does-not-exist.json");
    assertEquals(2, missing.status());
    assertTrue(missing.err().contains("record: cannot read"), missing.err());
  }

  @Test
  void scheduleReplaysATraceUnderEachPolicy() throws IOException {
    StringBuilder nodes = new StringBuilder("sn,cpu_milli,memory_mib,gpu,model\n");
    for (int i = 0; i < 6; i++) {
      nodes.append("node-").append(i).append(",32000,131072,").append(i % 2 == 0 ? 8 : 2)
          .append(",T4\n");
    }
    StringBuilder pods = new StringBuilder("name,cpu_milli,memory_mib,num_gpu,gpu_milli,"
        + "gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\n");
    for (int i = 0; i < 40; i++) {
      int gpus = i % 5 == 0 ? 0 : i % 7 == 0 ? 2 : 1;
      int milli = gpus == 0 ? 0 : gpus == 2 || i % 3 == 0 ? 1000 : 250 + 50 * (i % 10);
      pods.append(String.format("pod-%03d,%d,4096,%d,%d,,LS,Running,%d,%d,%d%n", i,
          2000 + 500 * (i % 6), gpus, milli, i, i + 100, i));
    }
    Path n = write("nodes.csv", nodes.toString());
    Path p = write("pods.csv", pods.toString());
    Result r = run("schedule", "--trace", p.toString(), "--cluster", n.toString(), "--policy",
        "random,bestfit,fgd", "--seeds", "1-2", "--format", "json");
    assertEquals(0, r.status(), r.err());
    JsonNode j = Json.parseObject("schedule", r.out());
    assertEquals(3, j.get("policies").size());
    for (JsonNode pol : j.get("policies")) {
      double ratio = pol.get("allocationRatioMean").asDouble();
      assertTrue(ratio > 0.5 && ratio <= 1.0, pol.toString());
      assertEquals(2, pol.get("seeds").size());
      for (JsonNode s : pol.get("seeds")) {
        assertEquals(s.get("tasks").asInt(), s.get("placed").asInt() + s.get("failed").asInt());
      }
    }
    Result t = run("schedule", "--trace", p.toString(), "--cluster", n.toString(), "--mode",
        "time", "--queue", "sjf", "--policy", "bestfit,fgd", "--format", "json");
    assertEquals(0, t.status(), t.err());
    JsonNode tj = Json.parseObject("time", t.out());
    for (JsonNode pol : tj.get("policies")) {
      assertTrue(pol.get("meanJctSeconds").asDouble() >= 1
          && pol.get("p99JctSeconds").asDouble() >= pol.get("p50JctSeconds").asDouble()
          && pol.get("utilisation").asDouble() > 0, pol.toString());
    }
    assertEquals(2, run("schedule", "--trace", p.toString(), "--cluster", n.toString(),
        "--mode", "time", "--queue", "lifo").status());
    Path bad = write("bad.csv", "name,cpu_milli\npod-0,1\n");
    Result b = run("schedule", "--trace", bad.toString(), "--cluster", n.toString());
    assertEquals(2, b.status());
    assertTrue(b.err().contains("bad.csv:1: missing column 'memory_mib'"), b.err());
    assertEquals(2, run("schedule", "--trace", p.toString(), "--cluster", n.toString(),
        "--policy", "drf").status());
    Result html = run("schedule", "--trace", p.toString(), "--cluster", n.toString(), "--mode",
        "time", "--policy", "bestfit", "--format", "html");
    assertEquals(0, html.status(), html.err());
    assertTrue(html.out().startsWith("<!DOCTYPE html>") && html.out().contains("<polyline"));
    Result quota = run("schedule", "--trace", p.toString(), "--cluster", n.toString(), "--mode",
        "time", "--queue", "quotas", "--quota", "a=two");
    assertEquals(2, quota.status());
    assertTrue(quota.err().contains("--quota: expected TENANT=GPUS"), quota.err());
    Result mtbf = run("schedule", "--trace", p.toString(), "--cluster", n.toString(), "--mode",
        "time", "--job-failure-probability", "1.5");
    assertEquals(2, mtbf.status());
    assertTrue(mtbf.err().contains("--job-failure-probability"), mtbf.err());
    Result tj2 = run("schedule", "--trace", p.toString(), "--cluster", n.toString(), "--mode",
        "time", "--queue", "backfill", "--policy", "bestfit", "--node-mtbf-hours", "1",
        "--restart-seconds", "5", "--format", "json");
    assertEquals(0, tj2.status(), tj2.err());
    JsonNode b2 = Json.parseObject("backfill", tj2.out()).get("policies").get(0);
    assertTrue(b2.has("failures") && b2.has("preemptions") && b2.has("maxFinishTimeFairness"),
        b2.toString());
    Path pollux = Path.of("..", "docs", "validation", "pollux");
    Path workload = write("w.csv", "name,time,application,num_replicas,batch_size\n"
        + "cifar10-0,53,cifar10,6,2048\nncf-1,60,ncf,1,32768\nbert-2,70,bert,8,384\n");
    Result g = run("schedule", "--mode", "goodput", "--trace", workload.toString(),
        "--applications", pollux.resolve("applications.json").toString(), "--policy",
        "tiresias,fifo", "--nodes", "4", "--format", "json");
    assertEquals(0, g.status(), g.err());
    JsonNode gj = Json.parseObject("goodput", g.out());
    for (JsonNode pol : gj.get("policies")) {
      assertEquals(3, pol.get("jobs").size());
      for (JsonNode job : pol.get("jobs")) {
        assertTrue(job.get("jctSeconds").asDouble() > 0, job.toString());
      }
    }
    Result noApps = run("schedule", "--mode", "goodput", "--trace", workload.toString());
    assertEquals(2, noApps.status());
    assertTrue(noApps.err().contains("--applications"), noApps.err());
    assertEquals(2, run("schedule", "--mode", "goodput", "--trace", workload.toString(),
        "--applications", pollux.resolve("applications.json").toString(), "--gpus-per-node",
        "12").status());
    Result el = run("schedule", "--trace", p.toString(), "--cluster", n.toString(), "--mode",
        "time", "--policy", "bestfit", "--queue", "elastic", "--elastic", "--format", "json");
    assertEquals(0, el.status(), el.err());
    assertTrue(Json.parseObject("elastic", el.out()).get("policies").get(0).has("resizes"));
    // An inference service beside the jobs: its replicas reserve GPUs, its requests are scored.
    Path requests = write("r.csv", "TIMESTAMP,ContextTokens,GeneratedTokens\n"
        + "2023-11-16 18:15:46.6805900,374,44\n2023-11-16 18:15:50.9951690,396,109\n"
        + "2023-11-16 18:15:51.2224670,879,55\n");
    Path replica = Path.of("..", "examples", "serve-llama2-70b-h100-tp4-fp8.json");
    Result sv = run("schedule", "--trace", p.toString(), "--cluster", n.toString(), "--mode",
        "time", "--policy", "bestfit", "--queue", "priority", "--serve", replica.toString(),
        "--requests", requests.toString(), "--ttft-slo", "2", "--tpot-slo", "0.1",
        "--replicas", "1-2", "--format", "json");
    assertEquals(0, sv.status(), sv.err());
    JsonNode svc = Json.parseObject("serve", sv.out()).get("policies").get(0).get("services")
        .get(0);
    assertEquals(3, svc.get("requests").asInt());
    assertEquals(3, svc.get("finished").asInt());
    assertTrue(svc.get("sloAttainment").asDouble() >= 0 && svc.has("ttftP99Seconds"),
        svc.toString());
    Result svHtml = run("schedule", "--trace", p.toString(), "--cluster", n.toString(),
        "--mode", "time", "--policy", "bestfit", "--queue", "priority", "--serve",
        replica.toString(), "--requests", requests.toString(), "--ttft-slo", "2", "--tpot-slo",
        "0.1", "--format", "html");
    assertEquals(0, svHtml.status(), svHtml.err());
    assertTrue(svHtml.out().contains("SLO attainment, serve-llama2-70b-h100-tp4-fp8")
        && svHtml.out().contains("fragmentation"), "html lacks the service or fragmentation");
    Result noSlo = run("schedule", "--trace", p.toString(), "--cluster", n.toString(),
        "--mode", "time", "--serve", replica.toString(), "--requests", requests.toString());
    assertEquals(2, noSlo.status());
    assertTrue(noSlo.err().contains("--ttft-slo"), noSlo.err());
    Result badReplicas = run("schedule", "--trace", p.toString(), "--cluster", n.toString(),
        "--mode", "time", "--serve", replica.toString(), "--requests", requests.toString(),
        "--ttft-slo", "2", "--tpot-slo", "0.1", "--replicas", "3-1");
    assertEquals(2, badReplicas.status());
    assertTrue(badReplicas.err().contains("--replicas (max)"), badReplicas.err());
    Result share = run("schedule", "--trace", p.toString(), "--cluster", n.toString(),
        "--mode", "time", "--serve", replica.toString(), "--requests", requests.toString(),
        "--ttft-slo", "2", "--tpot-slo", "0.1", "--serve-share", "500");
    assertEquals(2, share.status());
    assertTrue(share.err().contains("--serve-share: a slice of one GPU needs tp = pp = 1"),
        share.err());
    Result wrongMode = run("schedule", "--trace", p.toString(), "--cluster", n.toString(),
        "--serve", replica.toString(), "--requests", requests.toString());
    assertEquals(2, wrongMode.status());
    assertTrue(wrongMode.err().contains("only in --mode time"), wrongMode.err());
  }

  @Test
  void emitWritesTheImageAndTheManifests() throws IOException {
    String deepspeed = write("ds.json", """
        {"model": {"catalog": "gpt3-175b"},
         "cluster": {"template": "dgx-a100", "devices": 384},
         "workload": {"type": "training", "precision": "bf16-mixed", "globalBatchSize": 1536,
                      "trainingTokens": 3e11},
         "layout": {"tp": 4, "pp": 12, "dp": 8, "engine": "deepspeed", "zeroStage": 1}}
        """).toString();
    Path image = dir.resolve("image");
    Result d = run("plan", "--request", deepspeed, "--emit", "dockerfile", "--out",
        image.toString(), "--no-progress");
    assertEquals(0, d.status(), d.err());
    assertTrue(Files.readString(image.resolve("Dockerfile")).contains("deepspeed=="));
    assertTrue(Files.readString(image.resolve(".dockerignore")).contains(".git"));
    assertEquals(1, Json.parseObject("ds", Files.readString(image.resolve("ds_config.json")))
        .at("/zero_optimization/stage").asInt());
    Path manifests = dir.resolve("k8s");
    Result k = run("plan", "--request", deepspeed, "--emit", "jobset", "--out",
        manifests.toString(), "--name", "gpt3", "--gang", "kueue", "--queue", "team-a",
        "--image", "registry.example.com/gpt3:1", "--no-progress");
    assertEquals(0, k.status(), k.err());
    String yaml = Files.readString(manifests.resolve("gpt3.yaml"));
    assertTrue(yaml.contains("kind: \"JobSet\"") && yaml.contains("kueue.x-k8s.io/queue-name")
        && yaml.contains("registry.example.com/gpt3:1") && yaml.contains("kind: \"ConfigMap\""),
        yaml);
    assertTrue(k.err().contains("48 pods x 8 GPUs = 384 devices"), k.err());
    Result serve = run("plan", "--request", Path.of("..", "examples", "serve-70b-slo.json")
        .toString(), "--emit", "kubernetes");
    assertEquals(0, serve.status(), serve.err());
    assertTrue(serve.out().contains("kind: \"Deployment\"")
        && serve.out().contains("name: \"hyperframes-serve\""), serve.out());
    Result bad = run("plan", "--request", Path.of("..", "examples", "serve-70b-slo.json")
        .toString(), "--emit", "dockerfile");
    assertEquals(2, bad.status());
    assertTrue(bad.err().contains("kubernetes"), bad.err());
    Result outText = run("plan", "--request", deepspeed, "--emit", "deepspeed", "--out",
        dir.toString(), "--no-progress");
    assertEquals(2, outText.status());
    assertEquals(2, run("plan", "--request", deepspeed, "--emit", "kubernetes", "--gang",
        "slurm", "--no-progress").status());
  }

  @Test
  void emitRefusesAMaxTextLayout() throws IOException {
    String request = write("maxtext.json", """
        {"model": {"catalog": "llama2-7b"},
         "cluster": {"accelerator": "h100-sxm-80gb", "devices": 16},
         "workload": {"type": "training", "precision": "bf16-mixed", "globalBatchSize": 64,
                      "trainingTokens": 1e11},
         "layout": {"tp": 1, "pp": 1, "zeroStage": 3, "engine": "maxtext"}}
        """).toString();
    for (String target : List.of("megatron", "deepspeed", "torchrun", "dockerfile",
        "kubernetes", "jobset")) {
      Result r = run("plan", "--request", request, "--emit", target, "--no-progress");
      assertEquals(2, r.status(), r.out());
      assertTrue(r.err().contains("layout.engine is maxtext"), r.err());
    }
    Result plain = run("plan", "--request", request, "--no-progress");
    assertEquals(0, plain.status(), plain.err());
  }

  @Test
  void inferenceEstimateJsonHasTheContractFields() throws IOException {
    Result r = run("estimate", "--request", write("i.json", """
        {"model": {"catalog": "llama2-7b"}, "cluster": {"accelerator": "a100-sxm-80gb",
         "devices": 1}, "workload": {"type": "inference", "precision": "fp16", "batchSize": 8,
         "promptTokens": 512, "outputTokens": 128}}
        """).toString(), "--format", "json");
    assertEquals(0, r.status(), r.err());
    JsonNode json = Json.parseObject("output", r.out());
    assertTrue(json.has("feasible") && json.has("memory") && json.has("findings"));
    for (String f : List.of("prefillSeconds", "decodeSecondsPerToken", "ttftSeconds",
        "tpotSeconds", "totalSeconds", "outputTokensPerSecondPerDevice", "kvCacheBytesPerToken",
        "kvCacheBytesPerSequence", "maxBatchSize", "p50LatencySeconds", "p99LatencySeconds",
        "devicesNeeded")) {
      assertTrue(json.get("inference").has(f), "missing inference." + f);
    }
    assertEquals(524288.0, json.get("inference").get("kvCacheBytesPerToken").asDouble(), 0.0);
  }

  @Test
  void servingPlanPrintsTheBestConfiguration() throws IOException {
    Result r = run("plan", "--request", write("s.json", """
        {"model": {"catalog": "llama2-7b"}, "cluster": {"accelerator": "a100-sxm-80gb",
         "devices": 1}, "workload": {"type": "inference", "precision": "fp16", "batchSize": 1,
         "promptTokens": 256, "outputTokens": 64, "arrivalRatePerSecond": 10,
         "latencySlo": {"ttftSeconds": 0.5, "percentile": 99}}}
        """).toString(), "--format", "json", "--no-progress");
    assertEquals(0, r.status(), r.err());
    JsonNode json = Json.parseObject("output", r.out());
    assertTrue(json.get("feasible").asBoolean());
    assertTrue(json.get("best").get("devices").asInt() >= 1);
    assertTrue(json.get("inference").has("p99LatencySeconds"));
  }

  @Test
  void datasetEncodeWritesAMappableFile() throws IOException {
    Path csv = write("d.csv", "1,2,0\n3,4,1\n5,6,1\n");
    Path out = dir.resolve("d.hfds");
    Result r = run("dataset", "encode", "--csv", csv.toString(), "--out", out.toString(),
        "--classes", "2");
    assertEquals(0, r.status(), r.err());
    assertTrue(r.out().contains("encoded 3 rows"), r.out());
    assertTrue(Files.size(out) > 24);
    Result bad = run("dataset", "encode", "--csv", write("b.csv", "1,x,0\n").toString(),
        "--out", dir.resolve("b.hfds").toString(), "--classes", "2");
    assertEquals(2, bad.status());
    assertTrue(bad.err().contains("line 1"), bad.err());
  }

  @Test
  void probeWritesAProfileThatEstimateAndBenchTrainUse() throws IOException {
    Path profile = dir.resolve("profile.json");
    Result probe = run("probe", "--seconds", "2", "--out", profile.toString(), "--format",
        "json");
    assertEquals(0, probe.status(), probe.err());
    JsonNode p = Json.parseObject("probe", probe.out());
    assertEquals("hyperframes.profile/1", p.get("schema").asText());
    for (String m : List.of("matmul.bf16.256x2048x2048", "matmul.fp32.256x2048x784",
        "memory.triad", "memory.copy", "dense.backward.bf16.256x2048x2048",
        "optimizer.adam.fp32.4194304", "loader.workers2.samplesPerSecondPerWorker")) {
      boolean found = false;
      for (JsonNode n : p.get("measurements")) {
        if (n.get("name").asText().equals(m)) {
          found = n.get("median").asDouble() > 0 && n.get("low").asDouble() <= n.get("median")
              .asDouble() && n.get("samples").size() >= 1;
        }
      }
      assertTrue(found, "missing or malformed measurement " + m);
    }
    assertEquals("host", p.get("catalog").get("accelerators").get(0).get("id").asText());
    // 9 matmul shapes x 2 formats, 3 layers x forward/backward x 2 formats, the optimizer,
    // copy, triad, and the loader with 1 and 2 workers.
    assertEquals(9 * 2 + 3 * 2 * 2 + 1 + 2 + 2, p.get("measurements").size());
    double fraction = p.get("catalog").get("kernels").get(0).get("optimizerBandwidthFraction")
        .asDouble();
    assertTrue(fraction > 0 && fraction <= 1, "optimizerBandwidthFraction " + fraction);
    String request = StepPrediction.request("host-node", "bf16-mixed");
    Result e = run("estimate", "--profile", profile.toString(), "--request",
        write("mlp.json", request).toString(), "--format", "json");
    assertEquals(0, e.status(), e.err());
    double step = Json.parseObject("estimate", e.out()).get("time").get("stepSeconds")
        .asDouble();
    assertTrue(step > 0 && step < 10, e.out());
    // Without the profile the host is unknown: a clear error naming it.
    Result unknown = run("estimate", "--request", write("mlp2.json", request).toString());
    assertEquals(2, unknown.status());
    assertTrue(unknown.err().contains("host-node"), unknown.err());

    Result train = run("bench", "train", "--no-compare-default", "--no-djl", "--rows", "512",
        "--epochs", "1", "--predict", "--profile", profile.toString(), "--format", "json");
    assertEquals(0, train.status(), train.err());
    JsonNode t = Json.parseObject("train", train.out());
    assertFalse(t.has("djlPytorch"), "--no-djl is honoured");
    assertFalse(t.has("default"), "--no-compare-default is honoured");
    // The run against the machine's own limit, measured in the same run.
    JsonNode limit = t.get("limit");
    assertEquals(6.0 * (784 * 2048 + 2048 * 2048 + 2048 * 10),
        limit.get("flopsPerSample").asDouble());
    assertEquals(t.get("hyperframes").get("samplesPerSecond").asDouble()
        * limit.get("flopsPerSample").asDouble() / 1e9, limit.get("gflopsPerSecond").asDouble(),
        1e-6);
    assertTrue(limit.get("matmulLimitGflops").asDouble() > 0, limit.toString());
    assertEquals(limit.get("gflopsPerSecond").asDouble()
        / limit.get("matmulLimitGflops").asDouble(), limit.get("fractionOfLimit").asDouble(),
        1e-12);
    JsonNode pr = t.get("prediction");
    for (String f : List.of("measuredStepSeconds", "profileStepSeconds", "genericStepSeconds")) {
      assertTrue(pr.get(f).asDouble() > 0, f + " in " + pr);
    }
    assertEquals(pr.get("profileStepSeconds").asDouble() / pr.get("measuredStepSeconds")
        .asDouble() - 1, pr.get("profileError").asDouble(), 1e-9);
    // The profile's prediction is the planner's compute and optimizer plus the loader's CPU
    // time per batch from the profile's loader rate; the spec sheet measured no loader.
    JsonNode parts = pr.get("parts");
    double loader = parts.get("profile").get("loaderSeconds").asDouble();
    assertTrue(loader > 0, parts.toString());
    assertEquals(0.0, parts.get("generic").get("loaderSeconds").asDouble());
    assertEquals(pr.get("profileStepSeconds").asDouble(), parts.get("profile")
        .get("computeSeconds").asDouble() + parts.get("profile").get("optimizerSeconds")
        .asDouble() + loader, 1e-12);
    assertEquals(2, run("bench", "train", "--profile", profile.toString()).status(),
        "--profile without --predict");
    assertEquals(2, run("bench", "train", "--precision", "fp8").status());
  }

  @Test
  void thePredictionComparesWithTheStepsAfterTheFirstEpoch() {
    double[] steps = {9, 9, 1, 2, 3, 4};
    assertArrayEquals(new double[] {2, 3, 4},
        StepPrediction.steadySteps(steps, 2));
    assertArrayEquals(new double[] {1, 2, 3, 4}, StepPrediction.steadySteps(steps, 3));
    assertArrayEquals(steps, StepPrediction.steadySteps(steps,
        1));
    assertArrayEquals(new double[] {1}, StepPrediction
        .steadySteps(new double[] {1}, 3), "fewer steps than epochs: all of them");
  }

  @Test
  void compareCatchesTheFusedKernelsSwitchedOff() throws IOException {
    Path fused = dir.resolve("fused.json");
    Path unfused = dir.resolve("unfused.json");
    for (Path rec : List.of(fused, unfused)) {
      List<String> args = new java.util.ArrayList<>(List.of("bench", "train",
          "--no-compare-default", "--no-djl", "--rows", "2048", "--epochs", "1", "--record",
          rec.toString()));
      if (rec == unfused) {
        args.add("--no-fused-kernels");
      }
      Result r = run(args.toArray(String[]::new));
      assertEquals(0, r.status(), r.err());
    }
    Result same = run("compare", fused.toString(), fused.toString());
    assertEquals(0, same.status(), same.out());
    Result worse = run("compare", fused.toString(), unfused.toString());
    assertEquals(1, worse.status(), worse.out());
    Result html = run("compare", fused.toString(), unfused.toString(), "--format", "html");
    assertEquals(1, html.status(), html.err());
    assertTrue(html.out().startsWith("<!DOCTYPE html>") && html.out().contains("<svg")
        && html.out().contains("Regression") && !html.out().contains("<script")
        && !html.out().contains(" src=") && !html.out().contains("href="),
        "self-contained with charts");
    assertTrue(worse.out().contains("hyperframes.stepSeconds"), worse.out());
    assertTrue(worse.out().contains("fusedKernels"), "the differing condition is named: "
        + worse.out());
  }

  @Test
  void benchTrainAndInferPrintTheirContracts() throws IOException {
    // The flag as the issue writes it: with picocli a negatable option defaulting to true used
    // to turn itself off when given.
    Path recorded = write("train-record.json", "");
    Result train = run("bench", "train", "--compare-default", "--rows", "512", "--epochs", "1",
        "--format", "json", "--record", recorded.toString());
    assertEquals(0, train.status(), train.err());
    var rec = io.hyperframes.runtime.BenchmarkRecord.read(recorded);
    assertEquals(2, rec.metrics().get("hyperframes.stepSeconds").samples().length, "512 rows");
    assertTrue(rec.metrics().containsKey("default.samplesPerSecond"), rec.metrics().keySet()
        .toString());
    assertEquals("bench train", rec.conditions().get("command"));
    assertEquals(0, run("compare", recorded.toString(), recorded.toString()).status());
    JsonNode t = Json.parseObject("train", train.out());
    for (String side : List.of("default", "hyperframes")) {
      for (String f : List.of("samplesPerSecond", "dataWaitShare", "finalLoss", "accuracy")) {
        assertTrue(t.get(side).has(f), "missing " + side + "." + f);
      }
    }
    assertTrue(t.has("speedup") && t.get("ablations").has("loaderOnly")
        && t.get("ablations").has("kernelsOnly") && t.get("ablations").has("dl4jAccelerated"));
    // DJL on PyTorch, offline, in the same run
    assertTrue(t.get("djlPytorch").get("samplesPerSecond").asDouble() > 0, t.toString());
    double djlAccuracy = t.get("djlPytorch").get("accuracy").asDouble();
    assertTrue(djlAccuracy >= 0 && djlAccuracy <= 1, t.toString()); // 512 rows: barely trained
    assertTrue(t.get("djlSpeedup").asDouble() > 0);
    Path inferRecord = dir.resolve("infer-record.json");
    Result infer = run("bench", "infer", "--runs", "20", "--format", "json", "--record",
        inferRecord.toString());
    assertEquals(0, infer.status(), infer.err());
    assertRecord(inferRecord, "bench infer", "batch1.hyperframes.seconds", 20);
    assertRecord(inferRecord, "bench infer", "batch32.djlPytorch.seconds", 20);
    JsonNode i = Json.parseObject("infer", infer.out());
    assertTrue(i.get("default").has("p50Seconds") && i.get("hyperframes").has("p99Seconds")
        && i.has("p99Reduction") && i.get("dl4jAccelerated").has("p99Seconds"));
    assertEquals("auto", i.get("precisionRequested").asText());
    assertEquals(io.hyperframes.nd4j.Kernels.cpu().nativeBf16() ? "bf16" : "fp32",
        i.get("precision").asText(), "the fused layers run the faster precision here");
    assertEquals(i.get("precision").asText(),
        io.hyperframes.runtime.BenchmarkRecord.read(inferRecord).conditions().get("precision"));
    for (JsonNode o : List.of(i, i.get("batch1"))) {
      assertTrue(o.get("djlPytorch").get("p50Seconds").asDouble() > 0, o.toString());
      assertTrue(o.get("djlPytorch").get("p99Seconds").asDouble() > 0, o.toString());
      assertTrue(o.get("djlP99Ratio").asDouble() > 0, o.toString());
    }
  }

  @Test
  void benchAdaptersPrintsItsFigures() {
    Path rec = dir.resolve("adapters-record.json");
    Result r = run("bench", "adapters", "--rows", "1024", "--rounds", "3", "--sample-micros",
        "5", "--format", "json", "--record", rec.toString());
    assertEquals(0, r.status(), r.err());
    assertRecord(rec, "bench adapters", "djl.metered.epochSeconds", 3);
    assertRecord(rec, "bench adapters", "samediff.slowData.wait.prefetching.epochSeconds", 3);
    JsonNode d = Json.parseObject("adapters", r.out()).get("djl");
    for (String v : List.of("easyTrain", "metered", "djlTrainer", "djlTrainerNoGuard")) {
      assertTrue(d.get(v).get("samplesPerSecond").asDouble() > 0, v + ": " + d);
    }
    assertTrue(d.get("metering").get("nanosPerStep").asDouble() >= 0, d.toString());
    JsonNode sd = Json.parseObject("adapters", r.out()).get("samediff");
    assertTrue(sd.get("metered").get("samplesPerSecond").asDouble() > 0, sd.toString());
    assertTrue(sd.get("metering").get("nanosPerStep").asDouble() >= 0, sd.toString());
    for (String k : List.of("cpu", "cpuSpareCores", "wait")) {
      assertTrue(d.get("slowData").get(k).get("speedup").asDouble() > 0, k + ": " + d);
      assertTrue(sd.get("slowData").get(k).get("speedup").asDouble() > 0, k + ": " + sd);
    }
    assertEquals(2, run("bench", "adapters", "--rounds", "1").status());
  }

  @Test
  void planWithoutAModelExitsTwo() {
    Result r = run("plan", "--accelerator", "a100-sxm-80gb", "--devices", "8");
    assertEquals(2, r.status());
    assertTrue(r.err().contains("--model"), r.err());
  }

  @Test
  void unknownOptionExitsTwo() {
    assertEquals(2, run("estimate", "--frobnicate").status());
  }
  /**
   * Two fits in a chain: the second, started from the first's override, writes a file that keeps
   * the first's fitted accelerator (H200's memory efficiency) beside its own kernel constants,
   * and the catalog read from it has both.
   */
  @Test
  void chainedCalibrationKeepsTheEarlierFit() throws IOException {
    JsonNode all = Json.parseObject("cases", Files.readString(
        Path.of("..", "docs", "validation", "serving-cases.json")));
    StringBuilder h200 = new StringBuilder("{\"cases\": [");
    StringBuilder h100 = new StringBuilder("{\"cases\": [");
    for (JsonNode c : all.get("cases")) {
      String id = c.get("id").asText();
      if (id.equals("trtllm09-llama2-70b-h200-fp8-tp1-b64-2048-128")
          || id.equals("trtllm09-llama2-7b-h200-fp8-tp1-b1-ttft-128")) {
        h200.append(h200.length() > 11 ? "," : "").append(c);
      } else if (id.equals("trtllm09-llama2-70b-h100-fp8-tp2-b64-2048-2048")) {
        h100.append(c);
      }
    }
    Path first = dir.resolve("first.json");
    Path second = dir.resolve("second.json");
    Result a = run("calibrate", "--cases", write("h200.json", h200 + "]}").toString(),
        "--fit", "memory", "--out", first.toString());
    assertEquals(0, a.status(), a.err());
    assertTrue(a.out().contains("h200-sxm-141gb") && a.out().contains("memoryEfficiency"),
        a.out());
    Result b = run("calibrate", "--cases", write("h100.json", h100 + "]}").toString(),
        "--fit", "serving-overhead", "--catalog", first.toString(), "--out", second.toString());
    assertEquals(0, b.status(), b.err());
    assertTrue(b.out().contains("keeps the entries of"), b.out());
    var firstCatalog = io.hyperframes.catalog.Catalog.builtIn().withOverrides(first);
    var chained = io.hyperframes.catalog.Catalog.builtIn().withOverrides(second);
    assertEquals(firstCatalog.accelerators().get("h200-sxm-141gb").memoryEfficiency(),
        chained.accelerators().get("h200-sxm-141gb").memoryEfficiency(), 1e-12);
    assertTrue(Math.abs(chained.accelerators().get("h200-sxm-141gb").memoryEfficiency() - 0.85)
        > 1e-6, "the first fit moved H200's fraction");
    JsonNode written = Json.parseObject("second", Files.readString(second));
    assertEquals(1, written.get("accelerators").size());
    assertTrue(written.get("kernels").size() >= 1);
    // Provenance: each fitted field names the case sources it was fitted on, and a
    // leave-one-source-out on that catalog labels those sources in sample.
    assertTrue(written.at("/accelerators/0/fittedOn/memoryEfficiency").isArray(),
        written.toString());
    String kernelSources = written.at("/kernels/0/fittedOn/servingLayerOverheadUs").toString();
    assertTrue(kernelSources.contains("trtllm09"), kernelSources);
    assertTrue(io.hyperframes.calibrate.Calibration.inSampleSources(chained,
        java.util.EnumSet.noneOf(io.hyperframes.calibrate.Calibration.Constant.class),
        java.util.Map.of()).get("trtllm09").stream()
        .anyMatch(w -> w.endsWith(".servingLayerOverheadUs")));
    Result bad = run("calibrate", "--cases", first.toString(), "--fit", "hbm");
    assertEquals(2, bad.status());
    assertTrue(bad.err().contains("'hbm'") && bad.err().contains("memory"), bad.err());
  }
}
