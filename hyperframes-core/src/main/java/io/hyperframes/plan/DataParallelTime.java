package io.hyperframes.plan;

import static io.hyperframes.plan.TrainingEstimator.exposed;

import static com.google.common.base.Preconditions.checkArgument;
import com.google.common.collect.ImmutableList;
import io.hyperframes.request.EstimateRequest;
import io.hyperframes.hardware.Accelerator;
import io.hyperframes.hardware.Cluster;
import io.hyperframes.hardware.KernelEfficiency;
import io.hyperframes.hardware.StepInterval;
import io.hyperframes.interconnect.Collective;
import io.hyperframes.interconnect.CollectiveGroup;
import io.hyperframes.interconnect.ExpertExchange;
import io.hyperframes.interconnect.InterconnectModel;
import io.hyperframes.memory.MemoryHierarchyModel;
import io.hyperframes.model.Block;
import io.hyperframes.model.DenseStackSpec;
import io.hyperframes.model.ModelSpec;
import io.hyperframes.model.MoeSpec;
import io.hyperframes.model.TransformerSpec;
import io.hyperframes.parallel.CpCommType;
import io.hyperframes.parallel.MoeDispatcher;
import io.hyperframes.parallel.Engine;
import io.hyperframes.parallel.Layout;
import io.hyperframes.parallel.ModelStates;
import io.hyperframes.parallel.ParallelismModel;
import io.hyperframes.parallel.PartialLayout;
import io.hyperframes.parallel.Recompute;
import io.hyperframes.parallel.RecomputeModule;
import io.hyperframes.precision.NumberFormat;
import io.hyperframes.precision.model.PrecisionModel;
import io.hyperframes.precision.PrecisionRecipe;
import io.hyperframes.workload.Attention;
import io.hyperframes.workload.GradientCompression;
import io.hyperframes.workload.Kernels;
import io.hyperframes.workload.TrainingWorkload;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * The data-parallel side of a training step: the gradient reduction and parameter gathers of
 * data parallelism, ZeRO and fully sharded data parallelism, timed by the interconnect model and
 * overlapped with the compute window the engine gives them, and the optimizer step. Part of
 * {@link TrainingEstimator}; docs/model-reference.md gives each rule with its source.
 */
final class DataParallelTime {
  /**
   * Gradient compression is modelled where one reduction per step carries the gradients: ZeRO 0
   * (all-reduce) and 1 (reduce-scatter); ZeRO 2 and 3 reduce per micro-batch or per layer.
   */
  static final int MAX_COMPRESSED_ZERO_STAGE = 1;

  private final InterconnectModel interconnect;

  DataParallelTime(InterconnectModel interconnect) {
    this.interconnect = interconnect;
  }

  /**
   * Exposed data-parallel time of a step: the gradient all-reduce (ZeRO 0), reduce-scatter and
   * all-gather (ZeRO 1), the per-micro-batch reduce-scatter (ZeRO 2, Rajbhandari et al. 2020,
   * arXiv 1910.02054, §5.2) or the fully sharded schedule ({@link #fullyShardedExposed}),
   * each overlapped with the compute window the engine gives it
   * ({@link TrainingEstimator#exposed}). A mixture of
   * experts' routed-expert gradients are reduced, and their states sharded, over the expert
   * data-parallel ranks only ({@link ReductionGroups}).
   */
  double exposedSeconds(Cluster cluster, Layout l, ModelStates states,
      TrainingWorkload workload, KernelEfficiency kernel, int units, double forwardUnit,
      double backwardUnit, double backwardWindow, int microBatches, SubModules subModules,
      double recomputeUnit) {
    // Weight gradients are reduced over the data- and context-parallel ranks (dp · cp).
    int ranks = l.gradientRanks();
    ReductionGroups groups = ReductionGroups.of(cluster, l, states, ranks);
    if (ranks <= 1 && groups.expertRanks() <= 1) {
      return 0.0;
    }
    CollectiveGroup group = groups.dense();
    PrecisionRecipe recipe = workload.precision();
    double params = states.parametersOnDevice();
    double gradBytes = recipe.gradientBytes();
    double weightBytes = recipe.weightBytes();
    double kappa = kernel.overlapCost();
    GradientCompression codec = workload.gradientCompression();
    if (codec != null && l.zeroStage() <= MAX_COMPRESSED_ZERO_STAGE) {
      // The gradients' one reduction on compressed bytes: the stage's collective where messages
      // add up, else an all-gather of every rank's message (Agarwal et al. 2022, MLSys, §3);
      // encoding and decoding run on the device, outside the overlap. The codec's message
      // covers every gradient of the device, reduced over dp · cp.
      double message = codec.messageBytes(params);
      double reduce = codec.allReduce()
          ? interconnect.time(cluster, l.zeroStage() == 0 ? Collective.ALL_REDUCE
              : Collective.REDUCE_SCATTER, message, group).seconds()
          : interconnect.time(cluster, Collective.ALL_GATHER, message * ranks, group)
              .seconds();
      double weights = l.zeroStage() == 1 ? interconnect.time(cluster, Collective.ALL_GATHER,
          params * weightBytes, group).seconds() : 0.0;
      return exposed(reduce + weights, backwardWindow, kappa)
          + codec.codecSeconds(params, ranks);
    }
    return switch (l.zeroStage()) {
      case 0 -> exposed(groups.time(interconnect, cluster, Collective.ALL_REDUCE, gradBytes),
          backwardWindow, kappa);
      case 1 -> {
        int shard = l.shardRanks();
        ReductionGroups within = shard < ranks ? ReductionGroups.of(cluster, l, states, shard)
            : groups;
        // Megatron-Core's partial distributed optimizer: the gradients reduce-scattered within
        // the instance, each rank's shard all-reduced across the instances, the parameters
        // gathered within it (param_and_grad_buffer.py at d98e8a64, start_grad_sync).
        double reduce = within.time(interconnect, cluster, Collective.REDUCE_SCATTER, gradBytes)
            + (shard < ranks ? groups.replicasOf(l, shard).time(interconnect, cluster,
                Collective.ALL_REDUCE, gradBytes) : 0.0);
        double gather = within.time(interconnect, cluster, Collective.ALL_GATHER, weightBytes);
        // Megatron-LM's distributed optimizer with --overlap-param-gather (which the Megatron
        // launch emits) gathers the updated parameters bucket by bucket while the next step's
        // first forward pass runs, each bucket waited on by its module's forward pre-hook
        // (megatron/core/distributed/distributed_data_parallel.py, forward pre-hooks and
        // start_param_sync); DeepSpeed gathers them after the step (Engine#overlapsParameterGather).
        yield exposed(reduce, backwardWindow, kappa) + parameterGather(l, gather,
            units * forwardUnit, kappa);
      }
      // ZeRO-2: each micro-batch's gradients reduce-scattered behind its backward pass (the
      // gradients exist only there), the updated parameters gathered once a step where the
      // engine gathers them (as ZeRO-1): no window hides two collectives. Without the overlap
      // (DeepSpeed's overlap_comm false, the only engine that runs it off here) the buckets are
      // still reduced during backward, on the compute stream, so none of it is hidden
      // (deepspeed/runtime/zero/stage_1_and_2.py lines 1051-1058 and 1382-1390 at 38327e07).
      case 2 -> {
        double reduce = groups.time(interconnect, cluster, Collective.REDUCE_SCATTER, gradBytes);
        yield parameterGather(l, groups.time(interconnect, cluster, Collective.ALL_GATHER,
            weightBytes), units * forwardUnit, kappa)
            + microBatches * (l.overlapGradReduce() ? exposed(reduce, units * backwardUnit, kappa)
                : reduce);
      }
      default -> fullyShardedExposed(cluster, l, states, groups, weightBytes, gradBytes, units,
          forwardUnit, backwardUnit, microBatches, backwardWindow, kappa, subModules,
          recomputeUnit);
    };
  }

  /**
   * The two groups a step's gradients are reduced over, each with the parameters of this device
   * it reduces: the dense parameters over the data- and context-parallel ranks (or the ZeRO shard
   * group), the routed experts' over the expert data-parallel ranks, {@code tp · cp · dp /
   * (ep · etp)} (Megatron-Core: expert parameters sit in their own gradient buckets, reduced over
   * the expert data-parallel group, {@code megatron/core/distributed/distributed_data_parallel.py}
   * and {@code parallel_state.get_expert_data_parallel_group} at d98e8a64; the distributed
   * optimizer shards them over the same group). Ranks follow Megatron-Core's orders
   * ({@code tp-cp-ep-dp-pp}; the expert grid {@code etp-ep-edp-pp}): a data-parallel group holds
   * {@code devicesPerNode / tp} ranks per node, an expert data-parallel one
   * {@code devicesPerNode / (etp · ep)}. Where both groups are the same ranks (a dense model,
   * or ep = 1 with etp = tp) the parameters travel as one collective, as before experts were
   * told apart.
   */
  record ReductionGroups(CollectiveGroup dense, double denseParameters, CollectiveGroup experts,
      double expertParameters) {

    static ReductionGroups of(Cluster cluster, Layout l, ModelStates states, int shard) {
      int node = cluster.devicesPerNode();
      int perNode = l.tp() >= node ? 1 : Math.min(shard, node / l.tp());
      CollectiveGroup dense = new CollectiveGroup(shard, Math.max(1, perNode));
      double expertParams = states.expertParametersOnDevice();
      if (expertParams <= 0) {
        return new ReductionGroups(dense, states.parametersOnDevice(), dense, 0.0);
      }
      int expertShard = expertShard(l, shard);
      int grid = l.ep() * l.etp();
      int expertPerNode = grid >= node ? 1 : Math.min(expertShard, node / grid);
      CollectiveGroup experts = new CollectiveGroup(expertShard, Math.max(1, expertPerNode));
      if (experts.equals(dense)) {
        return new ReductionGroups(dense, states.parametersOnDevice(), dense, 0.0);
      }
      return new ReductionGroups(dense, states.parametersOnDevice() - expertParams, experts,
          expertParams);
    }

    /**
     * Ranks a shard group of {@code shard} data-parallel ranks covers in the expert grid:
     * {@code shard · tp / (ep · etp)}, at least 1 (as {@code MegatronParallelism#modelStates}).
     */
    static int expertShard(Layout l, int shard) {
      return (int) Math.max(1L, (long) shard * l.tp() / ((long) l.ep() * l.etp()));
    }

    int expertRanks() {
      return expertParameters > 0 ? experts.size() : 1;
    }

    /**
     * The same groups where the engine shards at each rank's own NIC
     * ({@link Engine#shardsAtRankNic}): a group that spans nodes is costed as one rank per node,
     * so its ring crosses the node boundary at each rank's own NIC.
     */
    ReductionGroups atRankNic(boolean rankNic) {
      return rankNic ? new ReductionGroups(oneRankPerNode(dense), denseParameters,
          oneRankPerNode(experts), expertParameters) : this;
    }

    private static CollectiveGroup oneRankPerNode(CollectiveGroup g) {
      return g.perNode() < g.size() ? new CollectiveGroup(g.size(), 1) : g;
    }

    /**
     * Hybrid sharding: the groups (these being the full data-parallel ones) that all-reduce
     * each shard group's shard across its replicas, the replicas of a rank strided by the shard
     * group, with each group's parameters divided by its shard.
     */
    ReductionGroups replicasOf(Layout l, int shard) {
      int replicas = dense.size() / shard;
      CollectiveGroup d = new CollectiveGroup(replicas,
          Math.max(1, Math.min(replicas, dense.perNode() / shard)));
      if (expertParameters <= 0) {
        return new ReductionGroups(d, denseParameters / shard, d, 0.0);
      }
      int es = expertShard(l, shard);
      int expertReplicas = Math.max(1, experts.size() / es);
      CollectiveGroup e = new CollectiveGroup(expertReplicas,
          Math.max(1, Math.min(expertReplicas, experts.perNode() / es)));
      return new ReductionGroups(d, denseParameters / shard, e, expertParameters / es);
    }

    /** Seconds of {@code collective} over both groups at {@code bytesPerParameter}. */
    double time(InterconnectModel interconnect, Cluster cluster, Collective collective,
        double bytesPerParameter) {
      double seconds = dense.size() > 1 ? interconnect.time(cluster, collective,
          denseParameters * bytesPerParameter, dense).seconds() : 0.0;
      if (expertParameters > 0 && experts.size() > 1) {
        seconds += interconnect.time(cluster, collective, expertParameters * bytesPerParameter,
            experts).seconds();
      }
      return seconds;
    }
  }

  /**
   * Exposed time of the step's gather of updated parameters under ZeRO-1/2: behind the next
   * forward pass where the layout overlaps it ({@link Layout#overlapParamGather}, by default
   * where the engine does: {@link Engine#overlapsParameterGather}), else all of it, after the
   * optimizer step.
   */
  private static double parameterGather(Layout l, double gather, double forward, double kappa) {
    return l.overlapParamGather() ? exposed(gather, forward, kappa) : gather;
  }

  /**
   * The optimizer step: read the gradients, read and write master weights and moments, write
   * the working weights, over this device's shard, at {@code bandwidth}: the streaming bandwidth
   * times the kernel's {@link KernelEfficiency#optimizerBandwidthFraction} (1 unless measured:
   * a fused optimizer is one element-wise pass over its states, Rajbhandari et al. 2020, arXiv
   * 1910.02054, §3.1 for the 16 bytes of Adam's FP32 states per parameter).
   */
  static double optimizerSeconds(ModelStates states, Layout l, TrainingWorkload w,
      double bandwidth) {
    PrecisionRecipe recipe = w.precision();
    double stateBytes = recipe.gradientBytes() + 2 * Math.max(recipe.masterBytes(),
        recipe.weightBytes()) + 2 * w.optimizer().stateBytesPerParameter()
        + (recipe.masterBytes() > 0 ? recipe.weightBytes() : 0.0);
    if (l.zeroStage() == 0) {
      return states.parametersOnDevice() * stateBytes / bandwidth;
    }
    // The routed experts' states shard over the expert data-parallel ranks (ReductionGroups).
    double experts = states.expertParametersOnDevice();
    double onDevice = (states.parametersOnDevice() - experts) / l.shardRanks()
        + experts / ReductionGroups.expertShard(l, l.shardRanks());
    return onDevice * stateBytes / bandwidth;
  }

  /**
   * Exposed data-parallel time of a fully sharded step (ZeRO-3, FSDP full or hybrid shard).
   *
   * <p>Per micro-batch and FSDP unit (one transformer layer) the engine all-gathers the unit's
   * parameters before its forward pass, again before its backward pass when they were resharded
   * after forward, and reduce-scatters its gradients after backward (Rajbhandari et al. 2020,
   * arXiv 1910.02054, §5.3 and §7.2.2: 3Ψ of traffic per step against data parallelism's 2Ψ;
   * Zhao et al. 2023, PyTorch FSDP, VLDB 16(12), §3.3). The next unit's gather is prefetched
   * while the current unit computes (FSDP forward and backward prefetch; DeepSpeed's
   * {@code stage3_prefetch_bucket_size}), and a backward unit's window also carries the previous
   * unit's reduce-scatter, so each unit exposes {@code max(0, comm − compute)}; the first gather
   * and the last reduce-scatter have nothing to hide behind. Recomputation runs inside the
   * backward unit on the parameters already gathered for it (no extra gather), except where the
   * engine gathers again for the recomputed forward ({@link Engine#regathersForRecompute}).
   * Collectives run over the shard group (the slowest link it spans: inter-node, the ring over
   * the node's NICs, or each rank's own NIC where {@link Engine#shardsAtRankNic}).
   * Hybrid sharding adds one all-reduce of the gradient shard across the replicas per step,
   * overlapped with the last backward like a data-parallel reduction ({@code full}: the groups
   * over all data-parallel ranks, whose replicas of a shard group reduce it).
   */
  private double fullyShardedExposed(Cluster cluster, Layout l, ModelStates states,
      ReductionGroups full, double weightBytes, double gradBytes, int units, double forwardUnit,
      double backwardUnit, int microBatches, double backwardWindow, double kappa,
      SubModules subModules, double recomputeUnit) {
    int shard = l.shardRanks();
    // Engine#shardsAtRankNic: a shard group that spans nodes is costed as one rank per node,
    // so its ring crosses the node boundary at each rank's own NIC.
    ReductionGroups groups = ReductionGroups.of(cluster, l, states, shard).atRankNic(
        l.engine().shardsAtRankNic());
    double gather = groups.time(interconnect, cluster, Collective.ALL_GATHER,
        weightBytes / units);
    double reduce = groups.time(interconnect, cluster, Collective.REDUCE_SCATTER,
        gradBytes / units);
    boolean regather = l.recompute() == Recompute.FULL && l.engine().regathersForRecompute();
    double gatherBackward = (l.reshardAfterForward() ? gather : 0.0) + (regather ? gather : 0.0);
    double perMicroBatch;
    if (!l.overlapGradReduce()) {
      // DeepSpeed's overlap_comm false (the only engine that runs ZeRO-3 without the overlap
      // here): the reduce-scatter and the parameter all-gathers run on the compute stream
      // (deepspeed/runtime/zero/stage3.py lines 268-269 and 1258-1272, parameter_offload.py
      // lines 143-144 at 38327e07), so every gather and reduction of every unit is exposed.
      perMicroBatch = units * (gather + gatherBackward + reduce);
    } else if (subModules != null) {
      // DeepSpeed's sub-module schedule (Engine#fetchesPerSubModule; the caller builds the
      // sub-modules only for it): a regathering recomputation is a pass of its own.
      perMicroBatch = subModules.first() * (gather + reduce) + units * subModules.unitExposed(
          gather, l.reshardAfterForward() ? gather : 0.0, reduce, forwardUnit, regather,
          recomputeUnit, backwardUnit - (regather ? recomputeUnit : 0.0), kappa);
    } else {
      perMicroBatch = gather + (units - 1) * exposed(gather, forwardUnit, kappa)
          + units * exposed(gatherBackward + reduce, backwardUnit, kappa) + reduce;
    }
    // Hybrid sharding: each group's shard is all-reduced across its replicas once a step.
    double replicaReduce = 0.0;
    if (shard < l.gradientRanks()) {
      ReductionGroups replicas = full.replicasOf(l, shard);
      replicaReduce = exposed(replicas.time(interconnect, cluster, Collective.ALL_REDUCE,
          gradBytes), backwardWindow, kappa);
    }
    return microBatches * perMicroBatch + replicaReduce;
  }
}
