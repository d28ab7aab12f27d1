package io.hyperframes.plan;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.hyperframes.json.Json;
import com.fasterxml.jackson.annotation.JsonUnwrapped;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import io.hyperframes.diagnose.FindingDocument;
import io.hyperframes.plan.EstimateJson.Estimate;

/**
 * The JSON form of a {@link Plan}: every field of the estimate contract for the best candidate,
 * plus {@code search}, {@code alternatives}, {@code pareto}, {@code scaling},
 * {@code goldenParameters}, {@code findings} and {@code cost}, written by Jackson from the result
 * records. Names are a contract.
 */
public final class PlanJson {
  private PlanJson() {}

  /** The plan as a JSON object. */
  public static ObjectNode toJson(Plan plan) {
    if (plan == null) {
      throw new IllegalArgumentException("plan: must be given");
    }
    return Json.tree(PlanDocument.of(plan));
  }

  /** One candidate: the estimate contract plus its workload choices and cost. */
  public static ObjectNode candidate(Candidate c) {
    if (c == null) {
      throw new IllegalArgumentException("candidate: must be given");
    }
    return Json.tree(PlanCandidate.of(c));
  }

  /** A plan candidate: the estimate's fields plus its workload choices and cost. */
  public record PlanCandidate(@JsonUnwrapped Estimate estimate, int globalBatchSize,
      String precision, String attention, CandidateCost cost) {

    /** The document of {@code c}. */
    public static PlanCandidate of(Candidate c) {
      Cost k = c.cost();
      double low = c.estimate().interval().low();
      double high = c.estimate().interval().high();
      return new PlanCandidate(Estimate.of(c.estimate()), c.workload().globalBatchSize(),
          c.workload().precision().name(),
          c.workload().attention() == null ? null : c.workload().attention().id(),
          new CandidateCost(k.devices(), k.trainingDays(), k.trainingDays() * low,
              k.trainingDays() * high, k.totalUsd() * low, k.totalUsd() * high, k.gpuHours(),
              k.usdPerDeviceHour(), k.computeUsd(), k.energyKwh(), k.energyUsd(), k.totalUsd(),
              k.priceSource()));
    }
  }

  /** {@code cost} of a candidate. */
  public record CandidateCost(long devices, double trainingDays, double trainingDaysLow,
      double trainingDaysHigh, double totalUsdLow, double totalUsdHigh, double gpuHours,
      double usdPerDeviceHour, double computeUsd, double energyKwh, double energyUsd,
      double totalUsd, String priceSource) {}

  /**
   * A plan: the best candidate's fields (with the plan's verdict and reasons), then the search,
   * alternatives, Pareto front, scaling sweep, golden parameters and findings.
   */
  public record PlanDocument(@JsonUnwrapped PlanCandidate best, String objective,
      PlanSearch search, List<PlanCandidate> alternatives, List<PlanCandidate> pareto,
      List<PlanCandidate> scaling, Map<String, Golden> goldenParameters,
      List<FindingDocument> findings) {

    /** The document of {@code plan}. */
    public static PlanDocument of(Plan plan) {
      PlanCandidate b = PlanCandidate.of(plan.best());
      PlanCandidate best = new PlanCandidate(
          b.estimate().withVerdict(plan.feasible(), plan.reasons()), b.globalBatchSize(),
          b.precision(), b.attention(), b.cost());
      Map<String, Golden> golden = new LinkedHashMap<>();
      for (GoldenParameter g : plan.goldenParameters()) {
        Object v = g.value() instanceof Number n ? (Object) n.doubleValue()
            : g.value() instanceof Boolean ? g.value() : String.valueOf(g.value());
        golden.put(g.name(), new Golden(v, g.unit(), g.reason()));
      }
      return new PlanDocument(best, plan.objective().id(),
          new PlanSearch(plan.candidatesEvaluated(), plan.candidatesBounded(), plan.seconds(),
              plan.request() == null ? List.of() : plan.request().engines().stream()
                  .map(io.hyperframes.parallel.Engine::id).toList(), plan.engineChoice()),
          plan.alternatives().stream().map(PlanCandidate::of).toList(),
          plan.pareto().stream().map(PlanCandidate::of).toList(),
          plan.scaling().stream().map(PlanCandidate::of).toList(), golden,
          FindingDocument.of(plan.findings()));
    }
  }

  /** {@code search} of a plan. */
  public record PlanSearch(long candidatesEvaluated, long candidatesBounded, double seconds,
      List<String> engines, String engineChoice) {}

  /** One golden parameter: a number, a flag or a word, its unit and why. */
  public record Golden(Object value, String unit, String reason) {}
}
