package io.hyperframes.cli;

import com.fasterxml.jackson.core.JsonProcessingException;
import io.hyperframes.inference.ServingPlans;
import io.hyperframes.json.Json;
import io.hyperframes.launch.Launch;
import io.hyperframes.launch.LaunchOptions;
import io.hyperframes.launch.Target;
import io.hyperframes.report.ServingReport;
import java.io.PrintWriter;
import java.util.Locale;

/**
 * How {@code serve-plan} and {@code plan} (with an inference workload) print a serving plan as a
 * table, JSON or an HTML report, or emit what launches its best configuration.
 */
final class ServingPlanOutput {
  private ServingPlanOutput() {}

  /** The job name of an emitted serving launch when {@code --name} is not given. */
  static final String DEFAULT_NAME = "hyperframes-serve";

  /**
   * Prints {@code result} in {@code format} (table, json or html).
   *
   * @throws IllegalArgumentException naming {@code --format} when it is markdown
   */
  static void print(PrintWriter out, ServingPlans.Result result, Format format)
      throws JsonProcessingException {
    switch (format) {
      case json -> out.println(Json.mapper().writerWithDefaultPrettyPrinter()
          .writeValueAsString(ServingPlans.toJson(result)));
      case html -> out.print(ServingReport.render(result, title(result)));
      case table -> table(out, result);
      default -> throw new IllegalArgumentException("--format: " + format.name() + " is not"
          + " available for a serving plan (table, json, html)");
    }
    out.flush();
  }

  /** The plan's title: the model and the accelerator. */
  static String title(ServingPlans.Result result) {
    return String.format(Locale.ROOT, "HyperFrames serving plan: %s on %s",
        result.request().model().name(), result.request().cluster().accelerator().id());
  }

  private static void table(PrintWriter out, ServingPlans.Result result) {
    var plan = result.plan();
    out.println("HyperFrames serving plan (" + plan.candidatesEvaluated()
        + " configurations simulated)");
    if (plan.best() == null) {
      out.println("NO aggregated configuration meets the SLO");
    } else {
      out.println("best: " + ServingPlans.describe(plan.best()));
      plan.alternatives().forEach(a -> out.println("  alt: " + ServingPlans.describe(a)));
    }
    out.println("disaggregated: " + (plan.disaggregated() == null ? "none meets the SLO"
        : ServingPlans.describe(plan.disaggregated())));
    if (plan.choice() != null) {
      out.println("fewer devices: " + plan.choice());
    }
    plan.findings().forEach(f -> out.println("[" + f.severity().name().toLowerCase(Locale.ROOT)
        + "] " + f.title() + " — " + f.remedy()));
    out.println("pareto front (one replica or expert-parallel group at fixed batches, unloaded;"
        + " most interactive first):");
    plan.pareto().forEach(p -> out.println("  " + ServingPlans.describe(p) + String.format(
        Locale.ROOT, "; interval per GPU %.4g-%.4g, per user %.4g-%.4g",
        plan.low(p.tokensPerSecondPerGpu()), plan.high(p.tokensPerSecondPerGpu()),
        plan.low(p.tokensPerSecondPerUser()), plan.high(p.tokensPerSecondPerUser()))));
    var iv = plan.interval();
    out.println(iv.regime().isEmpty() ? "  no interval: the catalog has no serving band for this"
        + " accelerator" : String.format(Locale.ROOT, "  intervals: measured / predicted time"
            + " per token %.3g-%.3g, from %d published run(s) of %s%s", iv.low(), iv.high(),
            iv.cases(), iv.regime(), iv.cases() == 0 ? " (none: the whole pooled range)" : ""));
  }

  /**
   * Emits the launch of the best configuration of {@code result} for {@code targetId}, printed or
   * written by {@code launch}.
   */
  static int emit(LaunchOption launch, ServingPlans.Result result, String targetId) {
    LaunchOptions options = launch.options(DEFAULT_NAME, "train.py");
    Target target = Target.fromId("--emit", targetId);
    return launch.write(Launch.serving(result, target, options, launch.backend()),
        target == Target.KUBERNETES || target == Target.DYNAMO ? "yaml" : "text", options);
  }
}
