package io.hyperframes.plan;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.hyperframes.json.Json;
import io.hyperframes.json.Results;

/**
 * The JSON form of a {@link TrainingEstimate}: feasible, reasons, layout, parameters, memory,
 * time (with its interval), MFU, throughput, time-to-train and GPU-hours, written by Jackson
 * from the result record of each object (field names are a contract; add, never rename).
 */
public final class EstimateJson {
  private EstimateJson() {}

  /** The estimate as a JSON object. */
  public static ObjectNode toJson(TrainingEstimate e) {
    if (e == null) {
      throw new IllegalArgumentException("estimate: must be given");
    }
    return Json.tree(Results.Estimate.of(e));
  }
}
