package io.hyperframes.inference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.hyperframes.catalog.Catalog;
import io.hyperframes.json.Json;
import io.hyperframes.model.TransformerSpec;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * {@code layout.redundantExperts} of an aggregated serving request: the copies of routed experts
 * that a serving plan's expert-parallel group holds, given back to {@code serve}.
 */
class ServeRedundantExpertsTest {

  /** DeepSeek-V3 in FP8 on 16 H100 at a batch of 64, with the given layout. */
  private static String deepSeek(String layout) {
    return "{\"model\": {\"catalog\": \"deepseek-v3\"},"
        + " \"cluster\": {\"accelerator\": \"h100-sxm-80gb\", \"devices\": 16},"
        + " \"workload\": {\"type\": \"inference\", \"batchSize\": 64, \"precision\": \"fp8\","
        + " \"kvCachePrecision\": \"bf16\", \"promptTokens\": 2000, \"outputTokens\": 500},"
        + " \"layout\": " + layout + "}";
  }

  private static InferenceResult serve(String json) {
    return Serving.evaluate(Serving.parse(json, Catalog.builtIn()));
  }

  /**
   * The layout a serving plan reports for its best configuration, pasted into a serve request
   * with the plan's workload, gives the plan's estimate: the same layout (with its 8 copies),
   * parameters, memory and latencies (DeepSeek-V3 at 45 requests/s: 24 devices, ep 24).
   */
  @Test
  void thePlansLayoutServedAsARequestGivesThePlansEstimate() {
    ServingPlans.Result r = ServingPlans.plan(Json.parseObject("r",
        ServingRequests.DEEPSEEK_H100_45), Catalog.builtIn());
    JsonNode plan = ServingPlans.toJson(r);
    JsonNode layout = plan.get("layout");
    assertEquals(8, layout.get("redundantExperts").asInt(), layout::toString);
    InferencePlanner.Config best = r.plan().best();
    String request = ServingRequests.DEEPSEEK_H100_45
        .replace("\"devices\": 96", "\"devices\": " + best.devices())
        .replace("\"precision\": \"fp8\"", "\"precision\": \"" + best.weights().id() + "\"")
        .replace("\"kvCachePrecision\": \"bf16\"",
            "\"kvCachePrecision\": \"" + best.kvCache().id() + "\"")
        .replace("}}}", "}}, \"layout\": " + layout + "}");
    JsonNode served = Serving.toJson(serve(request));
    for (String field : List.of("layout", "parameters", "memory", "inference")) {
      assertEquals(plan.get(field), served.get(field), field);
    }
  }

  /**
   * R copies add R experts' weights and router columns to every MoE layer, and each of the ep
   * devices holds (E + R) / ep of them (ep 16: 17 experts instead of 16); without copies the
   * layout says none.
   */
  @Test
  void copiesAddTheirWeightsAndAreReported() {
    String layout = "{\"tp\": 1, \"ep\": 16, \"dp\": 16, \"twoBatchOverlap\": true%s}";
    InferenceResult without = serve(deepSeek(String.format(layout, "")));
    InferenceResult with = serve(deepSeek(String.format(layout, ", \"redundantExperts\": 16")));
    TransformerSpec m = Catalog.builtIn().model("model.catalog", "deepseek-v3");
    double perCopy = (m.gatedMlp() ? 3.0 : 2.0) * m.hidden() * m.moe().expertFfnHidden()
        + m.hidden();
    assertEquals(16 * m.moeLayers() * perCopy,
        with.estimate().parameters() - without.estimate().parameters(),
        1e-9 * without.estimate().parameters());
    assertTrue(with.estimate().weightsBytes() > without.estimate().weightsBytes());
    assertEquals(16, Serving.toJson(with).get("layout").get("redundantExperts").asInt());
    assertFalse(Serving.toJson(without).get("layout").has("redundantExperts"));
    assertEquals(0, without.redundantExperts());
    // The fluent builder writes what the JSON says.
    InferenceResult fluent = io.hyperframes.HyperFrames.serve().model("deepseek-v3")
        .accelerator("h100-sxm-80gb").devices(16).precision("fp8").kvCachePrecision("bf16")
        .batch(64).prompt(2000).output(500)
        .layout(l -> l.tp(1).ep(16).dp(16).twoBatchOverlap(true).redundantExperts(16)).run();
    assertEquals(16, fluent.redundantExperts());
    assertEquals(with.estimate(), fluent.estimate());
  }

  /** Each way to get the copies wrong is refused by name, with the value. */
  @Test
  void badCopiesAreRefusedByName() {
    assertMessage("layout.redundantExperts: must be >= 0, got -1",
        deepSeek("{\"tp\": 1, \"ep\": 16, \"dp\": 16, \"redundantExperts\": -1}"));
    assertMessage("layout.redundantExperts: copies of routed experts share their load over the"
        + " ep ranks, which needs layout.ep > 1, got 8 copies with ep 1",
        deepSeek("{\"tp\": 8, \"dp\": 2, \"redundantExperts\": 8}"));
    // DeepSeek-V3 routes over 8 groups of experts: 256 + 4 slots do not divide into them.
    IllegalArgumentException groups = assertThrows(IllegalArgumentException.class,
        () -> serve(deepSeek("{\"tp\": 1, \"ep\": 16, \"dp\": 16, \"redundantExperts\": 4}")));
    assertTrue(groups.getMessage().startsWith("layout.redundantExperts: 256 experts and 4 copies"
        + " do not divide into the router's 8 groups"), groups.getMessage());
    assertMessage("layout.redundantExperts: 256 experts and 8 copies make 264 slots, which"
        + " layout.ep 16 does not divide",
        deepSeek("{\"tp\": 1, \"ep\": 16, \"dp\": 16, \"redundantExperts\": 8}"));
    String dense = "{\"model\": {\"catalog\": \"llama3-70b\"},"
        + " \"cluster\": {\"accelerator\": \"h100-sxm-80gb\", \"devices\": 8},"
        + " \"workload\": {\"type\": \"inference\", \"batchSize\": 8, \"precision\": \"fp8\","
        + " \"promptTokens\": 1000, \"outputTokens\": 100},"
        + " \"layout\": {\"tp\": 4, \"ep\": 2, \"dp\": 2, \"redundantExperts\": 2}}";
    assertMessage("layout.redundantExperts: 2 needs a mixture of experts with routed experts"
        + " (model.moe)", dense);
    String pools = deepSeek("{\"redundantExperts\": 8, \"disaggregated\": {"
        + "\"prefill\": {\"tp\": 1, \"ep\": 8, \"replicas\": 8},"
        + " \"decode\": {\"tp\": 1, \"ep\": 16, \"replicas\": 16}}}");
    assertMessage("layout.redundantExperts: give it per pool in layout.disaggregated (prefill"
        + " and decode), not beside it (got 8)", pools);
  }

  private static void assertMessage(String message, String request) {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> serve(request));
    assertEquals(message, e.getMessage());
  }
}
