package io.hyperframes.inference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.hyperframes.catalog.Catalog;
import io.hyperframes.hardware.Cluster;
import io.hyperframes.json.Json;
import io.hyperframes.model.TransformerSpec;
import io.hyperframes.precision.NumberFormat;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Expert parallelism in serving: the routed experts of a replica split over its tensor-parallel
 * ranks. Weights per device are unchanged; the busiest rank sets the MoE time; the planner
 * searches it; bad sizes are named.
 */
class ServingExpertParallelTest {

  private static final Catalog CATALOG = Catalog.builtIn();
  private static final InferenceEstimator ESTIMATOR = InferenceEstimator.analytical();

  private static Cluster cluster(int devices) {
    var a = CATALOG.accelerators().get("h100-sxm-80gb");
    var node = CATALOG.nodes().get(a.defaultNode());
    return new Cluster(a, devices, node.devicesPerNode(), a.intraNode(), node.interNode());
  }

  private static InferenceWorkload workload(int batch) {
    return new InferenceWorkload(NumberFormat.FP16, NumberFormat.FP16, batch, 1024, 256, 0, 0, 0,
        99, 16);
  }

  private static InferenceEstimate mixtral(int tp, int ep, int batch) {
    TransformerSpec m = CATALOG.models().get("mixtral-8x7b");
    Cluster c = cluster(tp);
    return ESTIMATOR.estimate(m, c, workload(batch), tp, ep, 1, 1);
  }

  @Test
  void theExpectedMaximumOfBinomialCountsIsExact() {
    // Two Bin(2, 1/2) counts: F(0) = 1/4, F(1) = 3/4, E[max] = (1 - 1/16) + (1 - 9/16).
    assertEquals(1.375, ExpertBalance.expectedMax(2, 0.5, 2), 1e-12);
    assertEquals(37 * 0.3, ExpertBalance.expectedMax(37, 0.3, 1), 1e-12, "one rank: the mean");
    assertEquals(5.0, ExpertBalance.expectedMax(5, 1.0, 4), 1e-12, "certain: all trials");
    // E[max of two standard normals] = 1/sqrt(pi).
    assertEquals(1 / Math.sqrt(Math.PI), ExpertBalance.maxOfNormals(2), 1e-4);
    double exact = ExpertBalance.expectedMax(ExpertBalance.EXACT_TRIALS, 0.125, 8);
    double normal = ExpertBalance.expectedMax(ExpertBalance.EXACT_TRIALS + 1, 0.125, 8);
    assertEquals(exact, normal, 0.01 * exact, "the normal approximation joins the exact sum");
    assertTrue(exact > ExpertBalance.EXACT_TRIALS * 0.125, "the busiest rank is above the mean");
  }

  @Test
  void weightsPerDeviceDoNotDependOnTheExpertSplit() {
    assertEquals(mixtral(8, 1, 16).weightsBytes(), mixtral(8, 8, 16).weightsBytes(), 1.0);
    assertEquals(mixtral(4, 1, 16).maxBatchSize(), mixtral(4, 4, 16).maxBatchSize());
  }

  @Test
  void theBusiestRankReadsWholeExpertsAtBatchOneAndTheSameShareAtALargeBatch() {
    TransformerSpec m = CATALOG.models().get("mixtral-8x7b");
    double expert = m.layers() * m.mlpParameters(m.moe().expertFfnHidden()) * 2.0;
    // Batch 1, top-2 of 8 experts on 8 ranks: every rank holds one expert, the busiest reads
    // it whole (at least one of the eight is touched); split over tp, each reads 2/8 of one.
    assertEquals(expert, mixtral(8, 8, 1).expertWeightBytesPerDecodeStep(), 1e-9 * expert);
    assertEquals(expert / 4, mixtral(8, 1, 1).expertWeightBytesPerDecodeStep(), 1e-9 * expert);
    assertTrue(mixtral(8, 8, 1).tpotSeconds() > mixtral(8, 1, 1).tpotSeconds(),
        "at batch 1 the expert-parallel rank waits on a whole expert");
    assertEquals(mixtral(8, 1, 256).expertWeightBytesPerDecodeStep(),
        mixtral(8, 8, 256).expertWeightBytesPerDecodeStep(), 1e-6 * expert,
        "a large batch touches every expert: each rank reads 1/8 of the experts either way");
  }

  @Test
  void theRequestCarriesLayoutEpAndTheJsonReportsIt() {
    String json = "{\"model\": {\"catalog\": \"mixtral-8x7b\"}, \"cluster\": {\"accelerator\":"
        + " \"h100-sxm-80gb\", \"devices\": 4}, \"workload\": {\"type\": \"inference\","
        + " \"precision\": \"fp16\", \"batchSize\": 32, \"promptTokens\": 1024,"
        + " \"outputTokens\": 256}, \"layout\": {\"tp\": 4, \"ep\": 4}}";
    JsonNode out = Serving.toJson(Serving.evaluate(Serving.fromJson(
        Json.parseObject("request", json), CATALOG)));
    assertEquals(4, out.at("/layout/ep").asInt());
    assertEquals(mixtral(4, 4, 32).tpotSeconds(), out.at("/inference/tpotSeconds").asDouble(),
        1e-12);
    InferenceResult fluent = io.hyperframes.HyperFrames.serve().model("mixtral-8x7b")
        .accelerator("h100-sxm-80gb").devices(4).precision("fp16").batch(32).prompt(1024)
        .output(256).layout(l -> l.tp(4).ep(4)).run();
    assertEquals(4, fluent.estimate().ep());
    assertEquals(mixtral(4, 4, 32).tpotSeconds(), fluent.estimate().tpotSeconds(), 1e-12);
    // Experts over four single-GPU replicas, with two-batch overlap: the builder writes what
    // the JSON says, and the estimate is the estimator's for that group.
    InferenceResult spread = io.hyperframes.HyperFrames.serve().model("mixtral-8x7b")
        .accelerator("h100-sxm-80gb").devices(4).precision("fp16").batch(32).prompt(1024)
        .output(256).layout(l -> l.tp(1).ep(4).dp(4).twoBatchOverlap(true)).run();
    assertTrue(spread.estimate().twoBatchOverlap());
    assertEquals(ESTIMATOR.estimate(CATALOG.models().get("mixtral-8x7b"), cluster(4),
        workload(32), 1, 4, 1, 4, true).tpotSeconds(), spread.estimate().tpotSeconds(), 1e-12);
  }

  @Test
  void badExpertParallelSizesAreNamed() {
    IllegalArgumentException notDividingTp = assertThrows(IllegalArgumentException.class,
        () -> mixtral(8, 3, 1));
    assertTrue(notDividingTp.getMessage().contains("layout.ep: 3 does not divide layout.tp 8"),
        notDividingTp.getMessage());
    TransformerSpec dense = CATALOG.models().get("mistral-7b");
    IllegalArgumentException denseModel = assertThrows(IllegalArgumentException.class,
        () -> ESTIMATOR.estimate(dense, cluster(2), workload(1), 2, 2,
            1, 1));
    assertTrue(denseModel.getMessage().contains("layout.ep: 2 needs a mixture-of-experts"),
        denseModel.getMessage());
    IllegalArgumentException zero = assertThrows(IllegalArgumentException.class,
        () -> mixtral(2, 0, 1));
    assertTrue(zero.getMessage().startsWith("layout.ep: must be > 0"), zero.getMessage());
  }

  @Test
  void thePlannerSearchesExpertParallelismAndTheSplitWinsForMixtralOnEightH100() {
    TransformerSpec m = CATALOG.models().get("mixtral-8x7b");
    assertEquals(List.of(1, 4), InferencePlanner.expertParallelSizes(m, 4));
    assertEquals(List.of(1), InferencePlanner.expertParallelSizes(m, 1));
    assertEquals(List.of(1), InferencePlanner.expertParallelSizes(
        CATALOG.models().get("mistral-7b"), 4));
    InferenceWorkload w = new InferenceWorkload(NumberFormat.FP16, NumberFormat.FP16, 64, 1024,
        256, 50, 0.5, 0.05, 99, 16);
    InferencePlanner.ServingPlan plan = InferencePlanner.plan(m,
        cluster(8), w, List.of(), List.of(), 0, 1000);
    // Fewest devices: the experts over two replicas of one device each (attention
    // data-parallel), in whole groups.
    InferencePlanner.Config best = plan.best();
    assertEquals(6, best.devices(), ServingPlans.describe(best));
    assertEquals(1, best.tp(), ServingPlans.describe(best));
    assertEquals(2, best.ep(), ServingPlans.describe(best));
    assertEquals(0, best.replicas() % best.replicasPerGroup(), ServingPlans.describe(best));
    // Within a replica, splitting the experts over its ranks serves faster than not at the
    // same devices.
    List<InferencePlanner.Config> all = new java.util.ArrayList<>(plan.alternatives());
    all.add(0, best);
    InferencePlanner.Config within = all.stream()
        .filter(c -> c.replicasPerGroup() == 1 && c.ep() > 1).findFirst().orElseThrow();
    assertEquals(8, within.devices(), ServingPlans.describe(within));
    InferencePlanner.Config unsplit = all.stream()
        .filter(c -> c.tp() == within.tp() && c.ep() == 1 && c.replicas() == within.replicas()
            && c.batchLimit() == within.batchLimit())
        .findFirst().orElseThrow();
    assertTrue(within.load().p99() < unsplit.load().p99(), "the split serves faster at the"
        + " same devices: " + ServingPlans.describe(unsplit));
  }
}
