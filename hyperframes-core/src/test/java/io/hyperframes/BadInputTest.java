package io.hyperframes;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** Every kind of bad request fails with an IllegalArgumentException naming the field and value. */
class BadInputTest {

  static final String VALID = """
      {"model": {"name": "gpt", "layers": 24, "hidden": 2048, "heads": 16, "vocab": 51200,
                 "seqLen": 2048},
       "cluster": {"accelerator": "a100-sxm-80gb", "devices": 16, "devicesPerNode": 8},
       "workload": {"type": "training", "precision": "bf16-mixed", "globalBatchSize": 64,
                    "optimizer": "adam"},
       "layout": {"tp": 2, "pp": 2, "dp": 4, "recompute": "selective", "zeroStage": 1}}
      """;

  static Stream<Arguments> cases() {
    return Stream.of(
        Arguments.of("\"layers\": 24", "\"layers\": 0", "model.layers", "0"),
        Arguments.of("\"layers\": 24", "\"layers\": -3", "model.layers", "-3"),
        Arguments.of("\"hidden\": 2048", "\"hidden\": 2050", "model.hidden", "2050"),
        Arguments.of("\"heads\": 16,", "\"heads\": 16, \"kvHeads\": 3,", "model.kvHeads", "3"),
        Arguments.of("\"tp\": 2, \"pp\": 2, \"dp\": 4", "\"tp\": 2, \"pp\": 2, \"dp\": 2",
            "layout", "16"),
        Arguments.of("\"tp\": 2, \"pp\": 2, \"dp\": 4", "\"tp\": 3, \"pp\": 1", "layout.tp", "3"),
        Arguments.of("\"pp\": 2, \"dp\": 4", "\"pp\": 32, \"dp\": 4", "layout.pp", "32"),
        Arguments.of("\"devices\": 16", "\"devices\": 12", "cluster.devices", "12"),
        Arguments.of("\"a100-sxm-80gb\"", "\"tpu-v9\"", "cluster.accelerator", "tpu-v9"),
        Arguments.of("\"bf16-mixed\"", "\"fp7\"", "workload.precision", "fp7"),
        Arguments.of("\"selective\"", "\"some\"", "layout.recompute", "some"),
        Arguments.of("\"zeroStage\": 1", "\"zeroStage\": 4", "layout.zeroStage", "4"),
        Arguments.of("\"zeroStage\": 1", "\"zeroStage\": -1", "layout.zeroStage", "-1"),
        Arguments.of("\"globalBatchSize\": 64", "\"globalBatchSize\": NaN",
            "request: malformed JSON", "NaN"),
        Arguments.of("\"globalBatchSize\": 64", "\"globalBatchSize\": Infinity",
            "request: malformed JSON", "Infinity"),
        Arguments.of("\"globalBatchSize\": 64", "\"globalBatchSize\": 1e308",
            "workload.globalBatchSize", "1.0E308"),
        Arguments.of("\"seqLen\": 2048", "\"seqLen\": 1e308", "model.seqLen", "1.0E308"),
        Arguments.of("\"globalBatchSize\": 64", "\"globalBatchSize\": \"64\"",
            "workload.globalBatchSize", "\"64\""),
        Arguments.of("\"globalBatchSize\": 64", "\"globalBatchSize\": 6.5",
            "workload.globalBatchSize", "6.5"),
        Arguments.of("\"type\": \"training\", ", "", "workload.type", "missing"),
        Arguments.of("\"devices\": 16, ", "", "cluster.devices", "missing"),
        Arguments.of("{\"name\": \"gpt\", \"layers\": 24, \"hidden\": 2048, \"heads\": 16,"
            + " \"vocab\": 51200,\n           \"seqLen\": 2048}", "{\"catalog\": \"gpt-7\"}",
            "model.catalog", "gpt-7"),
        Arguments.of("\"optimizer\": \"adam\"", "\"optimizer\": \"lion\"", "workload.optimizer",
            "lion"),
        Arguments.of("\"optimizer\": \"adam\"", "\"optimizer\": \"adam\", \"attention\": \"fast\"",
            "workload.attention", "fast"),
        Arguments.of("\"optimizer\": \"adam\"", "\"optimizer\": \"adam\", \"attention\": 2",
            "workload.attention", "2"),
        Arguments.of("\"optimizer\": \"adam\"", "\"optimizer\": \"adam\", \"kernels\": \"jit\"",
            "workload.kernels", "jit"),
        Arguments.of("\"tp\": 2,", "\"tp\": true,", "layout.tp", "true"),
        Arguments.of("\"tp\": 2,", "\"tp\": 2.0,", "layout.tp", "2.0"),
        Arguments.of("\"tp\": 2,", "\"tp\": 3000000000,", "layout.tp", "3000000000"),
        Arguments.of("\"tp\": 2,", "\"tp\": [2],", "layout.tp", "an array"),
        Arguments.of("\"bf16-mixed\"", "16", "workload.precision", "must be a string, got 16"),
        Arguments.of("\"seqLen\": 2048}", "\"seqLen\": 2048, \"depth\": 3}", "model.depth",
            "expected one of catalog, name, layers, hidden, heads"),
        Arguments.of("\"devicesPerNode\": 8", "\"devicesPerNode\": \"8\"",
            "cluster.devicesPerNode", "must be an integer, got \"8\""),
        Arguments.of("\"layout\": {", "\"layout\": [{", "request: malformed JSON", ""),
        Arguments.of("\"recompute\": \"selective\"", "\"recompute\": \"selective\", \"foo\": 1",
            "layout.foo", "unknown"));
  }

  @ParameterizedTest(name = "{2} {3}")
  @MethodSource("cases")
  void rejectsWithFieldAndValue(String from, String to, String field, String value) {
    String json = VALID.replace(from, to);
    assertTrue(!json.equals(VALID), "replacement did not apply: " + from);
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> HyperFrames.estimate(json));
    assertTrue(e.getMessage().startsWith(field) || e.getMessage().contains(field),
        () -> "message does not name " + field + ": " + e.getMessage());
    assertTrue(e.getMessage().contains(value),
        () -> "message does not show " + value + ": " + e.getMessage());
    assertTrue(!e.getMessage().contains("\n"), "one line: " + e.getMessage());
  }

  @ParameterizedTest
  @MethodSource("documents")
  void rejectsBrokenDocuments(String json, String expected) {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> HyperFrames.estimate(json));
    assertTrue(e.getMessage().contains(expected), e.getMessage());
  }

  static Stream<Arguments> documents() {
    return Stream.of(
        Arguments.of("", "empty"),
        Arguments.of("   \n", "empty"),
        Arguments.of("{", "malformed JSON"),
        Arguments.of("[]", "must be a JSON object"),
        Arguments.of("42", "must be a JSON object"),
        Arguments.of("{}", "model: missing required field"),
        Arguments.of("{\"model\": 3}", "model: must be an object"));
  }

  @org.junit.jupiter.api.Test
  void theValidRequestEstimates() {
    assertTrue(HyperFrames.estimate(VALID).stepSeconds() > 0);
  }
}
