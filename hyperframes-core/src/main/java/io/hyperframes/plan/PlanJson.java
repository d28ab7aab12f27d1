package io.hyperframes.plan;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.hyperframes.diagnose.Finding;
import io.hyperframes.tuning.GoldenParameter;
import java.util.List;

/**
 * The JSON form of a {@link Plan}: every field of the estimate contract for the best candidate,
 * plus {@code search}, {@code alternatives}, {@code pareto}, {@code scaling},
 * {@code goldenParameters}, {@code findings} and {@code cost}. Names are a contract.
 */
public final class PlanJson {
  private PlanJson() {}

  public static ObjectNode toJson(Plan plan) {
    ObjectNode root = candidate(plan.best());
    root.put("feasible", plan.feasible());
    ArrayNode reasons = root.putArray("reasons");
    plan.reasons().forEach(reasons::add);
    root.put("objective", plan.objective().id());
    ObjectNode search = root.putObject("search");
    search.put("candidatesEvaluated", plan.candidatesEvaluated());
    search.put("seconds", plan.seconds());
    root.set("alternatives", list(plan.alternatives()));
    root.set("pareto", list(plan.pareto()));
    root.set("scaling", list(plan.scaling()));
    ObjectNode golden = root.putObject("goldenParameters");
    for (GoldenParameter g : plan.goldenParameters()) {
      ObjectNode o = golden.putObject(g.name());
      if (g.value() instanceof Number n) {
        o.put("value", n.doubleValue());
      } else if (g.value() instanceof Boolean b) {
        o.put("value", b);
      } else {
        o.put("value", String.valueOf(g.value()));
      }
      o.put("unit", g.unit());
      o.put("reason", g.reason());
    }
    root.set("findings", Finding.toJson(plan.findings()));
    return root;
  }

  /** One candidate: the estimate contract plus its workload choices and cost. */
  public static ObjectNode candidate(Candidate c) {
    ObjectNode o = EstimateJson.toJson(c.estimate());
    o.put("globalBatchSize", c.workload().globalBatchSize());
    o.put("precision", c.workload().precision().name());
    if (c.workload().attention() != null) {
      o.put("attention", c.workload().attention().id());
    }
    Cost cost = c.cost();
    ObjectNode k = o.putObject("cost");
    k.put("devices", cost.devices());
    k.put("trainingDays", cost.trainingDays());
    k.put("trainingDaysLow", cost.trainingDays() * c.estimate().interval().low());
    k.put("trainingDaysHigh", cost.trainingDays() * c.estimate().interval().high());
    k.put("totalUsdLow", cost.totalUsd() * c.estimate().interval().low());
    k.put("totalUsdHigh", cost.totalUsd() * c.estimate().interval().high());
    k.put("gpuHours", cost.gpuHours());
    k.put("usdPerDeviceHour", cost.usdPerDeviceHour());
    k.put("computeUsd", cost.computeUsd());
    k.put("energyKwh", cost.energyKwh());
    k.put("energyUsd", cost.energyUsd());
    k.put("totalUsd", cost.totalUsd());
    k.put("priceSource", cost.priceSource());
    return o;
  }

  private static ArrayNode list(List<Candidate> candidates) {
    ArrayNode a = JsonNodeFactory.instance.arrayNode();
    candidates.forEach(c -> a.add(candidate(c)));
    return a;
  }
}
