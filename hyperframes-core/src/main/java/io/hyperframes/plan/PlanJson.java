package io.hyperframes.plan;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.hyperframes.json.Json;
import io.hyperframes.json.Results;

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
    return Json.tree(Results.PlanDocument.of(plan));
  }

  /** One candidate: the estimate contract plus its workload choices and cost. */
  public static ObjectNode candidate(Candidate c) {
    if (c == null) {
      throw new IllegalArgumentException("candidate: must be given");
    }
    return Json.tree(Results.PlanCandidate.of(c));
  }
}
