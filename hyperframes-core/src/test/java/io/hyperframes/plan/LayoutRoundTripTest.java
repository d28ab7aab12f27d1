package io.hyperframes.plan;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.hyperframes.request.Requests;
import io.hyperframes.json.Json;
import org.junit.jupiter.api.Test;

/**
 * An estimate's own {@code layout} is a valid request layout that gives the same estimate: its
 * neutral values (shardGroupSize 0, recomputeModules [] without selective recomputation,
 * reshardAfterForward true below ZeRO-3, cpCommType p2p at cp 1, etp = tp and the all-to-all
 * dispatcher without experts) are read as what they mean.
 */
class LayoutRoundTripTest {

  private static final String[] REQUESTS = {
      "{\"model\": {\"catalog\": \"llama2-7b\"}, \"cluster\": {\"accelerator\":"
          + " \"a100-sxm-80gb\", \"devices\": 16}, \"workload\": {\"type\": \"training\","
          + " \"precision\": \"bf16-mixed\", \"globalBatchSize\": 256}, \"layout\": {}}",
      "{\"model\": {\"catalog\": \"llama2-7b\"}, \"cluster\": {\"accelerator\":"
          + " \"h100-sxm-80gb\", \"devices\": 16}, \"workload\": {\"type\": \"training\","
          + " \"precision\": \"bf16-mixed\", \"globalBatchSize\": 256}, \"layout\": {\"engine\":"
          + " \"fsdp\", \"zeroStage\": 3}}",
      "{\"model\": {\"catalog\": \"mixtral-8x7b\"}, \"cluster\": {\"accelerator\":"
          + " \"h100-sxm-80gb\", \"devices\": 64}, \"workload\": {\"type\": \"training\","
          + " \"precision\": \"bf16-mixed\", \"globalBatchSize\": 256}, \"layout\": {\"tp\": 2,"
          + " \"pp\": 4, \"virtualStages\": 2, \"ep\": 8, \"etp\": 1, \"moeDispatcher\":"
          + " \"deepep\", \"overlapMoeComm\": true, \"recompute\": \"selective\"}}"};

  @Test
  void anEstimatesLayoutEstimatesTheSame() {
    for (String json : REQUESTS) {
      TrainingEstimate first = TrainingEstimator.analytical().estimate(Requests.parse(json));
      ObjectNode request = (ObjectNode) Json.parseObject("request", json);
      request.set("layout", EstimateJson.toJson(first).get("layout"));
      TrainingEstimate again = TrainingEstimator.analytical().estimate(
          Requests.parse(request.toString()));
      assertEquals(first.layout(), again.layout(), request.toString());
      assertEquals(first.stepSeconds(), again.stepSeconds(), 0.0, request.toString());
    }
  }
}
