package io.hyperframes.plan;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.hyperframes.HyperFrames;
import io.hyperframes.catalog.Catalog;
import io.hyperframes.hardware.Cluster;
import io.hyperframes.interconnect.Collective;
import io.hyperframes.interconnect.CollectiveGroup;
import io.hyperframes.interconnect.CollectiveTime;
import io.hyperframes.interconnect.InterconnectModel;
import io.hyperframes.parallel.Engine;
import io.hyperframes.parallel.Layout;
import io.hyperframes.parallel.ModelStates;
import io.hyperframes.parallel.Recompute;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A mixture of experts' routed-expert gradients are reduced over the expert data-parallel group
 * ({@code tp · cp · dp / (ep · etp)} ranks, Megatron-Core's {@code expt_dp_group}), the dense
 * ones over {@code dp · cp}; a dense model has one group, as before the two were told apart.
 */
class ExpertDataParallelTest {

  private static Cluster h100(int devices) {
    var acc = Catalog.builtIn().accelerators().get("h100-sxm-80gb");
    var node = Catalog.builtIn().nodes().get(acc.defaultNode());
    return new Cluster(acc, devices, node.devicesPerNode(), acc.intraNode(), node.interNode());
  }

  private static Layout zooFsdp() {
    // The model zoo's Megatron-FSDP row: tp 2, ep 8 with whole experts, dp 128 (EDP 32).
    return HyperFrames.estimate().model("qwen3-235b-a22b").accelerator("h100-sxm-80gb")
        .devices(256).training(t -> t.precision("bf16-mixed").globalBatchSize(2048).tokens(1e11))
        .layout(l -> l.tp(2).pp(1).dp(128).ep(8).etp(1).microBatch(4).sequenceParallel(true)
            .recompute(Recompute.FULL).zeroStage(3).engine(Engine.MEGATRON))
        .run().layout();
  }

  /** Records each collective it is asked for and answers one second per gigabyte. */
  private static final class Recording implements InterconnectModel {
    final List<String> calls = new ArrayList<>();

    @Override
    public CollectiveTime time(Cluster cluster, Collective op, double bytes,
        CollectiveGroup group) {
      calls.add(op + " " + group.size() + "/" + group.perNode() + " " + Math.round(bytes));
      return new CollectiveTime(bytes / 1e9, CollectiveTime.NONE.algorithm(), 0.0);
    }
  }

  @Test
  void theExpertsTravelOverTheExpertDataParallelGroup() {
    Layout l = zooFsdp();
    assertEquals(32, l.expertDataParallel());
    ModelStates states = new ModelStates(0, 0, 0, 0, 1000.0, 0, 600.0);
    DataParallelTime.ReductionGroups g = DataParallelTime.ReductionGroups.of(h100(256), l,
        states, l.gradientRanks());
    // dp 128 at tp 2: four ranks a node; the expert group strides by ep·etp = 8: one a node.
    assertEquals(new CollectiveGroup(128, 4), g.dense());
    assertEquals(new CollectiveGroup(32, 1), g.experts());
    assertEquals(400.0, g.denseParameters(), 0.0);
    assertEquals(600.0, g.expertParameters(), 0.0);
    Recording r = new Recording();
    double seconds = g.time(r, h100(256), Collective.REDUCE_SCATTER, 2.0);
    assertEquals(List.of("REDUCE_SCATTER 128/4 800", "REDUCE_SCATTER 32/1 1200"), r.calls);
    assertEquals(2000.0 / 1e9, seconds, 1e-18);
  }

  @Test
  void aDenseModelOrOneExpertGroupEqualToTheDataParallelOneIsOneCollective() {
    Layout l = zooFsdp();
    DataParallelTime.ReductionGroups dense = DataParallelTime.ReductionGroups.of(h100(256), l,
        new ModelStates(0, 0, 0, 0, 1000.0), l.gradientRanks());
    Recording r = new Recording();
    dense.time(r, h100(256), Collective.ALL_REDUCE, 2.0);
    assertEquals(List.of("ALL_REDUCE 128/4 2000"), r.calls);
    // ep 1 with etp = tp: the expert grid is the data-parallel grid.
    Layout same = l.withExperts(1, 2);
    DataParallelTime.ReductionGroups merged = DataParallelTime.ReductionGroups.of(h100(256),
        same, new ModelStates(0, 0, 0, 0, 1000.0, 0, 600.0), same.gradientRanks());
    Recording m = new Recording();
    merged.time(m, h100(256), Collective.ALL_REDUCE, 2.0);
    assertEquals(List.of("ALL_REDUCE 128/4 2000"), m.calls);
  }

  @Test
  void anExpertGroupOfOneRankReducesNothing() {
    // Eight GPUs, ep 8 = dp 8 at tp 1: every rank holds its own experts.
    Layout l = HyperFrames.estimate().model("qwen3-30b-a3b").accelerator("h100-sxm-80gb")
        .devices(8).training(t -> t.precision("bf16-mixed").globalBatchSize(64).tokens(1e9))
        .layout(x -> x.tp(1).pp(1).dp(8).ep(8).etp(1).microBatch(1).zeroStage(1))
        .run().layout();
    assertEquals(1, l.expertDataParallel());
    DataParallelTime.ReductionGroups g = DataParallelTime.ReductionGroups.of(h100(8), l,
        new ModelStates(0, 0, 0, 0, 1000.0, 0, 900.0), l.gradientRanks());
    Recording r = new Recording();
    g.time(r, h100(8), Collective.REDUCE_SCATTER, 2.0);
    assertEquals(List.of("REDUCE_SCATTER 8/8 200"), r.calls);
    assertEquals(1, g.expertRanks());
  }

  @Test
  void hybridShardingAllReducesEachShardAcrossItsReplicas() {
    Layout l = zooFsdp();
    int shard = 32;
    DataParallelTime.ReductionGroups full = DataParallelTime.ReductionGroups.of(h100(256), l,
        new ModelStates(0, 0, 0, 0, 1000.0, 0, 600.0), l.gradientRanks());
    DataParallelTime.ReductionGroups replicas = full.replicasOf(l, shard);
    // Dense: 128 / 32 = 4 replicas of a 32-rank shard; experts: the shard covers 32·2/8 = 8 of
    // the 32 expert data-parallel ranks, so 4 replicas of it.
    assertEquals(4, replicas.dense().size());
    assertEquals(400.0 / 32, replicas.denseParameters(), 1e-12);
    assertEquals(4, replicas.experts().size());
    assertEquals(600.0 / 8, replicas.expertParameters(), 1e-12);
  }
}
