package io.hyperframes.plan;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.hyperframes.request.Requests;
import io.hyperframes.calibrate.Calibration;
import io.hyperframes.calibrate.Calibration.Constant;
import io.hyperframes.catalog.Catalog;
import io.hyperframes.json.Json;
import io.hyperframes.parallel.Engine;
import io.hyperframes.precision.NumberFormat;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.EnumSet;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Kernel constants scoped to an engine: resolution, catalog entries and their calibration. */
class EngineKernelsTest {

  static String request(String accelerator, String engine) {
    return """
        {"model": {"catalog": "llama2-7b"},
         "cluster": {"accelerator": "%s", "devices": 64, "devicesPerNode": 8},
         "workload": {"type": "training", "precision": "bf16-mixed", "globalBatchSize": 128},
         "layout": {"tp": 1, "pp": 1, "dp": 64, "microBatch": 2, "recompute": "none",
                    "zeroStage": 3, "engine": "%s"}}
        """.formatted(accelerator, engine);
  }

  private static double matmul(String accelerator, String engine) {
    return Requests.fromJson(Json.parseObject("request", request(accelerator, engine)),
        Catalog.builtIn()).cluster().accelerator().kernel(NumberFormat.BF16).matmul();
  }

  @Test
  void onlyTheScopedEngineOnTheScopedGenerationGetsItsConstants() {
    Catalog c = Catalog.builtIn();
    double hopper = c.kernels().get("hopper").get(NumberFormat.BF16).matmul();
    double fsdp = c.kernels().get(Catalog.scopedKey("hopper", Engine.FSDP))
        .get(NumberFormat.BF16).matmul();
    assertTrue(fsdp < hopper, "PyTorch FSDP's Hopper kernels are below Megatron-Core's");
    assertEquals(fsdp, matmul("h100-sxm-80gb", "fsdp"));
    assertEquals(hopper, matmul("h100-sxm-80gb", "megatron"));
    assertEquals(hopper, matmul("h100-sxm-80gb", "maxtext"));
    // No scoped entry on Ampere: FSDP runs on the generation's constants there.
    assertEquals(matmul("a100-sxm-80gb", "megatron"), matmul("a100-sxm-80gb", "fsdp"));
    // The rest of the entry is the generation's: only the matmul efficiency was fitted.
    assertEquals(c.kernels().get("hopper").get(NumberFormat.BF16).halfDim(),
        c.kernels().get("hopper@fsdp").get(NumberFormat.BF16).halfDim());
  }

  @Test
  void aCatalogEntryNamesAKnownEngine(@TempDir Path dir) throws IOException {
    Path bad = dir.resolve("bad.json");
    Files.writeString(bad, """
        {"kernels": [{"generation": "hopper", "engine": "jax", "formats": ["bf16"],
          "matmulEfficiency": 0.7, "matmulHalfDim": 400, "matmulHalfRows": 64,
          "attentionEfficiency": 0, "layerOverheadUs": 0, "source": "test"}]}
        """);
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> Catalog.builtIn().withOverrides(bad));
    assertTrue(e.getMessage().contains("kernels[hopper].engine: unknown engine 'jax'"),
        e.getMessage());
  }

  @Test
  void aScopedFitRecoversAPlantedEfficiencyAndLeavesTheGenerationAlone() {
    // Cases made by the planner itself with the scoped matmul efficiency at 0.55: the scoped
    // fit must find 0.55 for hopper@fsdp from a start of 0.76 and touch nothing else.
    Catalog planted = Catalog.builtIn().withKernel("hopper@fsdp", NumberFormat.BF16,
        Catalog.builtIn().kernels().get("hopper").get(NumberFormat.BF16).withMatmul(0.55))
        .withKernel("hopper@fsdp", NumberFormat.FP16,
            Catalog.builtIn().kernels().get("hopper").get(NumberFormat.BF16).withMatmul(0.55));
    StringBuilder cases = new StringBuilder("{\"cases\": [");
    String[] models = {"llama2-7b", "llama2-13b", "llama2-70b"};
    for (int i = 0; i < models.length; i++) {
      String req = request("h100-sxm-80gb", "fsdp").replace("llama2-7b", models[i])
          .replace("\"recompute\": \"none\"", "\"recompute\": \"full\"");
      double tokens = io.hyperframes.plan.TrainingEstimator.analytical().estimate(
          Requests.fromJson(Json.parseObject("request", req), planted)).tokensPerSecondPerDevice();
      cases.append(i > 0 ? "," : "").append("{\"id\": \"planted-").append(i)
          .append("\", \"source\": \"test\", \"request\": ").append(req)
          .append(", \"expected\": {\"tokensPerSecondPerDevice\": ").append(tokens).append("}}");
    }
    cases.append("]}");
    Catalog start = Catalog.builtIn().withKernel("hopper@fsdp", NumberFormat.BF16,
        Catalog.builtIn().kernels().get("hopper").get(NumberFormat.BF16))
        .withKernel("hopper@fsdp", NumberFormat.FP16,
            Catalog.builtIn().kernels().get("hopper").get(NumberFormat.BF16));
    Calibration.Result r = Calibration.fit(cases.toString(), start,
        EnumSet.of(Constant.MATMUL_HALF_DIM),
        Map.of("hopper@fsdp", EnumSet.of(Constant.MATMUL_EFFICIENCY)));
    assertEquals(1, r.fitted().size(), r.fitted().toString());
    assertEquals("hopper@fsdp/bf16", r.fitted().get(0).target());
    assertEquals(0.55, r.fitted().get(0).after(), 0.55 * 0.01);
    assertEquals(Catalog.builtIn().kernels().get("hopper").get(NumberFormat.BF16),
        r.catalog().kernels().get("hopper").get(NumberFormat.BF16));
    assertTrue(r.toCatalogJson().contains("\"engine\" : \"fsdp\""), r.toCatalogJson());
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> Calibration.fit(cases.toString(), start, EnumSet.of(Constant.MATMUL_HALF_DIM),
            Map.of("hopper", EnumSet.of(Constant.MATMUL_EFFICIENCY))));
    assertTrue(e.getMessage().startsWith("scope: expected generation@engine"), e.getMessage());
  }
}
