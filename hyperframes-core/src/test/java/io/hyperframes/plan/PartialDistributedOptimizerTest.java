package io.hyperframes.plan;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.hyperframes.HyperFrames;
import io.hyperframes.PlanRequests;
import io.hyperframes.launch.LaunchConfigs;
import io.hyperframes.model.TransformerSpec;
import org.junit.jupiter.api.Test;

/**
 * {@code layout.shardGroupSize} under ZeRO-1: Megatron-Core's partial distributed optimizer
 * ({@code --num-distributed-optimizer-instances}), optimizer states sharded within a group of
 * data-parallel ranks and replicated across the groups; the gradients reduce-scattered within
 * the group and each shard all-reduced across the groups.
 */
class PartialDistributedOptimizerTest {

  private static final String REQUEST = """
      {"model": {"catalog": "llama2-7b"},
       "cluster": {"accelerator": "a100-sxm-80gb", "devices": 1024},
       "workload": {"type": "training", "precision": "bf16-mixed", "globalBatchSize": 8192,
                    "trainingTokens": 1e10},
       "layout": {"tp": 1, "pp": 1, "dp": 1024, "microBatch": 2, "recompute": "none",
                  "zeroStage": 1%s}}
      """;

  private static TrainingEstimate estimate(String extra) {
    return HyperFrames.estimate(REQUEST.formatted(extra));
  }

  @Test
  void statesShardWithinTheGroupAndTheGradientsCrossTheGroups() {
    TrainingEstimate all = estimate("");
    TrainingEstimate node = estimate(", \"shardGroupSize\": 8");
    assertEquals(8, node.layout().shardRanks());
    assertEquals(1024, all.layout().shardRanks());
    // 1024 / 8 times the optimizer states a device; weights and gradients unsharded in both.
    assertEquals(128.0, node.memory().optimizerBytes() / all.memory().optimizerBytes(), 1e-9);
    assertEquals(all.memory().weightsBytes(), node.memory().weightsBytes(), 0.0);
    assertEquals(all.memory().gradientsBytes(), node.memory().gradientsBytes(), 0.0);
    assertEquals(all.time().computeSeconds(), node.time().computeSeconds(), 1e-12);
    // The gather stays inside the node and the reduction is an all-reduce of an eighth across
    // the nodes: never more exposed than the reduce-scatter and gather over every rank.
    assertTrue(node.time().dataParallelCommSeconds() <= all.time().dataParallelCommSeconds(),
        node.time() + " against " + all.time());
    // One group of every rank is the plain distributed optimizer.
    TrainingEstimate whole = estimate(", \"shardGroupSize\": 1024");
    assertEquals(all.stepSeconds(), whole.stepSeconds(), 1e-12);
    assertEquals(all.memory().totalBytes(), whole.memory().totalBytes(), 0.0);
  }

  /**
   * Without overlap the exposed time is the collectives themselves: a group's reduce-scatter and
   * gather are those of a one-node job of the group's size, and the all-reduce of the shards
   * across the groups comes on top.
   */
  @Test
  void theGroupsCollectivesAreANodesPlusTheReplicasAllReduce() {
    String off = ", \"overlapGradReduce\": false, \"overlapParamGather\": false";
    TrainingEstimate node = estimate(off + ", \"shardGroupSize\": 8");
    TrainingEstimate oneNode = HyperFrames.estimate(REQUEST.formatted(off)
        .replace("\"devices\": 1024", "\"devices\": 8").replace("\"dp\": 1024", "\"dp\": 8")
        .replace("\"globalBatchSize\": 8192", "\"globalBatchSize\": 64"));
    double group = oneNode.time().dataParallelCommSeconds();
    double all = node.time().dataParallelCommSeconds();
    assertTrue(group > 0.0 && all > group, group + " then " + all);
    assertEquals(oneNode.memory().optimizerBytes(), node.memory().optimizerBytes(), 0.0);
  }

  @Test
  void onlyMegatronRunsItAndOnlyUnderZeroOne() {
    IllegalArgumentException deepspeed = assertThrows(IllegalArgumentException.class,
        () -> estimate(", \"shardGroupSize\": 8, \"engine\": \"deepspeed\""));
    assertTrue(deepspeed.getMessage().startsWith("layout.shardGroupSize: 8 with zeroStage 1 is"
        + " not run by deepspeed"), deepspeed.getMessage());
    IllegalArgumentException zero2 = assertThrows(IllegalArgumentException.class,
        () -> HyperFrames.estimate(REQUEST.formatted(", \"shardGroupSize\": 8")
            .replace("\"zeroStage\": 1", "\"zeroStage\": 2")));
    assertTrue(zero2.getMessage().startsWith("layout.shardGroupSize: 8 needs zeroStage 1 or 3"),
        zero2.getMessage());
    IllegalArgumentException divides = assertThrows(IllegalArgumentException.class,
        () -> estimate(", \"shardGroupSize\": 24"));
    assertTrue(divides.getMessage().contains("layout.shardGroupSize: 24"),
        divides.getMessage());
  }

  @Test
  void theMegatronLaunchNamesTheInstances() {
    var r = PlanRequests.parse(REQUEST.formatted(", \"shardGroupSize\": 8,"
        + " \"engine\": \"megatron\""));
    Plan p = Planner.analytical().plan(r);
    assertEquals(8, p.best().estimate().layout().shardGroupSize());
    String text = LaunchConfigs.megatron(p.best(), (TransformerSpec) r.model(),
        p.goldenParameters()).text();
    assertTrue(text.contains("--use-distributed-optimizer"), text);
    assertTrue(text.contains("--num-distributed-optimizer-instances 128"), text);
    assertTrue(!text.contains("--use-megatron-fsdp"), text);
  }
}
