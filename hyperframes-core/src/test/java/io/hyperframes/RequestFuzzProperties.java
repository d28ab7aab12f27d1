package io.hyperframes;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.hyperframes.plan.EstimateJson;
import io.hyperframes.plan.TrainingEstimate;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import com.fasterxml.jackson.databind.JsonNode;

/**
 * Fuzzing the request parser and estimator: any input yields a valid estimate or an
 * IllegalArgumentException, never another exception, NaN or a negative number.
 */
class RequestFuzzProperties {

  private static final List<String> TOKENS = List.of("{", "}", "[", "]", ":", ",", "\"model\"",
      "\"cluster\"", "\"workload\"", "\"layout\"", "\"tp\"", "1", "-1", "0", "1e308", "2.5",
      "true", "null", "\"training\"", "\"a100-sxm-80gb\"", "\"x\"", "NaN", "\"");

  @Provide
  Arbitrary<String> randomJson() {
    return Arbitraries.of(TOKENS).list().ofMaxSize(40).map(l -> String.join("", l));
  }

  @Provide
  Arbitrary<String> mutatedRequests() {
    String valid = BadInputTest.VALID;
    Arbitrary<Integer> position = Arbitraries.integers().between(0, valid.length() - 1);
    Arbitrary<String> replacement = Arbitraries.of("", "0", "-", "9", "99999", "1e308", "\"",
        "}", "{", ",", "null", "true", "2.5", "-7", "x");
    Arbitrary<Integer> length = Arbitraries.integers().between(0, 6);
    return net.jqwik.api.Combinators.combine(position, replacement, length)
        .as((p, r, n) -> valid.substring(0, p) + r + valid.substring(Math.min(valid.length(),
            p + n)));
  }

  @Property(tries = 1000)
  void randomJsonIsRejectedCleanlyOrEstimated(@ForAll("randomJson") String json) {
    check(json);
  }

  @Property(tries = 1000)
  void mutatedRequestsAreRejectedCleanlyOrEstimated(@ForAll("mutatedRequests") String json) {
    check(json);
  }

  private static void check(String json) {
    TrainingEstimate e;
    try {
      e = HyperFrames.estimate(json);
    } catch (IllegalArgumentException expected) {
      assertTrue(expected.getMessage() != null && !expected.getMessage().isBlank());
      return;
    }
    assertNumbersValid(EstimateJson.toJson(e), "");
  }

  static void assertNumbersValid(JsonNode node, String path) {
    if (node.isNumber()) {
      double v = node.asDouble();
      assertTrue(Double.isFinite(v) && v >= 0, path + " = " + v);
    }
    for (Iterator<Map.Entry<String, JsonNode>> it = node.properties().iterator(); it.hasNext();) {
      Map.Entry<String, JsonNode> f = it.next();
      assertNumbersValid(f.getValue(), path + "." + f.getKey());
    }
    if (node.isArray()) {
      for (JsonNode c : node) {
        assertNumbersValid(c, path + "[]");
      }
    }
  }
}
