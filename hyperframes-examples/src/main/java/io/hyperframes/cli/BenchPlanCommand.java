package io.hyperframes.cli;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.hyperframes.catalog.Catalog;
import io.hyperframes.json.Json;
import io.hyperframes.plan.Plan;
import io.hyperframes.plan.PlanRequest;
import io.hyperframes.plan.Planner;
import java.nio.file.Path;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code hyperframes bench plan}: the plan search of a request (training, or serving for an
 * inference workload), run several times in one JVM. The first run pays the JIT's warm-up (on a 2-core machine the compiler thread takes a
 * core for most of it); the later ones time the search itself, as a service planning more than
 * once sees it.
 */
@Command(name = "plan", mixinStandardHelpOptions = true,
    description = "Time a plan search (training, or serving for an inference workload), repeated"
        + " in one JVM: the first run with the JIT's warm-up, the later ones without.")
final class BenchPlanCommand implements Callable<Integer> {

  @Spec CommandSpec spec;

  @Option(names = "--request", required = true, paramLabel = "FILE",
      description = "A plan request (as for hyperframes plan --request; an inference request as"
          + " for hyperframes serve-plan).")
  Path request;

  @Option(names = "--repeat", defaultValue = "3", description = "Searches in this JVM (1-20).")
  int repeat;

  @Mixin Catalogs catalogs;

  @Mixin FormatOption format;

  @Override
  public Integer call() throws Exception {
    if (repeat < 1 || repeat > 20) {
      throw new IllegalArgumentException("--repeat: must be in [1, 20], got " + repeat);
    }
    Catalog c = catalogs.load();
    String json = Files2.read("--request", request);
    var root = Json.parseObject("request", json);
    boolean serving = io.hyperframes.inference.Serving.isInference(root);
    java.util.function.Supplier<Search> search;
    if (serving) {
      search = () -> {
        var p = io.hyperframes.inference.ServingPlans.plan(root, c).plan();
        // Configurations compared by their descriptions: a configuration's simulated
        // percentiles carry a function, which records do not compare by value.
        return new Search(p.candidatesEvaluated(), (p.best() == null ? "none"
            : io.hyperframes.inference.ServingPlans.describe(p.best())) + " | "
            + (p.disaggregated() == null ? "none"
                : io.hyperframes.inference.ServingPlans.describe(p.disaggregated())));
      };
    } else {
      PlanRequest r = io.hyperframes.PlanRequests.parse(json, c);
      Planner planner = Planner.analytical();
      search = () -> {
        Plan p = planner.plan(r);
        return new Search(p.candidatesEvaluated(), p.best().estimate());
      };
    }
    ObjectNode out = Json.mapper().createObjectNode();
    out.put("kind", serving ? "serving" : "training");
    ArrayNode runs = out.putArray("runs");
    Search first = null;
    boolean sameBest = true;
    double fastestLater = Double.NaN;
    double firstSeconds = 0;
    for (int i = 0; i < repeat; i++) {
      long start = System.nanoTime();
      Search p = search.get();
      double seconds = (System.nanoTime() - start) / 1e9;
      runs.addObject().put("seconds", seconds).put("candidates", p.candidates());
      if (first == null) {
        first = p;
        firstSeconds = seconds;
      } else {
        sameBest &= p.best().equals(first.best());
        fastestLater = Double.isNaN(fastestLater) ? seconds : Math.min(fastestLater, seconds);
      }
    }
    out.put("firstSeconds", firstSeconds);
    if (!Double.isNaN(fastestLater)) {
      out.put("fastestLaterSeconds", fastestLater);
    }
    out.put("candidates", first.candidates());
    out.put("sameBest", sameBest);
    out.put("processors", Runtime.getRuntime().availableProcessors());
    out.put("java", System.getProperty("java.vm.name") + " " + Runtime.version());
    var w = spec.commandLine().getOut();
    if (format.json()) {
      w.println(Json.mapper().writerWithDefaultPrettyPrinter().writeValueAsString(out));
    } else {
      w.printf(Locale.ROOT, "bench plan: %s, %s, %d candidates a search, %d processors, %s%n",
          request.getFileName(), serving ? "serving" : "training", first.candidates(),
          Runtime.getRuntime().availableProcessors(), out.get("java").asText());
      for (int i = 0; i < runs.size(); i++) {
        w.printf(Locale.ROOT, "  run %d  %8.2f s%s%n", i + 1,
            runs.get(i).get("seconds").asDouble(), i == 0 ? "  (with the JIT's warm-up)" : "");
      }
      if (!Double.isNaN(fastestLater)) {
        w.printf(Locale.ROOT, "fastest after the first: %.2f s (%.2fx the first); same best plan:"
            + " %s%n", fastestLater, firstSeconds / fastestLater, sameBest ? "yes" : "NO");
      }
    }
    w.flush();
    return sameBest ? 0 : 1;
  }

  /** One search: what it evaluated and its answer, compared between runs. */
  private record Search(long candidates, Object best) {}
}
