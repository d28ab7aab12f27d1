package io.hyperframes.request;

import com.fasterxml.jackson.databind.JsonNode;
import io.hyperframes.catalog.Catalog;
import io.hyperframes.hardware.Cluster;
import io.hyperframes.request.Documents;
import io.hyperframes.json.Json;
import io.hyperframes.model.ModelSpec;
import io.hyperframes.parallel.PartialLayout;
import io.hyperframes.workload.TrainingWorkload;


/**
 * Reads estimate requests from their JSON form (the contract in docs/user-guide.md). Every
 * problem is an {@link IllegalArgumentException} whose message starts with the field path and
 * names the offending value.
 */
public final class Requests {
  private Requests() {}

  /** Parses a request against the built-in catalog. */
  public static EstimateRequest parse(String json) {
    return parse(json, Catalog.builtIn());
  }

  /** Parses a request against {@code catalog}. */
  public static EstimateRequest parse(String json, Catalog catalog) {
    return fromJson(Json.parseObject("request", json), catalog);
  }

  /** Builds a request from an already parsed JSON object. */
  public static EstimateRequest fromJson(JsonNode root, Catalog catalog) {
    if (root == null || !root.isObject()) {
      throw new IllegalArgumentException("request: must be a JSON object");
    }
    Documents.Estimate doc = Json.bind(root, Documents.Estimate.class, "");
    ModelSpec model = Json.required("model", doc.model()).resolve(catalog);
    Cluster cluster = Json.required("cluster", doc.cluster()).resolve(catalog);
    TrainingWorkload workload = Json.required("workload", doc.workload()).resolve();
    PartialLayout layout = doc.layout() == null ? PartialLayout.OPEN : doc.layout().resolve();
    // Kernel constants scoped to the engine that runs the layout (Catalog#forEngine).
    return new EstimateRequest(model, catalog.forEngine(cluster, layout.engineOrDefault()),
        workload, layout);
  }
}
