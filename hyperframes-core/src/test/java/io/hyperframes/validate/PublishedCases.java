package io.hyperframes.validate;

import com.fasterxml.jackson.databind.JsonNode;
import io.hyperframes.json.Json;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/** What the tests of the recorded published runs read from a case file under docs/validation. */
final class PublishedCases {

  private PublishedCases() {}

  /**
   * Megatron-LM's {@code num_floating_point_operations} a token of a mixture of experts at
   * sequence length {@code seq} (model FLOPs, causal attention counted half, the router not
   * counted): gated routed experts {@code fe} × {@code k}, a gated shared expert {@code fs} (0
   * without), the attention projections, the logits.
   */
  static double megatronMoeFlopsPerToken(double h, double q, double kv, double layers,
      double fe, double k, double fs, double vocab, double seq) {
    return 6 * h * (3 * fe * k) * layers + 6 * h * (3 * fs) * layers
        + 6 * (h * (q + 2 * kv) + q * h) * layers + 6 * h * vocab + 6 * q * seq * layers;
  }

  /** The {@code cases} of docs/validation/{@code file}. */
  static JsonNode read(String file) throws IOException {
    return Json.parseObject("cases", Files.readString(
        Path.of("..", "docs", "validation", file), StandardCharsets.UTF_8)).get("cases");
  }

  /**
   * FLOPs of one step of a GPT case by Narayanan et al. 2021 Eq. (3),
   * {@code 96·B·s·l·h²·(1 + s/6h + V/16lh)} (the recomputation forward counted), the convention
   * in which Megatron-LM of 2021 and the Megatron-Turing NLG paper report teraFLOP/s.
   */
  static double eq3FlopsPerStep(JsonNode c) {
    JsonNode m = c.at("/request/model");
    double l = m.get("layers").asDouble();
    double h = m.get("hidden").asDouble();
    double v = m.get("vocab").asDouble();
    double s = m.get("seqLen").asDouble();
    double batch = c.at("/request/workload/globalBatchSize").asDouble();
    return 96 * batch * s * l * h * h * (1 + s / (6 * h) + v / (16 * l * h));
  }
}
