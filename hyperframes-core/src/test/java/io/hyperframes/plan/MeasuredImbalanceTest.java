package io.hyperframes.plan;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.hyperframes.request.EstimateRequest;
import io.hyperframes.HyperFrames;
import io.hyperframes.request.Requests;
import io.hyperframes.diagnose.Finding;
import io.hyperframes.plan.TrainingFindings;
import io.hyperframes.catalog.Catalog;
import io.hyperframes.json.Json;
import io.hyperframes.workload.TrainingWorkload;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * TrainingWorkload#MEASURED_DROPLESS_MOE_LOAD_IMBALANCE is what the published dropless /
 * forced-balance pairs of docs/validation/moe-imbalance.json give: for each pair, the imbalance
 * at which the estimate of the dropless run is slower than balanced by the published ratio; the
 * constant is their mean, and the four agree within 0.1. The planner's finding names it where a
 * dropless layout is estimated at the default.
 */
class MeasuredImbalanceTest {

  private static JsonNode read(String name) throws IOException {
    return Json.parseObject(name, Files.readString(Path.of("..", "docs", "validation", name),
        StandardCharsets.UTF_8));
  }

  private static JsonNode request(JsonNode cases, String id) {
    for (JsonNode c : cases.get("cases")) {
      if (c.get("id").asText().equals(id)) {
        return c.get("request");
      }
    }
    throw new AssertionError("no case " + id);
  }

  private static double step(JsonNode request, double imbalance) {
    ObjectNode r = request.deepCopy();
    ((ObjectNode) r.get("workload")).put("moeLoadImbalance", imbalance);
    return HyperFrames.estimate(r.toString()).stepSeconds();
  }

  @Test
  void theConstantIsTheMeanImbalanceOfThePublishedPairs() throws IOException {
    JsonNode pairs = read("moe-imbalance.json");
    JsonNode cases = read("moe-cases.json");
    assertEquals("fit", pairs.get("role").asText());
    List<Double> fitted = new ArrayList<>();
    for (JsonNode p : pairs.get("pairs")) {
      JsonNode r = request(cases, p.get("case").asText());
      assertTrue(r.get("workload").get("moeLoadImbalance") == null,
          "the dropless case takes the default");
      double ratio = p.get("forcedTflops").asDouble() / p.get("droplessTflops").asDouble();
      double balanced = step(r, 1.0);
      double lo = 1.0;
      double hi = 3.0;
      for (int i = 0; i < 20; i++) {
        double mid = (lo + hi) / 2;
        if (step(r, mid) / balanced < ratio) {
          lo = mid;
        } else {
          hi = mid;
        }
      }
      fitted.add((lo + hi) / 2);
    }
    double mean = fitted.stream().mapToDouble(Double::doubleValue).average().orElseThrow();
    assertEquals(TrainingWorkload.MEASURED_DROPLESS_MOE_LOAD_IMBALANCE, mean, 0.005,
        "fitted " + fitted);
    for (double f : fitted) {
      assertEquals(mean, f, 0.1, "the pairs agree: " + fitted);
    }
  }

  @Test
  void aDroplessLayoutAtTheDefaultSaysSo() throws IOException {
    JsonNode r = request(read("moe-cases.json"), "mcoremoe-qwen3-235b-256h100-16k-cp1");
    EstimateRequest balanced = Requests.fromJson(r, Catalog.builtIn());
    List<Finding> at1 = TrainingFindings.of(HyperFrames.estimate(balanced), balanced.model(),
        balanced.cluster(), balanced.workload());
    Finding f = at1.stream().filter(x -> x.id().equals("moe-balance-assumed")).findFirst()
        .orElseThrow(() -> new AssertionError(at1.toString()));
    assertTrue(f.remedy().contains("workload.moeLoadImbalance") && f.remedy().contains("1.54"),
        f.remedy());
    ObjectNode measured = r.deepCopy();
    ((ObjectNode) measured.get("workload")).put("moeLoadImbalance", 1.54);
    EstimateRequest m = Requests.fromJson(measured, Catalog.builtIn());
    assertFalse(TrainingFindings.of(HyperFrames.estimate(m), m.model(), m.cluster(),
        m.workload()).stream().anyMatch(x -> x.id().equals("moe-balance-assumed")));
    // A forced-balance case gives 1 explicitly and is told the same: the estimate cannot tell an
    // explicit 1 from the default, and the remedy says when 1 is right.
  }
}
