package io.hyperframes.cli;

import com.fasterxml.jackson.core.JsonProcessingException;
import io.hyperframes.request.EstimateRequest;
import io.hyperframes.HyperFrames;
import io.hyperframes.request.Requests;
import io.hyperframes.catalog.Catalog;
import io.hyperframes.json.Json;
import io.hyperframes.plan.EstimateJson;
import io.hyperframes.plan.MemoryBreakdown;
import io.hyperframes.plan.TimeBreakdown;
import io.hyperframes.plan.TrainingEstimate;
import java.nio.file.Path;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;

/** {@code hyperframes estimate}: the training estimate of one layout. */
@Command(name = "estimate", mixinStandardHelpOptions = true,
    description = "Estimate memory, step time, MFU and time-to-train of one training layout.")
final class EstimateCommand implements Callable<Integer> {

  @Spec CommandSpec spec;

  @Option(names = "--request", required = true, paramLabel = "FILE",
      description = "Request JSON (model, cluster, workload, layout).")
  Path request;

  @Mixin Catalogs catalogs;

  @Mixin FormatOption format;

  @Override
  public Integer call() throws JsonProcessingException {
    Catalog c = catalogs.load();
    String text = Files2.read("--request", request);
    var root = Json.parseObject("request", text);
    if (io.hyperframes.inference.Serving.isInference(root)) {
      var result = io.hyperframes.inference.Serving.evaluate(
          io.hyperframes.inference.Serving.fromJson(root, c));
      var out = spec.commandLine().getOut();
      if (format.json()) {
        out.println(Json.mapper().writerWithDefaultPrettyPrinter()
            .writeValueAsString(io.hyperframes.inference.Serving.toJson(result)));
      } else {
        out.print(InferenceTable.render(result));
      }
      out.flush();
      return 0;
    }
    EstimateRequest r = Requests.fromJson(root, c);
    TrainingEstimate e = catalogs.builtIn() ? HyperFrames.estimate(r)
        : io.hyperframes.plan.TrainingEstimator.analytical().estimate(r);
    var out = spec.commandLine().getOut();
    if (format.json()) {
      var json = EstimateJson.toJson(e);
      json.put("attention", r.workload().attentionOn(r.cluster().accelerator(),
          e.layout().engine()).id());
      json.put("engineChoice", e.layout().engine().id() + " (" + r.layout().engineChoice()
          + ")");
      out.println(Json.mapper().writerWithDefaultPrettyPrinter().writeValueAsString(json));
    } else {
      out.print(table(r, e));
    }
    out.flush();
    return 0;
  }

  static String table(EstimateRequest r, TrainingEstimate e) {
    String kind = r.model() instanceof io.hyperframes.model.TransformerSpec
        ? r.workload().attentionOn(r.cluster().accelerator(), e.layout().engine()).id()
            + " attention"
        : r.model() instanceof io.hyperframes.model.DenseStackSpec ? "dense stack, a sample per"
            + " token" : "parameters only";
    return String.format(Locale.ROOT, "HyperFrames training estimate: %s on %d x %s (%s)%n",
        r.model().name(), r.cluster().devices(), r.cluster().accelerator().id(), kind)
        + String.format(Locale.ROOT, "engine      %s (%s)%n", e.layout().engine().displayName(),
            r.layout().engineChoice())
        + table(e, r.cluster().accelerator(), r.workload().trainingTokens());
  }

  /** The estimate's table (layout, memory, time, efficiency, time to train). */
  static String table(TrainingEstimate e, io.hyperframes.hardware.Accelerator accelerator,
      double trainingTokens) {
    StringBuilder b = new StringBuilder();
    var l = e.layout();
    b.append(String.format(Locale.ROOT,
        "layout      engine=%s tp=%d pp=%d dp=%d virtualStages=%d microBatch=%d"
            + " sequenceParallel=%s recompute=%s zeroStage=%d%s%n",
        l.engine().id(), l.tp(), l.pp(), l.dp(), l.virtualStages(), l.microBatch(),
        l.sequenceParallel(), l.recompute().id(), l.zeroStage(),
        (l.shardGroupSize() > 0 ? " shardGroupSize=" + l.shardGroupSize() : "")
            + (l.ep() > 1 ? " ep=" + l.ep() : "") + (l.etp() != l.tp() ? " etp=" + l.etp() : "")
            + (l.moeDispatcher() != io.hyperframes.parallel.MoeDispatcher.ALL_TO_ALL
                ? " moeDispatcher=" + l.moeDispatcher().id() : "")
            + (l.overlapMoeComm() ? " overlapMoeComm=true" : "")
            + (l.dp() > 1 && l.gradReduceOverlapOff() ? " overlapGradReduce=false" : "")
            + (l.dp() > 1 && l.paramGatherOverlapOff()
                && (l.zeroStage() == 1 || l.zeroStage() == 2) ? " overlapParamGather=false" : "")
            + (l.unevenStages() ? " firstStageLayers=" + l.firstStageLayers()
                + " lastStageLayers=" + l.lastStageLayers() : "")
            + (l.cp() > 1 ? " cp=" + l.cp() + " cpCommType=" + l.cpCommType().id() : "")
            + (l.recomputeModules().isEmpty()
                || l.recomputeModules().equals(io.hyperframes.parallel.RecomputeModule.DEFAULT)
                ? "" : " recomputeModules=" + String.join(",",
                    io.hyperframes.parallel.RecomputeModule.ids(l.recomputeModules())))));
    b.append(String.format(Locale.ROOT, "feasible    %s%n", e.feasible() ? "yes" : "NO"));
    for (String reason : e.reasons()) {
      b.append("  - ").append(reason).append('\n');
    }
    b.append(e.activeParameters() < e.parameters()
        ? String.format(Locale.ROOT, "parameters  %.3f B (%.3f B active per token)%n",
            e.parameters() / 1e9, e.activeParameters() / 1e9)
        : String.format(Locale.ROOT, "parameters  %.3f B%n", e.parameters() / 1e9));
    MemoryBreakdown m = e.memory();
    b.append("memory per device (largest stage)\n");
    row(b, "weights", gib(m.weightsBytes()), "GiB");
    row(b, "gradients", gib(m.gradientsBytes()), "GiB");
    row(b, "optimizer", gib(m.optimizerBytes()), "GiB");
    row(b, "activations", gib(m.activationsBytes()), "GiB");
    row(b, "other", gib(m.otherBytes()), "GiB");
    row(b, "total", gib(m.totalBytes()), String.format(Locale.ROOT, "GiB of %.1f",
        gib(accelerator.memoryBytes())));
    TimeBreakdown t = e.time();
    b.append("step time\n");
    row(b, "compute", t.computeSeconds(), "s");
    row(b, "recompute", t.recomputeSeconds(), "s");
    row(b, "comm tensor-par", t.tensorParallelCommSeconds(), "s");
    if (t.allToAllSeconds() > 0) {
      row(b, "comm all-to-all", t.allToAllSeconds(), "s");
    }
    if (l.cp() > 1) {
      row(b, "comm context-par", t.contextParallelSeconds(), "s (exposed)");
    }
    row(b, "comm pipeline", t.pipelineCommSeconds(), "s");
    row(b, "comm data-par", t.dataParallelCommSeconds(), "s (exposed)");
    row(b, "bubble", t.bubbleSeconds(), "s");
    row(b, "optimizer", t.optimizerSeconds(), "s");
    row(b, "step", t.stepSeconds(), String.format(Locale.ROOT, "s (90 %% interval %.3g-%.3g s)",
        e.stepSecondsLow(), e.stepSecondsHigh()));
    if (!e.interval().regime().isEmpty()) {
      b.append(String.format(Locale.ROOT, "  interval rests on %d published run(s) of %s%s%n",
          e.interval().cases(), e.interval().regime(), e.interval().cases() == 0
              ? " (none: the whole pooled range)" : ""));
    }
    b.append("efficiency\n");
    row(b, "MFU", 100 * e.mfu(), "%");
    row(b, "HFU", 100 * e.hfu(), "%");
    row(b, "TFLOP/s/device", e.flopsPerSecondPerDevice() / 1e12, "(hardware FLOPs)");
    row(b, "tokens/s", e.tokensPerSecond(), "");
    row(b, "comm share", 100 * e.commShare(), "%");
    row(b, "scaling eff.", 100 * e.scalingEfficiency(), "%");
    if (trainingTokens > 0) {
      b.append(String.format(Locale.ROOT, "time to train %.3g tokens%n", trainingTokens));
      row(b, "days", e.trainingDays(), String.format(Locale.ROOT, "(90 %% interval %.3g-%.3g)",
          e.trainingDaysLow(), e.trainingDaysHigh()));
      row(b, "GPU-hours", e.gpuHours(), "");
    }
    return b.toString();
  }

  private static void row(StringBuilder b, String name, double value, String unit) {
    b.append(String.format(Locale.ROOT, "  %-16s %12.4g %s%n", name, value, unit));
  }

  private static double gib(double bytes) {
    return bytes / (1L << 30);
  }
}
