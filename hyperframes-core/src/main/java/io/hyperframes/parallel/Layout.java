package io.hyperframes.parallel;

import static com.google.common.base.Preconditions.checkArgument;

import com.google.common.collect.Sets;
import io.hyperframes.hardware.Checks;
import java.util.Set;

/**
 * A fully resolved parallel layout of a training job.
 *
 * @param tp tensor-parallel degree (Shoeybi et al. 2019, arXiv 1909.08053)
 * @param pp pipeline-parallel degree (1F1B schedule; Narayanan et al. 2021, arXiv 2104.04473)
 * @param dp data-parallel degree
 * @param virtualStages model chunks per pipeline rank (interleaved 1F1B; 1 = plain 1F1B)
 * @param microBatch sequences per micro-batch per data-parallel rank
 * @param sequenceParallel sequence parallelism over the tensor-parallel group (Korthikanti 2022)
 * @param recompute activation recomputation policy
 * @param zeroStage ZeRO stage 0-3 (Rajbhandari et al. 2020); 1 is Megatron's distributed optimizer
 * @param engine the engine that runs the layout ({@link Engine})
 * @param shardGroupSize for ZeRO-3: data-parallel ranks one shard group spans (hybrid sharding,
 *     HSDP; replicas of the shards across groups); for ZeRO-1, the ranks of one distributed
 *     optimizer instance (Megatron-Core's partial distributed optimizer,
 *     {@code --num-distributed-optimizer-instances dp / shardGroupSize}: optimizer states
 *     sharded within the group and replicated across groups); 0 or {@code dp} shards over all
 *     of them
 * @param reshardAfterForward for ZeRO-3: whether gathered parameters are freed after forward and
 *     gathered again for backward (FSDP {@code FULL_SHARD}, DeepSpeed ZeRO-3) or kept until
 *     backward ({@code SHARD_GRAD_OP}, FSDP2 {@code reshard_after_forward=False})
 * @param ep expert-parallel degree (Megatron-Core {@code --expert-model-parallel-size}): a
 *     mixture of experts' routed experts are split over {@code ep} ranks, which exchange tokens
 *     by all-to-all; 1 for none. {@code ep · etp} divides {@code tp · cp · dp} (Megatron-Core's
 *     expert rank grid, {@code megatron/core/parallel_state.py} at d98e8a64): the expert
 *     data-parallel degree is {@code tp · cp · dp / (ep · etp)}
 * @param cp context-parallel degree (Megatron-Core {@code --context-parallel-size}): each
 *     sequence is split over {@code cp} ranks, which exchange keys and values for attention
 *     ({@code cpCommType}); 1 for none. Devices are tp · cp · pp · dp; weight gradients are
 *     reduced, and ZeRO states sharded, over dp · cp ranks
 * @param cpCommType how the context-parallel ranks exchange keys and values
 * @param etp expert tensor-parallel degree (Megatron-Core {@code --expert-tensor-parallel-size},
 *     which defaults to {@code tp}: {@code megatron/training/arguments.py} at d98e8a64, lines
 *     587-588): each routed expert's matmuls are split over {@code etp} ranks; 0 means
 *     {@code tp}. The expert grid orders its ranks etp-ep-dp-pp, so an expert-parallel group's
 *     ranks are {@code etp} apart
 * @param recomputeModules under selective recomputation, the sub-modules whose forward pass the
 *     backward reruns ({@link RecomputeModule}; Megatron-Core's {@code --recompute-modules});
 *     null means its default, {@code core_attn}. Empty unless {@code recompute} is selective
 * @param moeDispatcher how routed tokens reach the expert-parallel ranks ({@link MoeDispatcher});
 *     null means Megatron-Core's all-to-all dispatcher
 * @param overlapMoeComm whether the expert-parallel dispatch and combine of one micro-batch run
 *     beside the computation of another (Megatron-Core's
 *     {@code --overlap-moe-expert-parallel-comm --delay-wgrad-compute}: the combined 1F1B
 *     schedule, {@code megatron/core/pipeline_parallel/combined_1f1b.py} at d98e8a64); needs
 *     {@code ep > 1}, virtual stages with {@code pp > 1}, and neither full recomputation nor the
 *     {@code moe} recomputation module
 * @param firstStageLayers decoder layers on the first pipeline rank, over its virtual stages (0:
 *     its even share; Megatron-LM's {@code --decoder-first-pipeline-num-layers}), which
 *     Megatron-Core recipes lower to make room for the embedding
 * @param lastStageLayers decoder layers on the last pipeline rank (0: its even share;
 *     {@code --decoder-last-pipeline-num-layers}), lowered for the output layer, the loss and
 *     multi-token prediction
 * @param overlapGradReduce whether the step's data-parallel gradient reduction (ZeRO 0 and 1,
 *     and hybrid sharding's all-reduce across replicas) runs behind the backward pass
 *     (Megatron-LM's {@code --overlap-grad-reduce}, DeepSpeed's {@code overlap_comm}); false:
 *     after the last backward pass, exposed. ZeRO 2 and 3 reduce-scatter per micro-batch or per
 *     unit behind its backward, as their engines schedule them, either way. Only where the
 *     engine can ({@link Engine#overlapsGradientReduction})
 * @param overlapParamGather under ZeRO-1 and ZeRO-2, whether the updated parameters are
 *     gathered behind the next step's forward pass (Megatron-LM's
 *     {@code --overlap-param-gather}); false: after the optimizer step, exposed. Only where the
 *     engine can ({@link Engine#overlapsParameterGather}); other stages have no such gather
 */
public record Layout(int tp, int pp, int dp, int virtualStages, int microBatch,
    boolean sequenceParallel, Recompute recompute, int zeroStage, Engine engine,
    int shardGroupSize, boolean reshardAfterForward, int ep, int cp, CpCommType cpCommType,
    int etp, Set<RecomputeModule> recomputeModules, MoeDispatcher moeDispatcher,
    boolean overlapMoeComm, int firstStageLayers, int lastStageLayers,
    boolean overlapGradReduce, boolean overlapParamGather) {

  /**
   * A layout whose data-parallel collectives overlap as its engine overlaps them by default
   * ({@link Engine#overlapsGradientReduction}, {@link Engine#overlapsParameterGather}: the
   * options HyperFrames' launches set).
   */
  public Layout(int tp, int pp, int dp, int virtualStages, int microBatch,
      boolean sequenceParallel, Recompute recompute, int zeroStage, Engine engine,
      int shardGroupSize, boolean reshardAfterForward, int ep, int cp, CpCommType cpCommType,
      int etp, Set<RecomputeModule> recomputeModules, MoeDispatcher moeDispatcher,
      boolean overlapMoeComm, int firstStageLayers, int lastStageLayers) {
    this(tp, pp, dp, virtualStages, microBatch, sequenceParallel, recompute, zeroStage, engine,
        shardGroupSize, reshardAfterForward, ep, cp, cpCommType, etp, recomputeModules,
        moeDispatcher, overlapMoeComm, firstStageLayers, lastStageLayers,
        engine != null && engine.overlapsGradientReduction(pp),
        engine != null && engine.overlapsParameterGather());
  }

  /** A layout whose pipeline ranks hold ⌈layers / pp⌉ layers each (no uneven split). */
  public Layout(int tp, int pp, int dp, int virtualStages, int microBatch,
      boolean sequenceParallel, Recompute recompute, int zeroStage, Engine engine,
      int shardGroupSize, boolean reshardAfterForward, int ep, int cp, CpCommType cpCommType,
      int etp, Set<RecomputeModule> recomputeModules, MoeDispatcher moeDispatcher,
      boolean overlapMoeComm) {
    this(tp, pp, dp, virtualStages, microBatch, sequenceParallel, recompute, zeroStage, engine,
        shardGroupSize, reshardAfterForward, ep, cp, cpCommType, etp, recomputeModules,
        moeDispatcher, overlapMoeComm, 0, 0);
  }

  /** A layout whose expert-parallel exchange is not overlapped (Megatron-Core's default). */
  public Layout(int tp, int pp, int dp, int virtualStages, int microBatch,
      boolean sequenceParallel, Recompute recompute, int zeroStage, Engine engine,
      int shardGroupSize, boolean reshardAfterForward, int ep, int cp, CpCommType cpCommType,
      int etp, Set<RecomputeModule> recomputeModules, MoeDispatcher moeDispatcher) {
    this(tp, pp, dp, virtualStages, microBatch, sequenceParallel, recompute, zeroStage, engine,
        shardGroupSize, reshardAfterForward, ep, cp, cpCommType, etp, recomputeModules,
        moeDispatcher, false);
  }

  /** A layout with Megatron-Core's all-to-all token dispatcher. */
  public Layout(int tp, int pp, int dp, int virtualStages, int microBatch,
      boolean sequenceParallel, Recompute recompute, int zeroStage, Engine engine,
      int shardGroupSize, boolean reshardAfterForward, int ep, int cp, CpCommType cpCommType,
      int etp, Set<RecomputeModule> recomputeModules) {
    this(tp, pp, dp, virtualStages, microBatch, sequenceParallel, recompute, zeroStage, engine,
        shardGroupSize, reshardAfterForward, ep, cp, cpCommType, etp, recomputeModules, null);
  }

  /** A layout with Megatron-Core's default recomputation modules ({@code core_attn}). */
  public Layout(int tp, int pp, int dp, int virtualStages, int microBatch,
      boolean sequenceParallel, Recompute recompute, int zeroStage, Engine engine,
      int shardGroupSize, boolean reshardAfterForward, int ep, int cp, CpCommType cpCommType,
      int etp) {
    this(tp, pp, dp, virtualStages, microBatch, sequenceParallel, recompute, zeroStage, engine,
        shardGroupSize, reshardAfterForward, ep, cp, cpCommType, etp, null);
  }

  /** A layout whose experts are split by the tensor-parallel degree (Megatron-LM's default). */
  public Layout(int tp, int pp, int dp, int virtualStages, int microBatch,
      boolean sequenceParallel, Recompute recompute, int zeroStage, Engine engine,
      int shardGroupSize, boolean reshardAfterForward, int ep, int cp, CpCommType cpCommType) {
    this(tp, pp, dp, virtualStages, microBatch, sequenceParallel, recompute, zeroStage, engine,
        shardGroupSize, reshardAfterForward, ep, cp, cpCommType, 0);
  }

  /** A layout without context parallelism. */
  public Layout(int tp, int pp, int dp, int virtualStages, int microBatch,
      boolean sequenceParallel, Recompute recompute, int zeroStage, Engine engine,
      int shardGroupSize, boolean reshardAfterForward, int ep) {
    this(tp, pp, dp, virtualStages, microBatch, sequenceParallel, recompute, zeroStage, engine,
        shardGroupSize, reshardAfterForward, ep, 1, CpCommType.P2P);
  }

  /** A layout without expert parallelism. */
  public Layout(int tp, int pp, int dp, int virtualStages, int microBatch,
      boolean sequenceParallel, Recompute recompute, int zeroStage, Engine engine,
      int shardGroupSize, boolean reshardAfterForward) {
    this(tp, pp, dp, virtualStages, microBatch, sequenceParallel, recompute, zeroStage, engine,
        shardGroupSize, reshardAfterForward, 1);
  }

  /** A Megatron-LM layout, ZeRO-3 (if any) sharded over all data-parallel ranks. */
  public Layout(int tp, int pp, int dp, int virtualStages, int microBatch,
      boolean sequenceParallel, Recompute recompute, int zeroStage) {
    this(tp, pp, dp, virtualStages, microBatch, sequenceParallel, recompute, zeroStage,
        Engine.MEGATRON, 0, true);
  }

  public Layout {
    Checks.positive("layout.tp", tp);
    Checks.positive("layout.pp", pp);
    Checks.positive("layout.dp", dp);
    Checks.positive("layout.virtualStages", virtualStages);
    Checks.positive("layout.microBatch", microBatch);
    checkArgument(recompute != null, "layout.recompute: must be given");
    checkArgument(zeroStage >= 0 && zeroStage <= 3, "layout.zeroStage: must be 0-3, got %s",
        zeroStage);
    checkArgument(virtualStages == 1 || pp > 1,
        "layout.virtualStages: %s needs pipeline parallelism (pp > 1)", virtualStages);
    checkArgument(firstStageLayers >= 0, "layout.firstStageLayers: must be >= 0, got %s",
        firstStageLayers);
    checkArgument(lastStageLayers >= 0, "layout.lastStageLayers: must be >= 0, got %s",
        lastStageLayers);
    checkArgument(firstStageLayers == 0 || pp > 1, "layout.firstStageLayers: %s needs pipeline"
        + " parallelism (pp > 1)", firstStageLayers);
    checkArgument(lastStageLayers == 0 || pp > 1, "layout.lastStageLayers: %s needs pipeline"
        + " parallelism (pp > 1)", lastStageLayers);
    checkArgument(engine != null, "layout.engine: must be given");
    checkArgument(shardGroupSize >= 0, "layout.shardGroupSize: must be >= 0, got %s",
        shardGroupSize);
    Checks.positive("layout.ep", ep);
    Checks.positive("layout.cp", cp);
    checkArgument(etp >= 0, "layout.etp: must be > 0, got %s", etp);
    etp = etp == 0 ? engine.defaultExpertTensorParallel(tp, ep) : etp;
    String wholeExperts = engine.expertTensorParallelUnsupported(etp, ep);
    checkArgument(wholeExperts == null, "%s", wholeExperts);
    // Megatron-Core: ep·etp divides tp·cp·dp; with etp = tp, ep divides cp·dp (named so).
    if (!expertGridFits(tp, cp, dp, ep, etp)) {
      throw new IllegalArgumentException(etp != tp
          ? String.format("layout.etp: ep·etp = %s·%s does not divide tp·cp·dp = %s (the expert"
              + " data-parallel degree is tp·cp·dp / (ep·etp))", ep, etp, (long) tp * cp * dp)
          : cp == 1 ? String.format("layout.ep: %s does not divide layout.dp %s (the expert"
              + " data-parallel degree is dp / ep)", ep, dp)
          : String.format("layout.ep: %s does not divide layout.dp·cp %s (the expert"
              + " data-parallel degree is dp·cp / ep)", ep, dp * cp));
    }
    checkArgument(cpCommType != null, "layout.cpCommType: must be given");
    if (recompute != Recompute.SELECTIVE && recomputeModules != null
        && !recomputeModules.isEmpty()) {
      // The message is built only when it is thrown: a search builds millions of layouts.
      throw new IllegalArgumentException(String.format("layout.recomputeModules: %s needs"
          + " layout.recompute selective (Megatron-Core --recompute-granularity selective), got"
          + " %s", RecomputeModule.ids(recomputeModules), recompute.id()));
    }
    recomputeModules = recompute != Recompute.SELECTIVE ? Set.of()
        : recomputeModules == null || recomputeModules.isEmpty() ? RecomputeModule.DEFAULT
            : Sets.immutableEnumSet(recomputeModules);
    moeDispatcher = moeDispatcher == null ? MoeDispatcher.ALL_TO_ALL : moeDispatcher;
    checkArgument(moeDispatcher != MoeDispatcher.DEEPEP || ep * etp > 1, "layout.moeDispatcher:"
        + " deepep needs layout.ep · layout.etp > 1 (Megatron-Core: 'DeepEP dispatcher requires"
        + " TPxEP > 1'), got ep %s, etp %s", ep, etp);
    if (overlapMoeComm) {
      // Megatron-Core's checks (transformer_config.py at d98e8a64).
      checkArgument(ep > 1, "layout.overlapMoeComm: needs expert parallelism (Megatron-Core:"
          + " 'only supported with expert model parallelism'), got layout.ep %s", ep);
      checkArgument(pp == 1 || virtualStages > 1, "layout.overlapMoeComm: needs"
          + " layout.virtualStages > 1 with pipeline parallelism (Megatron-Core: 'virtual"
          + " pipeline model parallel size must be specified'), got pp %s, virtualStages %s", pp,
          virtualStages);
      checkArgument(recompute != Recompute.FULL, "layout.overlapMoeComm: not with full"
          + " recomputation (Megatron-Core: 'disable full recomputation')");
      checkArgument(!recomputeModules.contains(RecomputeModule.MOE), "layout.overlapMoeComm:"
          + " not with the moe recomputation module (Megatron-Core: 'disable moe in"
          + " recompute_modules')");
    }
    checkArgument(cp == 1 || engine == Engine.MEGATRON, "layout.cp: %s is run by megatron"
        + " (Megatron-Core --context-parallel-size) in HyperFrames' model, not by %s", cp,
        engine.id());
    checkArgument(!overlapMoeComm || engine == Engine.MEGATRON, "layout.overlapMoeComm: is"
        + " Megatron-Core's EP A2A overlap, run by megatron, not by %s", engine.id());
    checkArgument(ep == 1 || engine.runsExpertParallel(), "layout.ep: %s is run by megatron"
        + " (Megatron-Core --expert-model-parallel-size) or fsdp (torchtitan's"
        + " expert_parallel_degree) in HyperFrames' model, not by %s", ep,
        engine.id());
    String unsupported = engine.unsupported(pp, virtualStages, zeroStage, shardGroupSize,
        reshardAfterForward);
    checkArgument(unsupported == null, "%s", unsupported);
    checkArgument(shardGroupSize == 0 || zeroStage == 1 || zeroStage == 3,
        "layout.shardGroupSize: %s needs zeroStage 1 or 3, got %s", shardGroupSize, zeroStage);
    checkArgument(shardGroupSize == 0 || dp % shardGroupSize == 0,
        "layout.shardGroupSize: %s does not divide layout.dp %s", shardGroupSize, dp);
    String overlap = engine.overlapUnsupported(pp, zeroStage, overlapGradReduce,
        overlapParamGather);
    checkArgument(overlap == null, "%s", overlap);
  }

  /**
   * Whether this layout turns off a gradient-reduction overlap its engine runs
   * ({@code overlapGradReduce} false where {@link Engine#overlapsGradientReduction}).
   */
  public boolean gradReduceOverlapOff() {
    return !overlapGradReduce && engine.overlapsGradientReduction(pp);
  }

  /**
   * Whether this layout turns off a parameter-gather overlap its engine runs
   * ({@code overlapParamGather} false where {@link Engine#overlapsParameterGather}).
   */
  public boolean paramGatherOverlapOff() {
    return !overlapParamGather && engine.overlapsParameterGather();
  }

  /**
   * The same layout with its data-parallel gradient reduction and ZeRO-1/2 parameter gather
   * overlapped or not ({@code overlapGradReduce}, {@code overlapParamGather}).
   */
  public Layout withDataParallelOverlap(boolean gradReduce, boolean paramGather) {
    return new Layout(tp, pp, dp, virtualStages, microBatch, sequenceParallel, recompute,
        zeroStage, engine, shardGroupSize, reshardAfterForward, ep, cp, cpCommType, etp,
        recomputeModules, moeDispatcher, overlapMoeComm, firstStageLayers, lastStageLayers,
        gradReduce, paramGather);
  }

  /** Data-parallel ranks that ZeRO shards span: {@code shardGroupSize}, or all of {@code dp}. */
  public int shardRanks() {
    return zeroStage == 0 ? 1 : shardGroupSize == 0 ? dp * cp : shardGroupSize;
  }

  /** Ranks the weight gradients are reduced over: dp · cp (the context-parallel ranks too). */
  public int gradientRanks() {
    return dp * cp;
  }

  /** The same layout with another context-parallel degree and exchange. */
  public Layout withCp(int degree, CpCommType type) {
    return new Layout(tp, pp, dp, virtualStages, microBatch, sequenceParallel, recompute,
        zeroStage, engine, shardGroupSize, reshardAfterForward, ep, degree,
        type, etp, recomputeModules, moeDispatcher, overlapMoeComm, firstStageLayers,
        lastStageLayers, overlapGradReduce,
        overlapParamGather);
  }

  /** The same layout with another micro-batch size. */
  public Layout withMicroBatch(int size) {
    return new Layout(tp, pp, dp, virtualStages, size, sequenceParallel, recompute, zeroStage,
        engine, shardGroupSize, reshardAfterForward, ep, cp,
        cpCommType, etp, recomputeModules, moeDispatcher, overlapMoeComm, firstStageLayers,
        lastStageLayers, overlapGradReduce,
        overlapParamGather);
  }

  /**
   * The same layout with another recomputation policy (selective keeps this layout's modules
   * when it is selective, else takes the default).
   */
  public Layout withRecompute(Recompute policy) {
    return new Layout(tp, pp, dp, virtualStages, microBatch, sequenceParallel, policy, zeroStage,
        engine, shardGroupSize, reshardAfterForward, ep, cp, cpCommType, etp,
        policy == Recompute.SELECTIVE ? recomputeModules : null, moeDispatcher, overlapMoeComm,
        firstStageLayers, lastStageLayers, overlapGradReduce,
        overlapParamGather);
  }

  /** The same layout, selectively recomputing {@code modules} (null: the default). */
  public Layout withRecomputeModules(Set<RecomputeModule> modules) {
    return new Layout(tp, pp, dp, virtualStages, microBatch, sequenceParallel,
        Recompute.SELECTIVE, zeroStage, engine, shardGroupSize, reshardAfterForward, ep, cp,
        cpCommType, etp, modules, moeDispatcher, overlapMoeComm, firstStageLayers,
        lastStageLayers, overlapGradReduce,
        overlapParamGather);
  }

  /** The same layout with another token dispatcher (null: the all-to-all dispatcher). */
  public Layout withMoeDispatcher(MoeDispatcher dispatcher) {
    return new Layout(tp, pp, dp, virtualStages, microBatch, sequenceParallel, recompute,
        zeroStage, engine, shardGroupSize, reshardAfterForward, ep, cp, cpCommType, etp,
        recomputeModules, dispatcher, overlapMoeComm, firstStageLayers, lastStageLayers,
        overlapGradReduce, overlapParamGather);
  }

  /** The same layout with the expert-parallel exchange overlapped or not. */
  public Layout withOverlapMoeComm(boolean overlap) {
    return new Layout(tp, pp, dp, virtualStages, microBatch, sequenceParallel, recompute,
        zeroStage, engine, shardGroupSize, reshardAfterForward, ep, cp, cpCommType, etp,
        recomputeModules, moeDispatcher, overlap, firstStageLayers, lastStageLayers,
        overlapGradReduce, overlapParamGather);
  }

  /**
   * Why Megatron-Core could not overlap this layout's expert-parallel exchange with another
   * micro-batch's computation ({@code --overlap-moe-expert-parallel-comm}; its checks in
   * {@code transformer_config.py} at d98e8a64), or null when it could.
   */
  public String whyNotOverlapMoeComm() {
    if (engine != Engine.MEGATRON) {
      return "it is Megatron-Core's EP A2A overlap, run by megatron, not by " + engine.id();
    }
    if (ep <= 1) {
      return "it needs layout.ep > 1";
    }
    if (pp > 1 && virtualStages == 1) {
      return "it needs layout.virtualStages > 1 with pipeline parallelism";
    }
    if (recompute == Recompute.FULL) {
      return "not with full recomputation";
    }
    if (recomputes(RecomputeModule.MOE)) {
      return "not with the moe recomputation module";
    }
    return null;
  }

  /** Whether the backward reruns {@code module}'s forward (selective recomputation only). */
  public boolean recomputes(RecomputeModule module) {
    // Only selective recomputation names modules (the set is empty otherwise): most layouts a
    // search evaluates answer here, without a set lookup.
    return recompute == Recompute.SELECTIVE && recomputeModules.contains(module);
  }

  /**
   * The same layout with {@code first} and {@code last} layers on the first and last pipeline
   * ranks (0: their even share; Megatron-LM's {@code --decoder-first-pipeline-num-layers} and
   * {@code --decoder-last-pipeline-num-layers}).
   */
  public Layout withStageLayers(int first, int last) {
    return new Layout(tp, pp, dp, virtualStages, microBatch, sequenceParallel, recompute,
        zeroStage, engine, shardGroupSize, reshardAfterForward, ep, cp, cpCommType, etp,
        recomputeModules, moeDispatcher, overlapMoeComm, first, last, overlapGradReduce,
        overlapParamGather);
  }

  /** Whether the first or the last pipeline rank holds a number of layers of its own. */
  public boolean unevenStages() {
    return firstStageLayers > 0 || lastStageLayers > 0;
  }

  /**
   * Decoder layers of a model of {@code layers} on the first, each middle and the last pipeline
   * rank (over all its virtual stages). Without an uneven split every rank is counted at
   * {@code ⌈layers / pp⌉}, the largest share; with one, the ranks not fixed share the rest
   * evenly (Megatron-Core's {@code get_num_layers_to_build}, transformer_block.py at d98e8a64;
   * whether they divide it is checked against the model by the estimator).
   */
  public int[] stageLayers(int layers) {
    if (!unevenStages()) {
      int even = (layers + pp - 1) / pp;
      return new int[] {even, even, even};
    }
    int rest = layers - firstStageLayers - lastStageLayers;
    int others = pp - (firstStageLayers > 0 ? 1 : 0) - (lastStageLayers > 0 ? 1 : 0);
    int middle = others > 0 ? Math.max(0, (rest + others - 1) / others) : 0;
    return new int[] {firstStageLayers > 0 ? firstStageLayers : middle, middle,
        lastStageLayers > 0 ? lastStageLayers : middle};
  }

  /** The same layout with another expert-parallel degree. */
  public Layout withEp(int degree) {
    return new Layout(tp, pp, dp, virtualStages, microBatch, sequenceParallel, recompute,
        zeroStage, engine, shardGroupSize, reshardAfterForward, degree, cp,
        cpCommType, etp, recomputeModules, moeDispatcher, overlapMoeComm, firstStageLayers,
        lastStageLayers, overlapGradReduce,
        overlapParamGather);
  }

  /** The same layout with other expert-parallel and expert tensor-parallel degrees. */
  public Layout withExperts(int expertParallel, int expertTensorParallel) {
    return new Layout(tp, pp, dp, virtualStages, microBatch, sequenceParallel, recompute,
        zeroStage, engine, shardGroupSize, reshardAfterForward, expertParallel, cp, cpCommType,
        expertTensorParallel, recomputeModules, moeDispatcher, overlapMoeComm, firstStageLayers,
        lastStageLayers, overlapGradReduce,
        overlapParamGather);
  }

  /**
   * Whether an expert grid of {@code ep · etp} ranks tiles the {@code tp · cp · dp} ranks of a
   * pipeline stage (Megatron-Core's expert rank generator, {@code parallel_state.py} at
   * d98e8a64).
   */
  public static boolean expertGridFits(int tp, int cp, int dp, int ep, int etp) {
    return ((long) tp * cp * dp) % ((long) ep * etp) == 0;
  }

  /** Data-parallel ranks of the expert weights: {@code tp · cp · dp / (ep · etp)}. */
  public int expertDataParallel() {
    return (int) ((long) tp * cp * dp / ((long) ep * etp));
  }

  /** Devices the layout occupies: tp · cp · pp · dp. */
  public long devices() {
    return (long) tp * cp * pp * dp;
  }
}
