package io.hyperframes.inference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.hyperframes.catalog.Catalog;
import io.hyperframes.json.Json;
import io.hyperframes.model.TransformerSpec;
import org.junit.jupiter.api.Test;

/**
 * A decode step of a mixture of experts reads the experts its batch touches: k of E at batch
 * 1, nearly all E at a large batch, E·(1 − (1 − k/E)^B) in between; the serving JSON reports
 * the bytes ({@code inference.expertWeightBytesPerDecodeStep}).
 */
class ExpertReadsTest {

  private static JsonNode serve(String model, int batch) {
    String json = "{\"model\": {\"catalog\": \"" + model + "\"}, \"cluster\": {\"accelerator\":"
        + " \"h100-sxm-80gb\", \"devices\": 2}, \"workload\": {\"type\": \"inference\","
        + " \"precision\": \"fp16\", \"batchSize\": " + batch + ", \"promptTokens\": 1024,"
        + " \"outputTokens\": 256}, \"layout\": {\"tp\": 2}}";
    return Serving.toJson(Serving.evaluate(Serving.fromJson(Json.parseObject("request", json),
        Catalog.builtIn())));
  }

  @Test
  void aDecodeStepReadsTheExpertsItsBatchTouches() {
    TransformerSpec m = Catalog.builtIn().model("model", "mixtral-8x7b");
    double oneExpert = m.layers() * m.mlpParameters(m.moe().expertFfnHidden()) / 2 * 2.0;
    double one = serve("mixtral-8x7b", 1).at("/inference/expertWeightBytesPerDecodeStep")
        .asDouble();
    assertEquals(2 * oneExpert, one, 1e-9 * one, "batch 1 reads its top-2 experts");
    double many = serve("mixtral-8x7b", 256).at("/inference/expertWeightBytesPerDecodeStep")
        .asDouble();
    assertEquals(8 * oneExpert, many, 1e-6 * many, "a large batch reads nearly all 8");
    assertEquals(8 * (1 - Math.pow(0.75, 4)) * oneExpert, ExpertWeights
        .expertBytesPerDecodeStep(m, m.layers(), 2, 1, 4, 2.0), 1e-9 * oneExpert);
    assertTrue(serve("mixtral-8x7b", 64).at("/inference/tpotSeconds").asDouble()
        > serve("mixtral-8x7b", 1).at("/inference/tpotSeconds").asDouble());
    assertEquals(0.0, serve("mistral-7b", 8).at("/inference/expertWeightBytesPerDecodeStep")
        .asDouble(), "a dense model has no experts to read");
  }
}
