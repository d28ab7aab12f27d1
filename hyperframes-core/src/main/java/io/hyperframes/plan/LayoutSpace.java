package io.hyperframes.plan;

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
 * The layouts a training request allows: the fields it fixes, the rest enumerated (tensor,
 * pipeline, data, expert and context parallelism, ZeRO stage, micro-batch, recomputation,
 * dispatcher, overlap, uneven stages), each checked against the model, the cluster, the workload
 * and the engine's own rules, with errors that name the field and the value. The estimator
 * evaluates what this enumerates, and the planner searches the same space.
 */
final class LayoutSpace {
  /** The micro-batch sizes a search tries (a dense stack may go on doubling, addMicroLayouts). */
  static final int[] MICRO_BATCHES = {1, 2, 4, 8, 16, 32};

  private LayoutSpace() {}

  static void checkLayout(ModelSpec model, Cluster cluster, TrainingWorkload w,
      Layout l) {
    checkArgument(w.gradientCompression() == null || l.zeroStage() <= DataParallelTime.MAX_COMPRESSED_ZERO_STAGE
        || l.dp() == 1, "workload.gradientCompression: modelled for ZeRO stages 0 and 1 (one"
        + " gradient reduction a step), got layout.zeroStage %s", l.zeroStage());
    checkArgument(l.devices() == cluster.devices(), l.cp() == 1
        ? "layout: tp·pp·dp = %s·%s·%s = %s does not equal cluster.devices %s"
        : "layout: tp·pp·dp·cp = %s·%s·%s·" + l.cp() + " = %s does not equal cluster.devices %s",
        l.tp(), l.pp(), l.dp(), l.devices(), cluster.devices());
    if (l.cp() > 1) {
      checkArgument(model instanceof TransformerSpec, "layout.cp: %s needs a transformer model",
          l.cp());
      TransformerSpec t = (TransformerSpec) model;
      // Megatron-LM: "seq-length should be a multiple of 2 * context-parallel-size"
      // (megatron/training/arguments.py at d98e8a64), the two chunks per rank of causal
      // load balancing.
      checkArgument(t.seqLen() % (2 * l.cp()) == 0, "layout.cp: model.seqLen %s is not a"
          + " multiple of 2·cp = %s", t.seqLen(), 2 * l.cp());
      boolean ulysses = l.cpCommType() == CpCommType.A2A || l.cpCommType() == CpCommType.A2A_P2P;
      int a2aRanks = l.cpCommType() == CpCommType.A2A ? l.cp()
          : Math.max(1, Math.min(l.cp(), cluster.devicesPerNode() / l.tp()));
      checkArgument(!ulysses || (t.heads() / l.tp()) % a2aRanks == 0, "layout.cpCommType: %s"
          + " splits the %s heads per tensor-parallel rank over %s ranks, which does not"
          + " divide them", l.cpCommType().id(), t.heads() / l.tp(), a2aRanks);
    }
    if (model instanceof DenseStackSpec) {
      checkArgument(l.tp() == 1 && l.pp() == 1, "layout: a dense stack runs data-parallel"
          + " (tp 1, pp 1), got tp %s, pp %s", l.tp(), l.pp());
      checkArgument(l.recompute() == Recompute.NONE,
          "layout.recompute: a dense stack keeps its activations, got %s", l.recompute());
      checkArgument(w.globalBatchSize() > 0,
          "workload.globalBatchSize: must be given for a dense stack");
      checkArgument(w.globalBatchSize() % ((long) l.dp() * l.microBatch()) == 0,
          "workload.globalBatchSize: %s is not divisible by dp·microBatch = %s·%s",
          w.globalBatchSize(), l.dp(), l.microBatch());
    }
    if (model instanceof TransformerSpec m) {
      checkRecomputeModules(m, l.recomputeModules());
      checkArgument(!l.overlapMoeComm() || m.isMoe(),
          "layout.overlapMoeComm: needs a mixture of experts (model.moe)");
      checkArgument(!l.overlapMoeComm() || m.mtpLayers() <= 1, "layout.overlapMoeComm: at most"
          + " one multi-token-prediction layer (Megatron-Core), got model.mtpLayers %s",
          m.mtpLayers());
      checkArgument(l.moeDispatcher() == MoeDispatcher.ALL_TO_ALL || m.isMoe(),
          "layout.moeDispatcher: %s needs a mixture of experts (model.moe)",
          l.moeDispatcher().id());
      if (m.isMoe()) {
        checkMoeDispatcher(m, l.moeDispatcher());
      }
      checkArgument(l.ep() == 1 || m.isMoe(),
          "layout.ep: %s needs a mixture of experts (model.moe)", l.ep());
      checkArgument(l.etp() == l.tp() || m.isMoe(),
          "layout.etp: %s needs a mixture of experts (model.moe)", l.etp());
      checkArgument(l.ep() == 1 || m.moe().experts() % l.ep() == 0,
          "layout.ep: %s does not divide model.moe.experts %s", l.ep(),
          m.isMoe() ? m.moe().experts() : 0);
      checkArgument(m.heads() % l.tp() == 0, "layout.tp: %s does not divide model.heads %s",
          l.tp(), m.heads());
      checkArgument(l.pp() <= m.layers(), "layout.pp: %s is larger than model.layers %s",
          l.pp(), m.layers());
      if (l.unevenStages()) {
        checkStageLayers(m, l);
      }
      int perStage = l.stageLayers(m.layers())[1];
      checkArgument(perStage % l.virtualStages() == 0,
          "layout.virtualStages: %s does not divide the %s layers of a pipeline stage",
          l.virtualStages(), perStage);
      checkArgument(w.globalBatchSize() > 0,
          "workload.globalBatchSize: must be given for a transformer model");
      checkArgument(w.globalBatchSize() % ((long) l.dp() * l.microBatch()) == 0,
          "workload.globalBatchSize: %s is not divisible by dp·microBatch = %s·%s",
          w.globalBatchSize(), l.dp(), l.microBatch());
    }
  }

  /**
   * An uneven pipeline split (Megatron-Core's {@code get_num_layers_to_build},
   * transformer_block.py at d98e8a64): the first and last ranks' layers leave at least one layer
   * to each other rank and divide evenly among them; with no other rank they are all the
   * layers.
   */
  static void checkStageLayers(TransformerSpec m, Layout l) {
    int first = l.firstStageLayers();
    int last = l.lastStageLayers();
    int rest = m.layers() - first - last;
    int others = l.pp() - (first > 0 ? 1 : 0) - (last > 0 ? 1 : 0);
    String field = first > 0 ? "layout.firstStageLayers" : "layout.lastStageLayers";
    int value = first > 0 ? first : last;
    if (others == 0) {
      checkArgument(rest == 0, "%s: %s and layout.lastStageLayers %s are not the %s layers of"
          + " model.layers over pp 2", field, value, last, m.layers());
      return;
    }
    checkArgument(rest >= others, "%s: %s leaves %s of model.layers %s to the other %s"
        + " pipeline ranks (at least one each)", field, value, rest, m.layers(), others);
    checkArgument(rest % others == 0, "%s: %s leaves %s of model.layers %s, which the other %s"
        + " pipeline ranks cannot share evenly", field, value, rest, m.layers(), others);
  }

  /**
   * A fixed {@code layout.etp} needs a mixture of experts whose expert size it divides.
   *
   * @throws IllegalArgumentException naming layout.etp
   */
  static void checkExpertTensorParallel(PartialLayout p, ModelSpec model) {
    if (p.etp() == null) {
      return;
    }
    if (!(model instanceof TransformerSpec t && t.isMoe()) && p.etp().equals(p.tp())) {
      // etp = tp is what every layout means without experts (an estimate's own layout says so).
      return;
    }
    checkArgument(model instanceof TransformerSpec m && m.isMoe(), "layout.etp: %s needs a"
        + " mixture of experts (model.moe)", p.etp());
    int expertFfn = ((TransformerSpec) model).moe().expertFfnHidden();
    checkArgument(expertFfn % p.etp() == 0, "layout.etp: %s does not divide"
        + " model.moe.expertFfnHidden %s", p.etp(), expertFfn);
  }

  /** Every layout consistent with the request's fixed fields. */
  static List<Layout> candidates(EstimateRequest request) {
    PartialLayout p = request.layout();
    List<Layout> split = withStageLayers(request);
    if (p.overlapGradReduce() == null && p.overlapParamGather() == null) {
      return split;
    }
    List<Layout> out = new ArrayList<>();
    for (Layout l : split) {
      Layout overlap = p.withDataParallelOverlapOn(l);
      if (overlap != null) {
        out.add(overlap);
      }
    }
    if (out.isEmpty() && Boolean.FALSE.equals(p.overlapGradReduce()) && !split.isEmpty()) {
      Layout l = split.get(0);
      String why = l.engine().overlapUnsupported(l.pp(), l.zeroStage(), false, null);
      checkArgument(why == null, "%s", why);
    }
    checkArgument(!out.isEmpty(), "layout.overlapGradReduce: true is not run by %s with the"
        + " pipeline the request fixes (its pipeline engine reduces the gradients after the last"
        + " backward pass)", p.engineOrDefault().id());
    return out;
  }

  /** Every layout consistent with the request's fixed fields but the data-parallel overlap. */
  private static List<Layout> withStageLayers(EstimateRequest request) {
    PartialLayout p = request.layout();
    if (!p.fixesStageLayers()) {
      return withOverlap(request);
    }
    List<Layout> out = new ArrayList<>();
    for (Layout l : withOverlap(request)) {
      Layout split = p.withStageLayersOn(l);
      if (split != null) {
        out.add(split);
      }
    }
    checkArgument(!out.isEmpty(), "layout.%s: needs pipeline parallelism (pp > 1)",
        p.firstStageLayers() != null ? "firstStageLayers" : "lastStageLayers");
    return out;
  }

  /** Every layout consistent with the request's fixed fields but the uneven split. */
  private static List<Layout> withOverlap(EstimateRequest request) {
    if (!Boolean.TRUE.equals(request.layout().overlapMoeComm())) {
      return withDispatcher(request);
    }
    checkArgument(request.model() instanceof TransformerSpec t && t.isMoe(),
        "layout.overlapMoeComm: needs a mixture of experts (model.moe)");
    List<Layout> out = new ArrayList<>();
    String why = null;
    for (Layout l : withDispatcher(request)) {
      String not = overlapUnsupported(l);
      if (not == null) {
        out.add(l.withOverlapMoeComm(true));
      } else {
        why = not;
      }
    }
    checkArgument(!out.isEmpty(), "layout.overlapMoeComm: no layout consistent with the request"
        + " runs it: %s", why);
    return out;
  }

  /**
   * Why Megatron-Core cannot overlap {@code l}'s expert-parallel exchange
   * ({@code transformer_config.py} at d98e8a64), or null.
   */
  static String overlapUnsupported(Layout l) {
    return l.whyNotOverlapMoeComm();
  }

  /** {@link #withModules} with the request's token dispatcher. */
  private static List<Layout> withDispatcher(EstimateRequest request) {
    MoeDispatcher dispatcher = request.layout().moeDispatcher();
    if (dispatcher == null || dispatcher == MoeDispatcher.ALL_TO_ALL
        && !(request.model() instanceof TransformerSpec t && t.isMoe())) {
      // (The all-to-all dispatcher, the default, is no constraint on a model without experts.)
      return withModules(request);
    }
    checkArgument(request.model() instanceof TransformerSpec t && t.isMoe(),
        "layout.moeDispatcher: %s needs a mixture of experts (model.moe)", dispatcher.id());
    checkMoeDispatcher((TransformerSpec) request.model(), dispatcher);
    List<Layout> out = new ArrayList<>();
    for (Layout l : withModules(request)) {
      if (dispatcher != MoeDispatcher.DEEPEP || l.ep() * l.etp() > 1) {
        out.add(l.withMoeDispatcher(dispatcher));
      }
    }
    checkArgument(!out.isEmpty(), "layout.moeDispatcher: deepep needs layout.ep · layout.etp >"
        + " 1 (Megatron-Core: 'DeepEP dispatcher requires TPxEP > 1'), and no layout"
        + " consistent with the request has it");
    return out;
  }

  /**
   * Megatron-Core's rule for the dispatcher ({@code transformer_config.py} at d98e8a64): the
   * DeepEP backend does not pad expert inputs to a capacity, which is how HyperFrames models a
   * capacity factor.
   */
  static void checkMoeDispatcher(TransformerSpec model, MoeDispatcher dispatcher) {
    checkArgument(dispatcher != MoeDispatcher.DEEPEP || model.moe().capacityFactor() == 0,
        "layout.moeDispatcher: deepep does not pad expert inputs to a capacity (Megatron-Core:"
        + " 'Flex token dispatcher with deepep backend does not support"
        + " moe_pad_expert_input_to_capacity'); model.moe.capacityFactor is %s",
        model.moe().capacityFactor());
  }

  /** {@link #layoutsOf} with the request's recomputation modules. */
  private static List<Layout> withModules(EstimateRequest request) {
    Set<RecomputeModule> modules = request.layout().recomputeModules();
    if (modules == null) {
      return layoutsOf(request);
    }
    checkArgument(request.model() instanceof TransformerSpec, "layout.recomputeModules: %s"
        + " needs a transformer model", RecomputeModule.ids(modules));
    checkRecomputeModules((TransformerSpec) request.model(), modules);
    List<Layout> out = new ArrayList<>();
    for (Layout l : layoutsOf(request)) {
      out.add(l.withRecomputeModules(modules));
    }
    return out;
  }

  /**
   * Whether {@code model} has every module named: the MoE modules need a mixture of experts
   * (shared_experts shared experts), mla_up_proj latent attention, mlp a layer with a dense MLP.
   */
  static void checkRecomputeModules(TransformerSpec model, Set<RecomputeModule> modules) {
    for (RecomputeModule r : modules) {
      String missing = switch (r) {
        case MOE, MOE_ACT -> model.isMoe() ? null : "a mixture of experts (model.moe)";
        case SHARED_EXPERTS -> model.isMoe() && model.moe().sharedExperts() > 0 ? null
            : "shared experts (model.moe.sharedExperts)";
        case MLA_UP_PROJ -> model.mla() != null ? null : "latent attention (model.mla)";
        case MLP -> model.denseLayers() > 0 ? null : "a layer with a dense MLP (every layer of"
            + " this model is an MoE layer)";
        case CORE_ATTN, LAYERNORM -> null;
      };
      checkArgument(missing == null, "layout.recomputeModules: %s needs %s", r.id(), missing);
    }
  }

  /** A dense stack's layouts: data parallelism over every device, micro-batches searched. */
  private static List<Layout> denseLayouts(PartialLayout p, int batch, int devices,
      boolean compressed) {
    checkArgument(batch > 0, "workload.globalBatchSize: must be given for a dense stack");
    checkDenseLayout(p);
    checkArgument(p.dp() == null || p.dp() == devices,
        "layout.dp: %s does not equal cluster.devices %s (tp 1, pp 1)", p.dp(), devices);
    ImmutableList.Builder<Layout> out = ImmutableList.builder();
    addMicroLayouts(out, p, null, true, batch, 1, 1, devices, compressed);
    List<Layout> all = out.build();
    checkArgument(!all.isEmpty(), "layout: no layout satisfies the fixed fields (global batch"
        + " %s, %s devices)", batch, devices);
    return all;
  }

  /**
   * A fixed expert tensor-parallel degree: the layouts are made with experts split by tp (a
   * fixed ep at 1) and given ep and etp afterwards, where ep·etp divides tp·cp·dp.
   */
  private static List<Layout> withExpertTensorParallel(EstimateRequest request) {
    PartialLayout p = request.layout();
    checkExpertTensorParallel(p, request.model());
    Integer ep = p.ep();
    List<Layout> all = new ArrayList<>();
    for (Layout l : layoutsOf(new EstimateRequest(request.model(), request.cluster(),
        request.workload(), p.withEp(ep == null ? null : 1).withEtp(null)))) {
      int e = ep == null ? l.ep() : ep;
      if (Layout.expertGridFits(l.tp(), l.cp(), l.dp(), e, p.etp())) {
        all.add(l.withExperts(e, p.etp()));
      }
    }
    checkArgument(!all.isEmpty(), "layout.etp: no layout has ep·etp (etp %s) dividing"
        + " tp·cp·dp", p.etp());
    return all;
  }

  private static List<Layout> layoutsOf(EstimateRequest request) {
    ModelSpec model = request.model();
    Cluster cluster = request.cluster();
    PartialLayout p = request.layout();
    int devices = cluster.devices();
    TransformerSpec m = model instanceof TransformerSpec t ? t : null;
    boolean dense = model instanceof DenseStackSpec;
    int batch = request.workload().globalBatchSize();
    boolean compressed = request.workload().gradientCompression() != null;
    if (dense) {
      return denseLayouts(p, batch, devices, compressed);
    }

    if (m != null) {
      checkArgument(batch > 0, "workload.globalBatchSize: must be given for a transformer model");
      if (p.tp() != null) {
        checkArgument(m.heads() % p.tp() == 0, "layout.tp: %s does not divide model.heads %s",
            p.tp(), m.heads());
      }
      if (p.pp() != null) {
        checkArgument(p.pp() <= m.layers(), "layout.pp: %s is larger than model.layers %s",
            p.pp(), m.layers());
      }
    }
    if (p.etp() != null) {
      return withExpertTensorParallel(request);
    }
    // Context parallelism (never searched by an estimate): the other fields split what is left.
    int cp = p.cp() == null ? 1 : p.cp();
    CpCommType cpType = p.cpCommType() == null ? CpCommType.P2P : p.cpCommType();
    checkArgument(cp == 1 || m != null, "layout.cp: %s needs a transformer model", cp);
    checkArgument(devices % cp == 0, "layout.cp: %s does not divide cluster.devices %s", cp,
        devices);
    if (cp > 1 || p.cpCommType() != null) {
      // A fixed ep divides dp·cp (it may exceed dp): the layouts without cp are made at ep 1
      // and given the ep afterwards; an open ep is searched over the divisors of dp.
      Integer ep = p.ep();
      List<Layout> all = new ArrayList<>();
      for (Layout l : layoutsOf(new EstimateRequest(model, cluster.withDevices(devices / cp),
          request.workload(), ep == null ? p.withoutCp() : p.withoutCp().withEp(1)))) {
        Layout withCp = l.withCp(cp, cpType);
        all.add(ep == null ? withCp : withCp.withEp(ep));
      }
      return all;
    }
    if (p.tp() != null && p.pp() != null && p.dp() != null) {
      long product = (long) p.tp() * p.pp() * p.dp();
      checkArgument(product == devices,
          "layout: tp·pp·dp = %s·%s·%s = %s does not equal cluster.devices %s", p.tp(), p.pp(),
          p.dp(), product, devices);
    }
    List<Integer> tps = p.tp() != null ? List.of(p.tp()) : divisorsUpTo(devices,
        cluster.devicesPerNode(), m == null ? 0 : m.heads());
    ImmutableList.Builder<Layout> out = ImmutableList.builder();
    for (int tp : tps) {
      checkArgument(devices % tp == 0, "layout.tp: %s does not divide cluster.devices %s", tp,
          devices);
      List<Integer> pps = p.pp() != null ? List.of(p.pp())
          : divisorsUpTo(devices / tp, m == null ? devices : m.layers(), 0);
      for (int pp : pps) {
        if (p.pp() != null) {
          checkArgument(devices % ((long) tp * pp) == 0,
              "layout: tp·pp = %s·%s does not divide cluster.devices %s", tp, pp, devices);
        }
        if (devices % (tp * pp) != 0) {
          continue;
        }
        int dp = devices / (tp * pp);
        if (p.dp() != null && p.dp() != dp) {
          checkArgument(p.tp() == null || p.pp() == null,
              "layout: tp·pp·dp = %s·%s·%s does not equal cluster.devices %s", tp, pp, p.dp(),
              devices);
          continue;
        }
        addMicroLayouts(out, p, m, false, batch, tp, pp, dp, compressed);
      }
    }
    List<Layout> all = out.build();
    checkArgument(!all.isEmpty(),
        "layout: no layout satisfies the fixed fields (global batch %s, %s devices)", batch,
        devices);
    return all;
  }

  /**
   * The fixed fields a dense stack allows: data parallelism only, no recomputation.
   *
   * @throws IllegalArgumentException naming the field and the value
   */
  static void checkDenseLayout(PartialLayout p) {
    checkArgument(p.tp() == null || p.tp() == 1,
        "layout.tp: a dense stack runs data-parallel (tp 1), got %s", p.tp());
    checkArgument(p.pp() == null || p.pp() == 1,
        "layout.pp: a dense stack runs data-parallel (pp 1), got %s", p.pp());
    checkArgument(p.recompute() == null || p.recompute() == Recompute.NONE,
        "layout.recompute: a dense stack keeps its activations, got %s", p.recompute());
  }

  /**
   * The ZeRO stages a search tries: the fixed one, 0 without data parallelism, else those the
   * engine runs with {@code pp} stages, 0 and 1 only with a gradient codec.
   */
  static List<Integer> zeroStages(PartialLayout p, Engine engine, int dp, int pp,
      boolean compressed) {
    if (p.zeroStage() != null) {
      // A fixed stage the engine does not run with this pipeline leaves nothing to try here.
      return engine.runsZeroStage(p.zeroStage(), pp) ? List.of(p.zeroStage()) : List.of();
    }
    return dp == 1 ? List.of(0)
        : List.of(0, 1, 2, 3).stream().filter(z -> engine.runsZeroStage(z, pp))
            .filter(z -> !compressed || z <= DataParallelTime.MAX_COMPRESSED_ZERO_STAGE).toList();
  }

  private static void addMicroLayouts(ImmutableList.Builder<Layout> out, PartialLayout p,
      TransformerSpec m, boolean dense, int batch, int tp, int pp, int dp, boolean compressed) {
    Engine engine = p.engineOrDefault();
    // Hybrid-shard fields imply ZeRO 3 when the stage is left to the search.
    List<Integer> zeros = p.zeroStage() == null && dp > 1
        && (p.shardGroupSize() != null || p.reshardAfterForward() != null)
            ? (engine.runsZeroStage(3, pp) ? List.of(3) : List.of())
            : zeroStages(p, engine, dp, pp, compressed);
    int group = p.shardGroupSize() == null ? 0 : p.shardGroupSize();
    checkArgument(group == 0 || dp % group == 0,
        "layout.shardGroupSize: %s does not divide layout.dp %s", group, dp);
    boolean reshard = p.reshardAfterForward() == null || p.reshardAfterForward();
    if (m == null && !dense) {
      for (int z : zeros) {
        out.add(new Layout(tp, pp, dp, 1, 1, false, Recompute.NONE, z, engine,
            z == 3 || z == 1 ? group : 0, reshard));
      }
      return;
    }
    if (batch % dp != 0) {
      checkArgument(p.dp() == null && (p.tp() == null || p.pp() == null),
          "workload.globalBatchSize: %s is not divisible by layout.dp %s", batch, dp);
      return;
    }
    int perReplica = batch / dp;
    List<Integer> mbs = new ArrayList<>();
    if (p.microBatch() != null) {
      checkArgument(perReplica % p.microBatch() == 0,
          "layout.microBatch: %s does not divide the %s sequences per data-parallel rank",
          p.microBatch(), perReplica);
      mbs.add(p.microBatch());
    } else {
      for (int mb : MICRO_BATCHES) {
        if (mb <= perReplica && perReplica % mb == 0) {
          mbs.add(mb);
        }
      }
      // A dense stack's sample is one matmul row: larger micro-batches, up to the whole batch.
      for (int mb = 2 * MICRO_BATCHES[MICRO_BATCHES.length - 1]; dense && mb <= perReplica;
          mb *= 2) {
        if (perReplica % mb == 0) {
          mbs.add(mb);
        }
      }
    }
    int perStage = dense ? 1 : (m.layers() + pp - 1) / pp;
    List<Boolean> sps = p.sequenceParallel() != null ? List.of(p.sequenceParallel())
        : tp > 1 ? List.of(false, true) : List.of(false);
    List<Recompute> recomputes = p.recompute() != null ? List.of(p.recompute())
        : dense ? List.of(Recompute.NONE)
            : List.of(Recompute.NONE, Recompute.SELECTIVE, Recompute.FULL);
    for (int mb : mbs) {
      int microBatches = perReplica / mb;
      List<Integer> vs = new ArrayList<>();
      if (p.virtualStages() != null) {
        vs.add(p.virtualStages());
      } else {
        vs.add(1);
        if (pp > 1 && microBatches % pp == 0 && engine.interleavesPipeline()) {
          // Megatron-LM needs whole layers per virtual stage: v divides the stage's layers
          // (one layer per virtual stage included, as for a prime layer count).
          for (int v = 2; v <= perStage; v++) {
            if (perStage % v == 0) {
              vs.add(v);
            }
          }
        }
      }
      for (int v : vs) {
        for (boolean sp : sps) {
          for (Recompute r : recomputes) {
            for (int z : zeros) {
              for (int ep : expertParallel(p, m, dp, engine, tp)) {
                out.add(new Layout(tp, pp, dp, v, mb, sp, r, z, engine,
                    z == 3 || z == 1 ? group : 0, reshard, ep));
              }
            }
          }
        }
      }
    }
  }

  /**
   * The expert-parallel degrees to try: the fixed one (when it divides dp, or tp·dp on an engine
   * that keeps experts whole, whose expert grid takes the tensor-parallel ranks too:
   * {@link Engine#splitsExperts}), else 1 for a dense model or an engine without expert
   * parallelism, else every divisor of dp that divides the expert count.
   */
  private static List<Integer> expertParallel(PartialLayout p, TransformerSpec m, int dp,
      Engine engine, int tp) {
    if (p.ep() != null && p.ep() > 1 && !engine.splitsExperts()) {
      return ((long) tp * dp) % p.ep() == 0 ? List.of(p.ep()) : List.of();
    }
    return expertParallel(p, m, dp, engine);
  }

  /**
   * The expert-parallel degrees to try: the fixed one (when it divides dp), else 1 for a dense
   * model or an engine without expert parallelism, else every divisor of dp that divides the
   * expert count.
   */
  static List<Integer> expertParallel(PartialLayout p, TransformerSpec m, int dp,
      Engine engine) {
    if (p.ep() != null) {
      return dp % p.ep() == 0 ? List.of(p.ep()) : List.of();
    }
    if (m == null || !m.isMoe() || !engine.runsExpertParallel()) {
      return List.of(1);
    }
    return divisorsUpTo(dp, dp, m.moe().experts());
  }

  private static List<Integer> divisorsUpTo(int n, int max, int mustDivide) {
    List<Integer> out = new ArrayList<>();
    for (int d = 1; d <= Math.min(n, max); d++) {
      if (n % d == 0 && (mustDivide == 0 || mustDivide % d == 0)) {
        out.add(d);
      }
    }
    return out;
  }
}
