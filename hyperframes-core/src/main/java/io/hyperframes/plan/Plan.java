package io.hyperframes.plan;

import com.google.common.collect.ImmutableList;
import io.hyperframes.diagnose.Finding;
import io.hyperframes.plan.GoldenParameter;
import java.util.List;

/**
 * The answer of the planner.
 *
 * @param feasible whether the best candidate fits (with the requested headroom) and meets the
 *     deadline
 * @param reasons why not, when not
 * @param best the best candidate (or, when nothing fits, the one with the smallest footprint)
 * @param alternatives runner-up candidates, best first
 * @param pareto candidates not beaten on both time and cost, fastest first (one per device count)
 * @param scaling the best candidate per device count, fewest devices first
 * @param goldenParameters settings derived from the best candidate
 * @param findings advice on the best candidate
 * @param candidatesEvaluated candidates the search considered: every layout of its loops (those
 *     pruning rule 3 set aside included) and the DeepEP and overlap alternatives it evaluated
 * @param candidatesBounded layouts of {@code candidatesEvaluated} that rule 3 of
 *     {@link Planner} set aside unevaluated, their compute-only step bound ranking them after
 *     every plan kept
 * @param seconds wall time of the search
 * @param objective what was optimised
 * @param request the request the plan answers (its model and cluster; the plan's device count is
 *     the best candidate's)
 */
public record Plan(boolean feasible, List<String> reasons, Candidate best,
    List<Candidate> alternatives, List<Candidate> pareto, List<Candidate> scaling,
    List<GoldenParameter> goldenParameters, List<Finding> findings, long candidatesEvaluated,
    long candidatesBounded, double seconds, Objective objective, PlanRequest request) {

  /**
   * How the best plan's engine was chosen: fixed by {@code layout.engine}, the only engine the
   * request's fields or model allow, or the winner of the engines searched.
   */
  public String engineChoice() {
    String winner = best.estimate().layout().engine().id();
    if (request == null) {
      return winner;
    }
    if (request.layout().engine() != null) {
      return winner + " (layout.engine)";
    }
    List<io.hyperframes.parallel.Engine> searched = request.engines();
    if (searched.size() == 1) {
      return winner + " (" + request.layout().engineChoice() + ")";
    }
    return winner + " (best of " + String.join(", ", searched.stream()
        .map(io.hyperframes.parallel.Engine::id).toList()) + "; layout.engine open)";
  }

  public Plan {
    reasons = ImmutableList.copyOf(reasons);
    alternatives = ImmutableList.copyOf(alternatives);
    pareto = ImmutableList.copyOf(pareto);
    scaling = ImmutableList.copyOf(scaling);
    goldenParameters = ImmutableList.copyOf(goldenParameters);
    findings = ImmutableList.copyOf(findings);
  }
}
