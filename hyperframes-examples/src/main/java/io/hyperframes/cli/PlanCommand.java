package io.hyperframes.cli;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.hyperframes.PlanRequests;
import io.hyperframes.diagnose.Finding;
import io.hyperframes.catalog.Catalog;
import io.hyperframes.json.Json;
import io.hyperframes.launch.LaunchConfigs;
import io.hyperframes.plan.Candidate;
import io.hyperframes.plan.Plan;
import io.hyperframes.plan.PlanJson;
import io.hyperframes.plan.PlanListener;
import io.hyperframes.plan.PlanRequest;
import io.hyperframes.plan.Planner;
import io.hyperframes.plan.GoldenParameter;
import java.nio.file.Path;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** {@code hyperframes plan}: search layouts for the best plan. */
@Command(name = "plan", mixinStandardHelpOptions = true,
    description = "Search parallel layouts, batch and precision for the fastest (or cheapest)"
        + " plan; print it with alternatives, cost, golden parameters and findings.")
final class PlanCommand implements Callable<Integer> {

  @Spec CommandSpec spec;

  @Option(names = "--request", paramLabel = "FILE",
      description = "Plan request JSON (the estimate request plus constraints, objective,"
          + " pricing, search). Or use the short options below.")
  Path request;

  @Option(names = "--model", paramLabel = "ID", description = "Catalog model id.")
  String model;

  @Option(names = "--model-config", paramLabel = "FILE",
      description = "A Hugging Face config.json instead of --model (Llama, Mistral, Qwen2,"
          + " Qwen3, Mixtral, Qwen3-MoE, DeepSeek-V3, gpt-oss, Llama 4, Gemma 2/3; with"
          + " --seq-len).")
  Path modelConfig;

  @Option(names = "--seq-len", paramLabel = "TOKENS",
      description = "Training sequence length: required with --model-config; with --model,"
          + " the catalog model at this length (default its own).")
  Integer seqLen;

  @Option(names = "--accelerator", paramLabel = "ID", description = "Catalog accelerator id.")
  String accelerator;

  @Option(names = "--devices", paramLabel = "N[-M]", description = "Device count or range.")
  String devices;

  @Option(names = "--tokens", paramLabel = "TOKENS", description = "Training tokens (2e12).")
  Double tokens;

  @Option(names = "--global-batch", paramLabel = "SEQUENCES",
      description = "Global batch in sequences (default: chosen, up to ~4M tokens).")
  Integer globalBatch;

  @Option(names = "--precision", defaultValue = "bf16-mixed",
      description = "fp32, tf32, fp16-mixed, bf16-mixed or fp8-mixed (default bf16-mixed).")
  String precision;

  @Option(names = "--engine", paramLabel = "ENGINE",
      description = "megatron, deepspeed, fsdp or maxtext (layout.engine; default: Megatron-LM,"
          + " DeepSpeed and FSDP are searched and the winner reported).")
  String engine;

  @Option(names = "--objective", defaultValue = "time",
      description = "time (default), cost, throughput or devices.")
  String objective;

  @Option(names = "--deadline-days", paramLabel = "DAYS",
      description = "Latest acceptable training time (objective devices).")
  Double deadlineDays;

  @Option(names = "--price", paramLabel = "USD",
      description = "Price per device-hour (default: the catalog's list price).")
  Double price;

  @Mixin Catalogs catalogs;

  @Option(names = "--format", defaultValue = "table",
      description = "table (default), json, markdown or html (self-contained, with charts).")
  Format format;

  enum Engine { megatron, deepspeed, torchrun, dockerfile, kubernetes, jobset, vllm, sglang,
    trtllm, dynamo }

  @Option(names = "--emit", paramLabel = "TARGET",
      description = "Print what launches the best plan instead of the report: megatron"
          + " (pretrain_gpt.py arguments), deepspeed (config JSON), torchrun (launch line),"
          + " dockerfile (layered image: base, framework, code), kubernetes (Kubeflow"
          + " PyTorchJob; a vLLM Deployment for serving) or jobset (JobSet); for a serving plan"
          + " also vllm, sglang or trtllm (one replica's launch line) or dynamo (a Dynamo"
          + " disaggregated deployment) (docs/launch.md).")
  Engine emit;

  @Option(names = "--script", defaultValue = "train.py",
      description = "Training script of an FSDP image (default train.py).")
  String script;

  @Mixin LaunchOption launch;

  @Option(names = "--progress", negatable = true, defaultValue = "true", fallbackValue = "true",
      description = "Show a progress bar on a terminal (default on).")
  boolean progress;

  @Override
  public Integer call() throws JsonProcessingException {
    Catalog c = catalogs.load();
    String json = request != null ? Files2.read("--request", request) : shortForm();
    var root = Json.parseObject("request", json);
    if (io.hyperframes.inference.Serving.isInference(root)) {
      var result = io.hyperframes.inference.ServingPlans.plan(root, c);
      if (emit != null) {
        return ServingPlanOutput.emit(launch, result, emit.name());
      }
      ServingPlanOutput.print(spec.commandLine().getOut(), result, format);
      return 0;
    }
    // The plan is what launches: --emit writes the best plan as reported, for the engine that
    // won (Launch.training rejects a target that cannot launch that engine, naming both).
    PlanRequest r = PlanRequests.parse(json, c);
    Plan plan;
    boolean bar = progress && System.console() != null;
    if (bar) {
      try (ProgressBars.Bar b = ProgressBars.start("planning")) {
        plan = Planner.analytical().plan(r, b);
      }
    } else {
      plan = Planner.analytical().plan(r, PlanListener.NONE);
    }
    var out = spec.commandLine().getOut();
    if (emit != null) {
      launch.noBackend(emit.name());
      io.hyperframes.launch.LaunchOptions options = launch.options("hyperframes-train", script);
      LaunchConfigs.Emitted e = io.hyperframes.launch.Launch.training(plan,
          io.hyperframes.launch.Target.fromId("--emit", emit.name()), options);
      if (!plan.feasible()) {
        spec.commandLine().getErr().println("note: the plan is not feasible: "
            + String.join("; ", plan.reasons()));
      }
      if (emit == Engine.dockerfile && launch.out() != null
          && plan.best().estimate().layout().engine() == io.hyperframes.parallel.Engine.DEEPSPEED) {
        try {
          java.nio.file.Files.createDirectories(launch.out());
          java.nio.file.Files.writeString(launch.out().resolve("ds_config.json"),
              io.hyperframes.launch.Launch.training(plan, io.hyperframes.launch.Target.DEEPSPEED,
                  options).text());
        } catch (java.io.IOException x) {
          throw new java.io.UncheckedIOException("--out: cannot write " + launch.out(), x);
        }
      }
      return launch.write(e, emit == Engine.dockerfile ? "dockerfile"
          : emit == Engine.kubernetes || emit == Engine.jobset ? "yaml" : "text", options);
    }
    switch (format) {
      case json -> out.println(Json.mapper().writerWithDefaultPrettyPrinter()
          .writeValueAsString(PlanJson.toJson(plan)));
      case markdown -> out.print(markdown(r, plan));
      case table -> out.print(table(r, plan));
      case html -> out.print(io.hyperframes.report.HtmlReport.render(plan, String.format(
          Locale.ROOT, "HyperFrames plan: %s on %s", r.model().name(),
          r.cluster().accelerator().id()), r.cluster().accelerator().memoryBytes()));
    }
    out.flush();
    return 0;
  }

  private String shortForm() {
    if ((model == null && modelConfig == null) || accelerator == null || devices == null) {
      throw new IllegalArgumentException("plan: give --request FILE, or --model (or"
          + " --model-config), --accelerator and --devices (missing "
          + (model == null && modelConfig == null ? "--model"
              : accelerator == null ? "--accelerator" : "--devices") + ")");
    }
    if (model != null && modelConfig != null) {
      throw new IllegalArgumentException("--model-config: give either --model or --model-config,"
          + " not both");
    }
    // The short options are the Java builder's fields; the request it writes is the one the
    // rest of this command runs (same checks, same messages as --request).
    io.hyperframes.PlanBuilder b = io.hyperframes.HyperFrames.plan();
    if (modelConfig != null) {
      if (seqLen == null) {
        throw new IllegalArgumentException("--seq-len: required with --model-config (the"
            + " training sequence length)");
      }
      b = b.model(io.hyperframes.model.ModelSpecs.fromHuggingFace("--model-config",
          Json.parseObject("--model-config", Files2.read("--model-config", modelConfig)),
          modelConfig.getFileName().toString().replaceFirst("\\.json$", ""), seqLen));
    } else {
      b = b.model(model);
      if (seqLen != null) {
        b = b.seqLen(seqLen);
      }
    }
    b = b.accelerator(accelerator);
    if (devices.contains("-")) {
      String[] range = devices.split("-", -1);
      try {
        b = b.devices(Integer.parseInt(range[0].trim()), Integer.parseInt(range[1].trim()));
      } catch (NumberFormatException | ArrayIndexOutOfBoundsException e) {
        throw new IllegalArgumentException("cluster.devices: '" + devices + "' is neither a"
            + " count nor a range N-M", e);
      }
    } else {
      try {
        b = b.devices(Integer.parseInt(devices.trim()));
      } catch (NumberFormatException e) {
        throw new IllegalArgumentException("--devices: '" + devices + "' is neither a count nor"
            + " a range N-M", e);
      }
    }
    b = b.training(t -> {
      io.hyperframes.TrainingSpec x = t.precision(precision);
      x = tokens != null ? x.tokens(tokens) : x;
      return globalBatch != null ? x.globalBatchSize(globalBatch) : x;
    });
    if (engine != null) {
      io.hyperframes.parallel.Engine e = io.hyperframes.parallel.Engine.fromId("--engine", engine);
      b = b.layout(l -> l.engine(e));
    }
    b = b.minimize(io.hyperframes.plan.Objective.fromId("--objective", objective));
    if (deadlineDays != null) {
      b = b.deadlineDays(deadlineDays);
    }
    if (price != null) {
      b = b.pricePerDeviceHour(price);
    }
    return b.toJson();
  }

  static String table(PlanRequest r, Plan plan) {
    StringBuilder b = new StringBuilder();
    Candidate best = plan.best();
    b.append(String.format(Locale.ROOT,
        "HyperFrames plan: %s on %s, %s devices, objective %s%n", r.model().name(),
        r.cluster().accelerator().id(), r.minDevices() == r.maxDevices()
            ? String.valueOf(r.minDevices()) : r.minDevices() + "-" + r.maxDevices(),
        plan.objective().id()));
    b.append(String.format(Locale.ROOT, "searched %d candidates in %.2f s%n",
        plan.candidatesEvaluated(), plan.seconds()));
    if (!plan.feasible()) {
      b.append("NOT FEASIBLE\n");
      plan.reasons().forEach(x -> b.append("  - ").append(x).append('\n'));
    }
    b.append(String.format(Locale.ROOT, "best: %d devices, global batch %d, %s, engine %s%n",
        best.estimate().devices(), best.workload().globalBatchSize(),
        best.workload().precision().name(), plan.engineChoice()));
    b.append(EstimateCommand.table(best.estimate(), r.cluster().accelerator(),
        r.workload().trainingTokens()));
    b.append(String.format(Locale.ROOT, "cost%n  %-16s %12.4g USD (%.0f GPU-hours × %.2f USD;"
        + " %s)%n", "total", best.cost().totalUsd(), best.cost().gpuHours(),
        best.cost().usdPerDeviceHour(), best.cost().priceSource()));
    if (!plan.alternatives().isEmpty()) {
      b.append("alternatives\n");
      for (Candidate c : plan.alternatives()) {
        b.append("  ").append(line(c)).append('\n');
      }
    }
    if (plan.pareto().size() > 1) {
      b.append("time/cost Pareto front\n");
      for (Candidate c : plan.pareto()) {
        b.append("  ").append(line(c)).append('\n');
      }
    }
    b.append("golden parameters\n");
    for (GoldenParameter g : plan.goldenParameters()) {
      b.append(String.format(Locale.ROOT, "  %-26s %-14s %s%n", g.name(), value(g), g.reason()));
    }
    if (!plan.findings().isEmpty()) {
      b.append("findings\n");
      for (Finding f : plan.findings()) {
        b.append(String.format(Locale.ROOT, "  [%s] %s%n      evidence: %s%n      remedy: %s%n",
            f.severity().name().toLowerCase(Locale.ROOT), f.title(), f.evidence(), f.remedy()));
      }
    }
    return b.toString();
  }

  static String markdown(PlanRequest r, Plan plan) {
    StringBuilder b = new StringBuilder();
    Candidate best = plan.best();
    b.append(String.format(Locale.ROOT, "# Plan: %s on %s%n%n", r.model().name(),
        r.cluster().accelerator().id()));
    b.append(String.format(Locale.ROOT, "Feasible: **%s**. Searched %d candidates in %.2f s.%n%n",
        plan.feasible() ? "yes" : "no", plan.candidatesEvaluated(), plan.seconds()));
    plan.reasons().forEach(x -> b.append("- ").append(x).append('\n'));
    b.append(String.format(Locale.ROOT, "Engine: %s.%n", plan.engineChoice()));
    b.append("\n| devices | engine | tp | pp | dp | v | micro-batch | batch | SP | recompute |"
        + " ZeRO | step s | MFU | days | USD |\n|---:|---|---:|---:|---:|---:|---:|---:|---|---|"
        + "---:|---:|---:|---:|---:|\n");
    b.append(row(best));
    for (Candidate c : plan.alternatives()) {
      b.append(row(c));
    }
    b.append("\n## Golden parameters\n\n| parameter | value | why |\n|---|---|---|\n");
    for (GoldenParameter g : plan.goldenParameters()) {
      b.append(String.format(Locale.ROOT, "| %s | %s | %s |%n", g.name(), value(g), g.reason()));
    }
    b.append("\n## Findings\n\n");
    for (Finding f : plan.findings()) {
      b.append(String.format(Locale.ROOT, "- **%s** %s. %s. *Remedy:* %s.%n",
          f.severity().name().toLowerCase(Locale.ROOT), f.title(), f.evidence(), f.remedy()));
    }
    return b.toString();
  }

  private static String row(Candidate c) {
    var e = c.estimate();
    var l = e.layout();
    return String.format(Locale.ROOT, "| %d | %s | %d | %d | %d | %d | %d | %d | %s | %s | %d |"
        + " %.3g | %.1f %% | %.1f | %.3g |%n", e.devices(), l.engine().id(), l.tp(), l.pp(),
        l.dp(), l.virtualStages(),
        l.microBatch(), c.workload().globalBatchSize(), l.sequenceParallel(), l.recompute().id(),
        l.zeroStage(), e.stepSeconds(), 100 * e.mfu(), e.trainingDays(), c.cost().totalUsd());
  }

  private static String line(Candidate c) {
    var e = c.estimate();
    var l = e.layout();
    return String.format(Locale.ROOT, "%4d dev %s tp=%d pp=%d dp=%d v=%d mb=%d B=%d sp=%s"
        + " rc=%s zero=%d%s: %.3g s/step, MFU %.1f %%, %.1f days (%.1f-%.1f), %.3g USD%s",
        e.devices(), l.engine().id(), l.tp(), l.pp(), l.dp(), l.virtualStages(), l.microBatch(),
        c.workload().globalBatchSize(), l.sequenceParallel(), l.recompute().id(), l.zeroStage(),
        (l.ep() > 1 ? " ep=" + l.ep() : "") + (l.etp() != l.tp() ? " etp=" + l.etp() : "")
            + (l.moeDispatcher() != io.hyperframes.parallel.MoeDispatcher.ALL_TO_ALL
                ? " " + l.moeDispatcher().id() : "")
            + (l.overlapMoeComm() ? " a2a-overlap" : "")
            + (l.cp() > 1 ? " cp=" + l.cp() : ""),
        e.stepSeconds(), 100 * e.mfu(), e.trainingDays(), e.trainingDaysLow(),
        e.trainingDaysHigh(), c.cost().totalUsd(), e.feasible() ? "" : " (infeasible)");
  }

  private static String value(GoldenParameter g) {
    if (g.value() instanceof Double d) {
      return String.format(Locale.ROOT, "%.4g %s", d, g.unit()).strip();
    }
    return (g.value() + " " + g.unit()).strip();
  }
}
