package io.hyperframes.cli;

import com.fasterxml.jackson.core.JsonProcessingException;
import io.hyperframes.HyperFrames;
import io.hyperframes.ServeBuilder;
import io.hyperframes.catalog.Catalog;
import io.hyperframes.inference.Serving;
import io.hyperframes.inference.ServingPlans;
import io.hyperframes.json.Json;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code hyperframes serve-plan}: search serving configurations (tensor and expert parallelism,
 * weight and KV-cache formats, batch limit, replicas) for the fewest devices that meet a latency
 * SLO at a request rate; the same search as {@code plan} with an inference workload and
 * {@code HyperFrames.serve().plan()}.
 */
@Command(name = "serve-plan", mixinStandardHelpOptions = true,
    description = "Search serving configurations (tp, ep, formats, batch limit, replicas) for the"
        + " fewest devices that meet a TTFT/TPOT SLO at a request rate; print the best, the"
        + " alternatives and the throughput-interactivity front, or emit its launch.")
final class ServePlanCommand implements Callable<Integer> {

  @Spec CommandSpec spec;

  @Option(names = "--request", paramLabel = "FILE",
      description = "Serving plan request JSON (an inference request with arrivalRatePerSecond"
          + " and latencySlo, plus constraints, pricing, search). Or use the short options.")
  Path request;

  @Option(names = "--model", paramLabel = "ID", description = "Catalog model id.")
  String model;

  @Option(names = "--accelerator", paramLabel = "ID", description = "Catalog accelerator id.")
  String accelerator;

  @Option(names = "--rate", paramLabel = "PER_SECOND",
      description = "Requests per second (Poisson arrivals).")
  Double rate;

  @Option(names = "--prompt", paramLabel = "TOKENS", description = "Prompt tokens a request.")
  Integer prompt;

  @Option(names = "--output", paramLabel = "TOKENS", description = "Output tokens a request.")
  Integer output;

  @Option(names = "--ttft", paramLabel = "SECONDS",
      description = "Time-to-first-token target at --percentile.")
  Double ttft;

  @Option(names = "--tpot", paramLabel = "SECONDS", description = "Time-per-output-token target.")
  Double tpot;

  @Option(names = "--percentile", defaultValue = "99", paramLabel = "P",
      description = "Percentile of the TTFT target (default 99).")
  double percentile;

  @Option(names = "--precision", defaultValue = "fp16", paramLabel = "FORMAT",
      description = "Weight format when --weight-formats is not given (default fp16).")
  String precision;

  @Option(names = "--weight-formats", split = ",", paramLabel = "FORMAT",
      description = "Weight formats to search (fp16, bf16, fp8, int8, int4, nvfp4).")
  List<String> weightFormats;

  @Option(names = "--kv-formats", split = ",", paramLabel = "FORMAT",
      description = "KV-cache formats to search (fp16, bf16, fp8, nvfp4).")
  List<String> kvFormats;

  @Option(names = "--price", paramLabel = "USD",
      description = "Price per device-hour (default: the catalog's list price).")
  Double price;

  @Option(names = "--alternatives", paramLabel = "N",
      description = "Runner-up configurations to report (default 5).")
  Integer alternatives;

  @Mixin Catalogs catalogs;

  private Format format = Format.table;

  @Option(names = "--format", defaultValue = "table", paramLabel = "FORMAT",
      description = "table (default), json or html (self-contained, with the front as a chart).")
  void format(Format value) {
    format = FormatOption.check(spec, value, Format.table, Format.json, Format.html);
  }

  enum Engine { vllm, sglang, trtllm, kubernetes, dynamo }

  @Option(names = "--emit", paramLabel = "TARGET",
      description = "Print what launches the plan instead of the report: vllm, sglang or trtllm"
          + " (one replica's launch line) or kubernetes (a vLLM Deployment) of the best"
          + " aggregated configuration, or dynamo (a Dynamo DynamoGraphDeployment of the best"
          + " disaggregated one) (docs/launch.md).")
  Engine emit;

  @Mixin LaunchOption launch;

  @Override
  public Integer call() throws JsonProcessingException {
    Catalog c = catalogs.load();
    String json = request != null ? Files2.read("--request", request) : shortForm(c);
    var root = Json.parseObject("request", json);
    if (!Serving.isInference(root)) {
      throw new IllegalArgumentException("workload.type: serve-plan plans serving, so the"
          + " request's workload must be of type inference (plan --request plans training)");
    }
    ServingPlans.Result result = ServingPlans.plan(root, c);
    if (emit != null) {
      return ServingPlanOutput.emit(launch, result, emit.name());
    }
    ServingPlanOutput.print(spec.commandLine().getOut(), result, format);
    return 0;
  }

  /** The request the short options describe, written by the Java builder. */
  private String shortForm(Catalog c) {
    String missing = model == null ? "--model" : accelerator == null ? "--accelerator"
        : rate == null ? "--rate" : prompt == null ? "--prompt" : output == null ? "--output"
        : ttft == null && tpot == null ? "--ttft or --tpot" : null;
    if (missing != null) {
      throw new IllegalArgumentException("serve-plan: give --request FILE, or --model,"
          + " --accelerator, --rate, --prompt, --output and --ttft or --tpot (missing "
          + missing + ")");
    }
    // One node: the search spreads a replica over up to a node's devices.
    int node = c.node("--accelerator", c.accelerator("--accelerator", accelerator).defaultNode())
        .devicesPerNode();
    ServeBuilder b = HyperFrames.serve().model(model).accelerator(accelerator).devices(node)
        .precision(precision).batch(1).prompt(prompt).output(output).arrivalRate(rate);
    if (ttft != null) {
      b = b.latencySlo(seconds("--ttft", ttft), percentile);
    }
    if (tpot != null) {
      b = b.timePerOutputToken(seconds("--tpot", tpot));
    }
    if (weightFormats != null) {
      b = b.weightFormats(weightFormats.toArray(String[]::new));
    }
    if (kvFormats != null) {
      b = b.kvFormats(kvFormats.toArray(String[]::new));
    }
    if (price != null) {
      b = b.pricePerDeviceHour(price);
    }
    if (alternatives != null) {
      b = b.alternatives(alternatives);
    }
    return b.toJson();
  }

  private static Duration seconds(String option, double value) {
    if (!(value > 0) || Double.isInfinite(value)) {
      throw new IllegalArgumentException(option + ": must be a positive number of seconds, got "
          + value);
    }
    return Duration.ofNanos(Math.round(value * 1e9));
  }
}
