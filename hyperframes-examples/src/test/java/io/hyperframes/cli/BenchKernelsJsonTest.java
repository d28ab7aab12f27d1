package io.hyperframes.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.hyperframes.nd4j.Activation;
import io.hyperframes.nd4j.FusedDense;
import io.hyperframes.nd4j.KernelComparison;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.nd4j.linalg.api.buffer.DataType;

/** The JSON contract of {@code hyperframes bench kernels --format json}, on small shapes. */
class BenchKernelsJsonTest {

  @Test
  void rowsCarryTheContractFieldsAndBaselineNames() {
    KernelComparison c = new KernelComparison(0.01, 1);
    List<KernelComparison.Row> rows = List.of(c.matmul(DataType.BFLOAT16, 32, 32, 32),
        c.denseForward(FusedDense.Precision.BF16, Activation.GELU_TANH, 16, 32, 32),
        c.denseBackward(FusedDense.Precision.FP32, Activation.RELU, 16, 32, 32),
        c.denseForwardTraining(FusedDense.Precision.FP32, Activation.RELU, 16, 32, 32));
    JsonNode json = BenchKernelsCommand.json(rows);
    assertTrue(json.get("machine").has("onednn.version"));
    assertTrue(json.get("machine").get("cores").asInt() > 0);
    JsonNode results = json.get("results");
    assertEquals(4, results.size());
    for (JsonNode r : results) {
      for (String f : List.of("kernel", "precision", "shape", "activation", "gflops",
          "implementation", "baselines", "speedups")) {
        assertTrue(r.has(f), "missing " + f + " in " + r);
      }
      assertTrue(r.get("gflops").asDouble() > 0);
      assertTrue(r.get("baselines").has("nd4j-fp32-unfused")
          || r.get("baselines").has("nd4j-fp32-mmul"));
    }
    assertEquals("matmul", results.get(0).get("kernel").asText());
    assertEquals("32x32x32", results.get(0).get("shape").asText());
    assertTrue(results.get(0).get("baselines").has("nd4j-bf16-mmul"));
    assertEquals("dense-forward", results.get(1).get("kernel").asText());
    assertEquals("dense-backward", results.get(2).get("kernel").asText());
    assertTrue(results.get(2).get("speedups").has("nd4j-fp32-unfused"));
    assertEquals("dense-forward-training", results.get(3).get("kernel").asText());
    assertTrue(results.get(3).get("speedups").has("hyperframes-forward"));
    // Every dense row has the same layer into caller-owned outputs beside it; the BF16 forward
    // also with its operands already in BF16, as the BF16 matmul limit takes them.
    for (int i = 1; i <= 3; i++) {
      assertTrue(results.get(i).get("baselines").get(KernelComparison.INTO).asDouble() > 0);
    }
    assertTrue(results.get(1).get("baselines").has(KernelComparison.INTO_BF16));
    assertTrue(!results.get(2).get("baselines").has(KernelComparison.INTO_BF16));
  }
}
