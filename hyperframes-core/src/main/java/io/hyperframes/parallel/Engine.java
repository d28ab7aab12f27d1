package io.hyperframes.parallel;

import io.hyperframes.json.Ids;
import java.util.List;
import java.util.Locale;

/**
 * The training engine that runs a layout: how it schedules the pipeline, what it overlaps with
 * what, which fused kernels it uses by default, and which layout options it runs at all.
 *
 * <ul>
 *   <li>{@link #MEGATRON} — Megatron-LM / Megatron-Core: interleaved 1F1B (Narayanan et al. 2021,
 *       arXiv 2104.04473, §2.2.2), tensor-parallel collectives on the critical path, gradient
 *       reduction overlapped with the last micro-batch's backward (distributed optimizer,
 *       {@code --overlap-grad-reduce}); attention kernel as the accelerator's framework default.
 *   <li>{@link #DEEPSPEED} — DeepSpeed's {@code PipelineEngine}: non-interleaved 1F1B only
 *       (DeepSpeed docs, "Pipeline Parallelism": {@code TrainSchedule} is PipeDream-Flush 1F1B,
 *       one model chunk per stage); with pipeline parallelism the data-parallel gradient
 *       reduction runs after the last backward ({@code ReduceGrads} instruction at the end of
 *       {@code TrainSchedule}), not overlapped; ZeRO-2/3 are not combined with its pipeline
 *       (DeepSpeed docs, "ZeRO": "ZeRO-2 and ZeRO-3 are incompatible with pipeline
 *       parallelism"). Without a pipeline, ZeRO's overlapped communication applies
 *       ({@code overlap_comm}).
 *   <li>{@link #FSDP} — PyTorch FSDP / FSDP2 (Zhao et al. 2023, "PyTorch FSDP", VLDB 16(12),
 *       §3.3-3.4): one all-gather per FSDP unit (a transformer layer) before forward, again before
 *       backward when parameters were resharded after forward, a reduce-scatter after backward;
 *       the next unit's all-gather is prefetched during the current unit's compute (forward and
 *       backward prefetch). Attention through {@code scaled_dot_product_attention}, which selects
 *       the FlashAttention-2 kernel on Ampere and later (PyTorch 2.2 release notes), so fused
 *       attention is its default on every generation with BF16/FP16 tensor cores.
 *   <li>{@link #MAXTEXT} — MaxText on JAX/XLA (AI-Hypercomputer/maxtext): data parallelism is
 *       GSPMD sharding over the {@code fsdp} mesh axes, so a ZeRO-3 layout is its FSDP
 *       ({@code ici_fsdp_parallelism} × {@code dcn_fsdp_parallelism}): the same per-layer
 *       all-gathers and reduce-scatters, scheduled by XLA's latency-hiding scheduler to overlap
 *       the neighbouring layers' compute; the program is compiled, so element-wise work is fused
 *       into its neighbours; attention is a fused kernel ({@code attention=cudnn_flash_te} on
 *       GPUs). It has its own kernels, so catalog constants scoped to {@code fsdp} (PyTorch's
 *       kernels) do not apply to it.
 * </ul>
 *
 * <p><b>What each engine runs</b> ({@link #unsupported}; the planner searches nothing else, and
 * a request that fixes something else is rejected naming the field, the value and the engine):
 *
 * <table>
 *   <caption>Layout options per engine</caption>
 *   <tr><th>engine</th><th>ZeRO stages</th><th>interleaved pipeline</th>
 *       <th>shard groups (HSDP)</th><th>parameters kept after forward</th></tr>
 *   <tr><td>megatron</td><td>0, 1 (distributed optimizer) with any pipeline; 2 and 3 through
 *       Megatron-FSDP without a pipeline</td><td>yes</td><td>ZeRO-3 (Megatron-FSDP)</td>
 *       <td>no</td></tr>
 *   <tr><td>deepspeed</td><td>0-3 without a pipeline, 0-1 with one</td><td>no</td><td>no</td>
 *       <td>no</td></tr>
 *   <tr><td>fsdp</td><td>0, 2, 3</td><td>no</td><td>yes</td><td>yes</td></tr>
 *   <tr><td>maxtext</td><td>0, 3</td><td>no</td><td>yes</td><td>no</td></tr>
 * </table>
 *
 * <p>Sources: Megatron-LM {@code megatron/training/arguments.py} at commit
 * {@code d98e8a64ddf34856e74b24714e3bedb2f5a39553} (2026-08-22): {@code --use-distributed-optimizer},
 * {@code --use-megatron-fsdp} with {@code --data-parallel-sharding-strategy}
 * {@code optim | optim_grads | optim_grads_params} (ZeRO-1/2/3, docs/user-guide/parallelism-guide.md),
 * {@code --num-distributed-optimizer-instances} for hybrid sharding; Megatron-FSDP is run and
 * tested without pipeline parallelism only ({@code --use-torch-fsdp2} asserts
 * {@code pipeline_model_parallel_size == 1}; Megatron-FSDP v2 raises on it in
 * {@code megatron/core/distributed/fsdp/mcore_fsdp_adapter.py}; every Megatron-FSDP example and
 * functional test runs pp 1). DeepSpeed: as above. PyTorch FSDP:
 * {@code torch.distributed.fsdp.ShardingStrategy} has {@code NO_SHARD}, {@code SHARD_GRAD_OP},
 * {@code FULL_SHARD} and {@code HYBRID_SHARD}, and no optimizer-only sharding;
 * {@code SHARD_GRAD_OP} / FSDP2 {@code reshard_after_forward=False} keep parameters after
 * forward. MaxText: parameters, gradients and optimizer states share the {@code fsdp} axes' sharding, and
 * {@code dcn_data_parallelism} replicates across slices (hybrid sharding). Sequence parallelism
 * over the tensor-parallel group is run by every engine (Megatron-LM and Megatron-DeepSpeed
 * {@code --sequence-parallel}; PyTorch's {@code SequenceParallel} tensor-parallel style; MaxText
 * sequence sharding), so it is not restricted.
 */
public enum Engine {
  MEGATRON,
  DEEPSPEED,
  FSDP,
  MAXTEXT;

  private final String id = Ids.lowerCase(this);

  /**
   * The engines a plan searches when the request leaves {@code layout.engine} open: those
   * HyperFrames launches ({@code --emit}), default first. MaxText runs when it is named.
   */
  public static final List<Engine> SEARCHED = List.of(MEGATRON, DEEPSPEED, FSDP);

  /** The JSON name ("megatron", "deepspeed", "fsdp", "maxtext"). */
  public String id() {
    return id;
  }

  /** The engine's product name, for reports ("Megatron-LM", "DeepSpeed", …). */
  public String displayName() {
    return switch (this) {
      case MEGATRON -> "Megatron-LM";
      case DEEPSPEED -> "DeepSpeed";
      case FSDP -> "PyTorch FSDP";
      case MAXTEXT -> "MaxText";
    };
  }

  /** Whether the engine runs interleaved (virtual-stage) pipelines. */
  public boolean interleavesPipeline() {
    return this == MEGATRON;
  }

  /** Whether data-parallel gradient reduction overlaps backward when {@code pp} stages run. */
  public boolean overlapsGradientReduction(int pp) {
    return this != DEEPSPEED || pp == 1;
  }

  /**
   * Whether, under ZeRO-1 and ZeRO-2, the engine gathers the updated parameters during the next
   * step's forward pass, hidden behind it: Megatron-LM's {@code --overlap-param-gather} (the
   * distributed optimizer's buckets waited on by each module's forward pre-hook,
   * megatron/core/distributed/distributed_data_parallel.py at d98e8a64), and FSDP's
   * {@code SHARD_GRAD_OP}, which all-gathers each unit's parameters in its forward pre-hook with
   * forward prefetch (Zhao et al. 2023, PyTorch FSDP, §3.3). DeepSpeed gathers them after the
   * optimizer step, before the step returns, with nothing to hide behind
   * ({@code DeepSpeedZeroOptimizer.step}: "Gather the updated weights from everyone", then
   * {@code all_gather_dp_groups}; deepspeed/runtime/zero/stage_1_and_2.py at 38327e07).
   */
  public boolean overlapsParameterGather() {
    return this == MEGATRON || this == FSDP;
  }

  /**
   * Why the engine cannot run the data-parallel overlap a layout fixes at ZeRO {@code zeroStage}
   * ({@code null}: left open), naming the field, or null: {@code layout.overlapGradReduce} or
   * {@code layout.overlapParamGather} true where {@link #overlapsGradientReduction} or
   * {@link #overlapsParameterGather} says no, and {@code layout.overlapGradReduce} false where
   * the engine has no such setting ({@link #gradReduceOverlapOffUnsupported}).
   */
  public String overlapUnsupported(int pp, int zeroStage, Boolean gradReduce,
      Boolean paramGather) {
    if (Boolean.TRUE.equals(gradReduce) && !overlapsGradientReduction(pp)) {
      return String.format(Locale.ROOT, "layout.overlapGradReduce: true is not run by %s with pp"
          + " %s: its pipeline engine reduces the gradients after the last backward pass", id, pp);
    }
    if (Boolean.TRUE.equals(paramGather) && !overlapsParameterGather()) {
      return String.format(Locale.ROOT, "layout.overlapParamGather: true is not run by %s: it"
          + " gathers the updated parameters after the optimizer step", id);
    }
    return Boolean.FALSE.equals(gradReduce) ? gradReduceOverlapOffUnsupported(pp, zeroStage)
        : null;
  }

  /**
   * Why the engine cannot run {@code layout.overlapGradReduce} false at ZeRO {@code zeroStage}
   * (where it would overlap the reduction: {@link #overlapsGradientReduction}), naming the field,
   * or null. PyTorch FSDP (and DDP) reduce on their own stream behind the backward pass with no
   * switch to turn it off ({@code torch/distributed/fsdp/_runtime_utils.py},
   * {@code _post_backward_hook}, at pytorch/pytorch 3ade90a6; FSDP2's reduce-scatter stream in
   * {@code _fully_shard/_fsdp_param_group.py} at 002a76fb); Megatron-FSDP forces
   * {@code overlap_grad_reduce} on for ZeRO-2 and ZeRO-3 ({@code optim_grads},
   * {@code optim_grads_params}: {@code megatron/core/distributed/fsdp/src/megatron_fsdp/
   * megatron_fsdp.py} lines 326-337 at NVIDIA/Megatron-LM d98e8a64); MaxText's collectives are
   * XLA's, with no such setting in HyperFrames' model. DeepSpeed's {@code overlap_comm} and
   * Megatron-LM's {@code --overlap-grad-reduce} at ZeRO 0/1 can be off.
   */
  private String gradReduceOverlapOffUnsupported(int pp, int zeroStage) {
    if (!overlapsGradientReduction(pp)) {
      return null;
    }
    return switch (this) {
      case FSDP -> "layout.overlapGradReduce: false is not run by fsdp: PyTorch FSDP and DDP"
          + " reduce the gradients on their own stream behind the backward pass, with no"
          + " switch to turn it off";
      case MEGATRON -> zeroStage >= 2 ? String.format(Locale.ROOT, "layout.overlapGradReduce:"
          + " false is not run by megatron at zeroStage %s: Megatron-FSDP forces"
          + " overlap_grad_reduce on for ZeRO-2 and ZeRO-3", zeroStage) : null;
      case MAXTEXT -> "layout.overlapGradReduce: false is not a setting of maxtext in"
          + " HyperFrames' model (XLA schedules its collectives)";
      case DEEPSPEED -> null;
    };
  }

  /** Whether the engine's default attention kernel is fused on every tensor-core generation. */
  public boolean fusedAttentionByDefault() {
    return this == FSDP || this == MAXTEXT;
  }

  /** Whether the engine runs ZeRO {@code stage} with {@code pp} pipeline stages (table above). */
  public boolean runsZeroStage(int stage, int pp) {
    return switch (this) {
      case MEGATRON -> stage <= 1 || pp == 1;
      case DEEPSPEED -> stage <= 1 || pp == 1;
      case FSDP -> stage != 1;
      case MAXTEXT -> stage == 0 || stage == 3;
    };
  }

  /**
   * Whether HyperFrames models the engine running expert parallelism: Megatron-LM
   * ({@code --expert-model-parallel-size}, megatron/training/arguments.py at d98e8a64) and
   * PyTorch FSDP2 with expert parallelism as torchtitan runs it ({@code expert_parallel_degree};
   * {@code torchtitan/distributed/parallel_dims.py} at b5bcd76c6: the experts live on a mesh
   * {@code (pp, dp_replicate, efsdp, ep)} with {@code efsdp = dp_shard · cp · tp / ep}, so
   * expert parallelism borrows ranks from dp_shard, cp and tp, keeps each expert whole
   * ({@link #splitsExperts}) and FSDP shards the experts over the efsdp ranks, the expert
   * data-parallel group of {@code Layout#expertDataParallel}), which NeMo Automodel also runs
   * over DeepEP. DeepSpeed's MoE and MaxText's are not modelled or launched here.
   */
  public boolean runsExpertParallel() {
    return this == MEGATRON || this == FSDP;
  }

  /**
   * Whether the engine splits routed experts by tensor parallelism under expert parallelism
   * ({@code layout.etp} other than 1): Megatron-Core does ({@code --expert-tensor-parallel-size},
   * default tp); torchtitan's expert mesh has no tensor-parallel axis once ep &gt; 1 (the ep axis
   * takes the tp ranks, parallel_dims.py at b5bcd76c6), so its experts are whole (etp 1).
   */
  public boolean splitsExperts() {
    return this == MEGATRON;
  }

  /**
   * The expert tensor-parallel degree a layout of this engine takes when the request leaves it
   * open: tp (Megatron-Core's default), or 1 where the engine keeps experts whole under expert
   * parallelism ({@link #splitsExperts}).
   */
  public int defaultExpertTensorParallel(int tp, int ep) {
    return ep > 1 && !splitsExperts() ? 1 : tp;
  }

  /**
   * Why the engine cannot run expert tensor parallelism {@code etp} under expert parallelism
   * {@code ep} ({@link #splitsExperts}), naming the field, the value and the engine; null when
   * it can.
   */
  public String expertTensorParallelUnsupported(int etp, int ep) {
    return etp == 1 || ep == 1 || splitsExperts() ? null : String.format(Locale.ROOT,
        "layout.etp: %s is not run by %s, which keeps experts whole under expert parallelism"
        + " (torchtitan's expert mesh has no tensor-parallel axis: etp 1)", etp, id);
  }

  /**
   * Whether, under ZeRO-3 with full recomputation, the recomputed forward pass gathers each
   * layer's parameters again. DeepSpeed fetches a sub-module's parameters in its forward
   * pre-hook and releases them in its forward post-hook ({@code pre_sub_module_forward_function}
   * / {@code post_sub_module_forward_function} in {@code deepspeed/runtime/zero/stage3.py} at
   * v0.3.16, commit in docs/model-reference.md); the recomputed forward fires the same hooks, and
   * the backward pre-hook fetches them once more: three gathers a micro-batch. FSDP recomputes
   * inside the unit's backward on the parameters its pre-backward hook gathered (Zhao et al.
   * 2023, §3.3), so it gathers twice.
   */
  public boolean regathersForRecompute() {
    return this == DEEPSPEED;
  }

  /**
   * Whether the engine's ZeRO-3 fetches parameters sub-module by sub-module (each module that
   * holds parameters directly: a transformer layer's QKV, output projection and two MLP
   * matmuls), one prefetch ahead, rather than one layer (FSDP unit) at a time. DeepSpeed's
   * forward and backward pre-hooks fetch the current sub-module and start the gather of the
   * next one in its recorded trace, and start no further prefetch while one is in flight
   * ({@code fetch_sub_module} and {@code prefetch_next_sub_modules} in
   * {@code deepspeed/runtime/zero/stage3.py} at v0.3.16, commit a12aaedc; the same order from
   * {@code partitioned_param_coordinator.py} at v0.6.7), and v0.3.16 synchronises the device at
   * each fetch ({@code _synchronize_communication}). So each sub-module's compute hides only the
   * next sub-module's gather: a small matmul (the output projection) cannot hide the gather of a
   * large one (the MLP's first). Gradients are reduce-scattered from the reduce bucket once the
   * next gradient overflows it ({@code reduce_independent_p_g_buckets_and_remove_grads}), on the
   * data-parallel group's NCCL stream, behind the next sub-module's backward. FSDP gathers one
   * wrapped unit (a layer) at a time (Zhao et al. 2023, §3.3).
   */
  public boolean fetchesPerSubModule() {
    return this == DEEPSPEED;
  }

  /**
   * Whether the engine's ZeRO-3 parameter gathers and gradient reduce-scatters that cross nodes
   * move at one NIC per rank instead of the node's NICs together (NCCL's ring over rails, which
   * {@code interconnect} assumes for every other collective). This is an empirical rule, not a
   * derivation: DeepSpeed ZeRO-3 as run by Narayanan et al. 2021 (Table 2) keeps a flat step
   * time as data parallelism doubles at a fixed global batch, which the parameter traffic
   * (3 gathers and a reduce-scatter of the working-precision parameters per micro-batch) explains
   * only at one NIC per rank. The rule was chosen on those cases, so they are fitting cases
   * (hardware.json {@code decisions}). DeepSpeed of that time gathered parameter by parameter,
   * each after a device-wide {@code torch.cuda.synchronize()} ({@code _allgather_param} in
   * {@code deepspeed/runtime/zero/partition_parameters.py} at v0.3.16); later versions coalesce
   * the gathers, and the rule may overstate their cost where communication is exposed.
   */
  public boolean shardsAtRankNic() {
    return this == DEEPSPEED;
  }

  /** Whether the engine shards ZeRO-3 states over groups smaller than dp (hybrid sharding). */
  public boolean runsShardGroups() {
    return this != DEEPSPEED;
  }

  /** Whether the engine can keep gathered parameters from forward to backward (ZeRO-3). */
  public boolean keepsParametersAfterForward() {
    return this == FSDP;
  }

  /**
   * Why the engine cannot run these layout options, naming the field, the value and the engine;
   * {@code null} when it runs them.
   *
   * @param shardGroupSize 0 for sharding over all data-parallel ranks
   */
  public String unsupported(int pp, int virtualStages, int zeroStage, int shardGroupSize,
      boolean reshardAfterForward) {
    if (virtualStages > 1 && !interleavesPipeline()) {
      return String.format(Locale.ROOT, "layout.virtualStages: %s needs an interleaving engine"
          + " (megatron); %s runs one model chunk per stage", virtualStages, id);
    }
    if (!runsZeroStage(zeroStage, pp)) {
      return String.format(Locale.ROOT, "layout.zeroStage: %s is not run by %s%s", zeroStage,
          id, switch (this) {
            case MEGATRON -> " with pp " + pp + " (ZeRO-2/3 is Megatron-FSDP, which runs"
                + " without pipeline parallelism; the distributed optimizer is ZeRO-1)";
            case DEEPSPEED -> " with pp " + pp + " (ZeRO-2 and ZeRO-3 are incompatible with"
                + " DeepSpeed's pipeline engine)";
            case FSDP -> " (PyTorch FSDP has no optimizer-only sharding: NO_SHARD,"
                + " SHARD_GRAD_OP or FULL_SHARD are stages 0, 2 and 3)";
            case MAXTEXT -> " (MaxText replicates, stage 0, or shards everything over its fsdp"
                + " axes, stage 3)";
          });
    }
    if (shardGroupSize > 0 && zeroStage != 3 && (zeroStage != 1 || this != MEGATRON)) {
      return String.format(Locale.ROOT, "layout.shardGroupSize: %s with zeroStage %s is not run"
          + " by %s in HyperFrames' model: optimizer states sharded within groups and replicated"
          + " across them is Megatron-Core's partial distributed optimizer (zeroStage 1, engine"
          + " megatron, --num-distributed-optimizer-instances); hybrid sharding is zeroStage 3",
          shardGroupSize, zeroStage, id);
    }
    if (shardGroupSize > 0 && !runsShardGroups()) {
      return String.format(Locale.ROOT, "layout.shardGroupSize: %s (hybrid sharding) is not run"
          + " by %s in HyperFrames' model; use fsdp, megatron (Megatron-FSDP) or maxtext",
          shardGroupSize, id);
    }
    if (zeroStage == 3 && !reshardAfterForward && !keepsParametersAfterForward()) {
      return String.format(Locale.ROOT, "layout.reshardAfterForward: false (parameters kept"
          + " from forward to backward) is not run by %s; it is PyTorch FSDP's SHARD_GRAD_OP /"
          + " FSDP2 reshard_after_forward=False (engine fsdp)", id);
    }
    return null;
  }

  /** The engine named {@code value}; {@code IllegalArgumentException} naming it otherwise. */
  public static Engine fromId(String field, String value) {
    return Ids.byId(Engine.class, Engine::id, field, value, "engine");
  }
}
