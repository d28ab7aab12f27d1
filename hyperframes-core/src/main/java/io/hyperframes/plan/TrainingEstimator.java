package io.hyperframes.plan;

import static com.google.common.base.Preconditions.checkArgument;

import io.hyperframes.request.EstimateRequest;
import io.hyperframes.hardware.Accelerator;
import io.hyperframes.hardware.Cluster;
import io.hyperframes.hardware.KernelEfficiency;
import io.hyperframes.hardware.StepInterval;
import io.hyperframes.interconnect.Collective;
import io.hyperframes.interconnect.CollectiveGroup;
import io.hyperframes.interconnect.InterconnectModel;
import io.hyperframes.memory.MemoryHierarchyModel;
import io.hyperframes.model.Block;
import io.hyperframes.model.DenseStackSpec;
import io.hyperframes.model.ModelSpec;
import io.hyperframes.model.MoeSpec;
import io.hyperframes.model.TransformerSpec;
import io.hyperframes.parallel.Engine;
import io.hyperframes.parallel.Layout;
import io.hyperframes.parallel.ModelStates;
import io.hyperframes.parallel.ParallelismModel;
import io.hyperframes.parallel.Recompute;
import io.hyperframes.parallel.RecomputeModule;
import io.hyperframes.precision.NumberFormat;
import io.hyperframes.precision.model.PrecisionModel;
import io.hyperframes.precision.PrecisionRecipe;
import io.hyperframes.workload.Attention;
import io.hyperframes.workload.TrainingWorkload;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Estimates memory and step time of a training layout by composing the four models.
 *
 * <p>Instances are immutable and thread-safe. {@link #analytical()} uses the analytical defaults;
 * {@link #of} accepts calibrated variants of any model.
 */
public final class TrainingEstimator {

  /*
   * Step-time model (see docs/model-reference.md for every formula and its source).
   *
   * Per micro-batch and layer, the forward pass costs the roofline time of its matmuls (dense
   * projections 2·tokens·P_matmul/t and attention scores 4·b·s²·h/t) plus the memory-bound
   * element-wise work (norms, residual adds with dropout, the MLP activation and the attention
   * softmax/dropout), whose bytes follow the activation inventory of Korthikanti et al. 2022 §4.
   * Backward costs twice the forward (Narayanan et al. 2021 §5.1: the 3× of training FLOPs);
   * full recomputation adds one forward, selective recomputation the attention core only.
   * Tensor-parallel collectives are on the critical path (Megatron-LM does not overlap them).
   * The slowest pipeline stage is the last one (it also computes the logits); the 1F1B bubble is
   * (p-1)/v micro-batch times (Narayanan et al. 2021 §2.2). Data-parallel gradient reduction is
   * bucketed and overlaps the backward pass of the last micro-batch, as in PyTorch DDP (Li et al.
   * 2020, arXiv 2006.15704, §3.2.3) and Megatron's overlapped distributed optimizer; what does not
   * fit in that window is exposed. The optimizer update is memory-bound.
   */

  /** Bytes the runtime keeps besides tensors: CUDA context, library workspaces, NCCL buffers. */
  static final double RUNTIME_RESERVE_BYTES = 1.5 * (1L << 30);


  private final PrecisionModel precisionModel;
  private final MemoryHierarchyModel memoryModel;
  private final InterconnectModel interconnect;
  private final DataParallelTime dataParallel;
  private final ActivationExchange activations;
  private final ParallelismModel parallelism;

  /**
   * The model evaluated last, prepared ({@link Prepared}): a planner evaluates millions of
   * layouts of one model, and building its blocks again for each costs as much as the rest of
   * the evaluation. An immutable value behind a volatile reference, so concurrent evaluations
   * at worst prepare it twice.
   */
  private volatile Prepared lastPrepared;

  /**
   * One model and load imbalance, with what every layout of it shares: its blocks
   * ({@link TransformerSpec#blocks()}) and their layout-independent sums (parameters, active
   * parameters, training FLOPs per token, forward FLOPs per token of an average layer), and
   * the model as the busiest expert-parallel rank runs it ({@link #busiestRank}) with its
   * blocks, used by the layouts with expert parallelism.
   */
  private record Prepared(TransformerSpec model, double imbalance, List<Block> blocks,
      double parameters, double activeParameters, double trainingFlopsPerToken,
      double forwardFlopsPerTokenPerLayer, TransformerSpec busiest, List<Block> busiestBlocks) {

    static Prepared of(TransformerSpec m, double imbalance) {
      TransformerSpec busiest = busiestRank(m, imbalance);
      List<Block> blocks = m.blocks();
      return new Prepared(m, imbalance, blocks, m.parameters(), m.activeParameters(),
          m.trainingFlopsPerToken(), m.forwardFlopsPerTokenPerLayer(), busiest,
          busiest == m ? blocks : busiest.blocks());
    }

    /** The model a rank of {@code layout} runs: the busiest rank's with expert parallelism. */
    TransformerSpec rank(Layout layout) {
      return layout.ep() > 1 ? busiest : model;
    }

    /** The blocks of {@link #rank}. */
    List<Block> rankBlocks(Layout layout) {
      return layout.ep() > 1 ? busiestBlocks : blocks;
    }
  }

  /** {@code m} prepared, from the last evaluation's when it was the same model and imbalance. */
  private Prepared prepared(TransformerSpec m, TrainingWorkload w) {
    Prepared last = lastPrepared;
    double imbalance = w.moeLoadImbalance();
    if (last != null && last.imbalance() == imbalance
        && (last.model() == m || last.model().equals(m))) {
      return last;
    }
    Prepared p = Prepared.of(m, imbalance);
    lastPrepared = p;
    return p;
  }

  private TrainingEstimator(PrecisionModel precisionModel, MemoryHierarchyModel memoryModel,
      InterconnectModel interconnect, ParallelismModel parallelism) {
    this.precisionModel = precisionModel;
    this.memoryModel = memoryModel;
    this.interconnect = interconnect;
    this.dataParallel = new DataParallelTime(interconnect);
    this.activations = new ActivationExchange(interconnect);
    this.parallelism = parallelism;
  }

  /** The interconnect model this estimator times collectives with. */
  public InterconnectModel interconnect() {
    return interconnect;
  }

  /** The estimator over the analytical models. */
  public static TrainingEstimator analytical() {
    return of(PrecisionModel.analytical(), MemoryHierarchyModel.analytical(),
        InterconnectModel.alphaBeta(), ParallelismModel.megatron());
  }

  /** An estimator over the given models (for example calibrated by probes). */
  public static TrainingEstimator of(PrecisionModel precision, MemoryHierarchyModel memory,
      InterconnectModel interconnect, ParallelismModel parallelism) {
    checkArgument(precision != null, "precisionModel: must be given");
    checkArgument(memory != null, "memoryModel: must be given");
    checkArgument(interconnect != null, "interconnectModel: must be given");
    checkArgument(parallelism != null, "parallelismModel: must be given");
    return new TrainingEstimator(precision, memory, interconnect, parallelism);
  }

  /**
   * Estimates the request's layout; fields the layout leaves open are chosen by a small search
   * for the shortest step that fits in memory (or, when none fits, the smallest footprint).
   *
   * @throws IllegalArgumentException when the fixed fields contradict each other or the model
   */
  public TrainingEstimate estimate(EstimateRequest request) {
    checkArgument(request != null, "request: must be given");
    List<Layout> candidates = LayoutSpace.candidates(request);
    TrainingEstimate best = null;
    TrainingEstimate smallest = null;
    for (Layout layout : candidates) {
      TrainingEstimate e = evaluate(request.model(), request.cluster(), request.workload(), layout);
      if (e.feasible() && (best == null || e.stepSeconds() < best.stepSeconds())) {
        best = e;
      }
      if (smallest == null || e.memory().totalBytes() < smallest.memory().totalBytes()) {
        smallest = e;
      }
    }
    return best != null ? best : smallest;
  }

  /**
   * Bytes per device of a transformer layout, as {@link #evaluate} reports them, without its
   * step time: the planner skips the step time of layouts that cannot fit once better ones have
   * been found. The layout must be valid ({@link #evaluate} checks it).
   */
  double deviceBytes(TransformerSpec model, Cluster cluster, TrainingWorkload workload,
      Layout layout) {
    return deviceBytes(model, cluster, workload, layout, modelStates(model, layout, workload));
  }

  /** {@link #deviceBytes(TransformerSpec, Cluster, TrainingWorkload, Layout)} with the states. */
  double deviceBytes(TransformerSpec model, Cluster cluster, TrainingWorkload workload,
      Layout layout, ModelStates states) {
    return memory(model, cluster, workload, layout, states).totalBytes();
  }

  /**
   * The memory per device of a transformer layout, as {@link #evaluate} reports it, without its
   * step time; {@link #evaluate(ModelSpec, Cluster, TrainingWorkload, Layout, ModelStates,
   * MemoryBreakdown)} takes it back so that a layout the planner has already sized is not sized
   * twice. The layout must be valid ({@link #evaluate} checks it).
   */
  MemoryBreakdown memory(TransformerSpec model, Cluster cluster, TrainingWorkload workload,
      Layout layout, ModelStates states) {
    Prepared p = prepared(model, workload);
    return memory(p.rank(layout), p.rankBlocks(layout), cluster.accelerator(), workload, layout,
        states);
  }

  /**
   * The model as the busiest expert-parallel rank runs it. In a dropless MoE layer the ranks of
   * an expert-parallel group compute the token copies routed to their experts, and the layer
   * ends for all of them when the busiest has finished its experts and its share of the combine
   * (Fedus et al. 2021, Switch Transformer §2.2: the most loaded expert bounds the layer; a
   * dropless layer has no capacity that caps it, Gale et al. 2022, MegaBlocks §3). That rank
   * computes, exchanges and stores {@code workload.moeLoadImbalance} times the mean routed
   * copies: the same as a layer whose every rank is padded to that capacity factor, which is how
   * the busiest rank's work is expressed here. The model's FLOPs, parameters and MFU stay those
   * of the real routing. Without expert parallelism, with a capacity factor (every rank computes
   * its padded capacity), without routing (one expert) or at imbalance 1 the model is returned
   * unchanged; without expert parallelism every rank runs the model itself
   * ({@link Prepared#rank}).
   */
  private static TransformerSpec busiestRank(TransformerSpec m, double imbalance) {
    if (imbalance == 1.0 || !m.isMoe() || !m.moe().routed() || m.moe().capacityFactor() > 0) {
      return m;
    }
    MoeSpec moe = m.moe();
    return new TransformerSpec(m.name(), m.layers(), m.hidden(), m.heads(), m.kvHeads(),
        m.ffnHidden(), m.gatedMlp(), m.vocab(), m.seqLen(), m.tiedEmbeddings(), m.headDim(),
        moe.withCapacityFactor(imbalance),
        m.mla(), m.slidingWindow(), m.mtpLayers());
  }

  private MemoryBreakdown memory(TransformerSpec m, List<Block> blocks, Accelerator acc,
      TrainingWorkload workload, Layout layout, ModelStates states) {
    PrecisionRecipe recipe = workload.precision();
    int microBatches = workload.globalBatchSize() / (layout.dp() * layout.microBatch());
    // Fused attention never stores the scores: its activations are those of selective
    // recomputation (Korthikanti et al. 2022 §4.2 drop exactly the attention core; FlashAttention
    // keeps only the output and a per-row log-sum-exp, Dao 2023 §3.1, which we neglect).
    Layout stored = layout;
    if (workload.attentionOn(acc, layout.engine()) == Attention.FLASH) {
      if (layout.recompute() == Recompute.NONE) {
        stored = layout.withRecompute(Recompute.SELECTIVE);
      } else if (layout.recompute() == Recompute.SELECTIVE
          && !layout.recomputes(RecomputeModule.CORE_ATTN)) {
        java.util.EnumSet<RecomputeModule> withCore =
            java.util.EnumSet.copyOf(layout.recomputeModules());
        withCore.add(RecomputeModule.CORE_ATTN);
        stored = layout.withRecomputeModules(withCore);
      }
    }
    double activations = parallelism.activationBytes(m, blocks, stored, recipe, microBatches);
    double tokensPerMicroBatch = (double) m.seqLen() / layout.cp() * layout.microBatch();
    double logitBytes = tokensPerMicroBatch * m.vocab() / layout.tp()
        * (recipe.activationBytes() + 4.0);
    double bucketBytes = layout.gradientRanks() > 1 ? 2 * 25e6 * recipe.gradientBytes() : 0.0;
    double other = RUNTIME_RESERVE_BYTES + logitBytes + bucketBytes;
    return new MemoryBreakdown(states.weightsBytes(), states.gradientsBytes(),
        states.optimizerBytes(), activations, other, states.layerStatesBytes(),
        states.expertStatesBytes());
  }

  /** Model-state bytes of a layout (independent of micro-batch, SP and recomputation). */
  public io.hyperframes.parallel.ModelStates modelStates(ModelSpec model, Layout layout,
      TrainingWorkload workload) {
    return parallelism.modelStates(model, layout, workload.precision(), workload.optimizer());
  }

  /** Evaluates one fully resolved layout (no search). */
  public TrainingEstimate evaluate(ModelSpec model, Cluster cluster, TrainingWorkload workload,
      Layout layout) {
    LayoutSpace.checkLayout(model, cluster, workload, layout);
    return evaluateChecked(model, cluster, workload, layout,
        parallelism.modelStates(model, layout, workload.precision(), workload.optimizer()), null);
  }

  /**
   * {@link #evaluate(ModelSpec, Cluster, TrainingWorkload, Layout)} with the layout's model
   * states already computed: the planner computes them once per group of layouts that differ
   * only in what they do not depend on (rule 1 of {@link Planner}).
   */
  TrainingEstimate evaluate(ModelSpec model, Cluster cluster, TrainingWorkload workload,
      Layout layout, ModelStates states) {
    LayoutSpace.checkLayout(model, cluster, workload, layout);
    return evaluateChecked(model, cluster, workload, layout, states, null);
  }

  /**
   * {@link #evaluate(ModelSpec, Cluster, TrainingWorkload, Layout, ModelStates)} of a transformer
   * layout whose memory {@link #memory(TransformerSpec, Cluster, TrainingWorkload, Layout,
   * ModelStates)} already gave, for the same arguments.
   */
  TrainingEstimate evaluate(TransformerSpec model, Cluster cluster, TrainingWorkload workload,
      Layout layout, ModelStates states, MemoryBreakdown memory) {
    LayoutSpace.checkLayout(model, cluster, workload, layout);
    return evaluateChecked(model, cluster, workload, layout, states, memory);
  }

  /** The estimate; {@code known} is the layout's memory when the caller has it, else null. */
  private TrainingEstimate evaluateChecked(ModelSpec model, Cluster cluster,
      TrainingWorkload workload, Layout layout, ModelStates states, MemoryBreakdown known) {
    Accelerator acc = cluster.accelerator();
    PrecisionRecipe recipe = workload.precision();
    List<String> reasons = List.of();
    double peak = acc.supports(recipe.compute()) ? precisionModel.peakFlopsPerSecond(acc, recipe)
        : 0.0;
    if (peak == 0.0) {
      reasons = List.of("precision: " + acc.id() + " has no " + recipe.compute().id()
          + " tensor throughput");
    }
    if (model instanceof DenseStackSpec d) {
      return evaluateDense(d, cluster, workload, layout, states, peak, reasons);
    }
    if (!(model instanceof TransformerSpec m)) {
      MemoryBreakdown memory = new MemoryBreakdown(states.weightsBytes(), states.gradientsBytes(),
          states.optimizerBytes(), 0.0, 0.0, states.layerStatesBytes());
      reasons = new ArrayList<>(withMemoryReason(reasons, memory, acc));
      reasons.add("time: a parameters-only model has no architecture, so no step time is estimated");
      return new TrainingEstimate(reasons.size() == 1, reasons, layout, model.parameters(),
          model.parameters(), memory,
          new TimeBreakdown(0, 0, 0, 0, 0, 0, 0), 0, 0, layout.devices(),
          Math.max(peak, 1.0), 0, workload.trainingTokens(), StepInterval.NONE);
    }
    int microBatches = workload.globalBatchSize() / (layout.dp() * layout.microBatch());
    Prepared prepared = prepared(m, workload);
    TransformerSpec busiest = prepared.rank(layout);
    List<Block> blocks = prepared.rankBlocks(layout);
    MemoryBreakdown memory = known != null ? known
        : memory(busiest, blocks, acc, workload, layout, states);
    reasons = withMemoryReason(reasons, memory, acc);

    TimeBreakdown time = peak > 0 ? stepTime(busiest, blocks, cluster, workload, layout, states,
        peak, microBatches) : new TimeBreakdown(0, 0, 0, 0, 0, 0, 0);
    double tokensPerStep = (double) workload.globalBatchSize() * m.seqLen();
    double modelFlops = prepared.trainingFlopsPerToken() * tokensPerStep;
    double recomputeFlops = switch (layout.recompute()) {
      case FULL -> m.layers() * prepared.forwardFlopsPerTokenPerLayer() * tokensPerStep;
      case SELECTIVE -> (layout.recomputes(RecomputeModule.CORE_ATTN)
          ? m.layers() * 4.0 * m.seqLen() * (double) m.qDim() * tokensPerStep : 0.0)
          + LayerTime.moduleRecomputeFlopsPerToken(m, layout) * tokensPerStep;
      case NONE -> 0.0;
    };
    return new TrainingEstimate(reasons.isEmpty(), reasons, layout, prepared.parameters(),
        prepared.activeParameters(), memory, time,
        modelFlops, modelFlops + recomputeFlops, layout.devices(), Math.max(peak, 1.0),
        tokensPerStep, workload.trainingTokens(), acc.interval(StepInterval.regime(layout.tp(),
            layout.pp(), layout.ep(), layout.zeroStage(), time.exposedCommShare())));
  }

  /**
   * A dense stack, data-parallel: per micro-batch of b samples each layer runs its forward
   * matmul (b × in · in × out) and the two backward ones (dX = dY·Wᵀ, dW = Xᵀ·dY; the first
   * layer has no dX, its input being data) through the
   * size-dependent matmul roofline, plus the element-wise bias, activation and their gradients
   * (six passes over the layer's b × out outputs) and the kernel's per-layer overhead; the
   * gradient reduction overlaps the backward pass as for a transformer
   * ({@link #dataParallelExposed}); activations kept for backward: every layer's pre- and
   * post-activation output of the micro-batch.
   */
  private TrainingEstimate evaluateDense(DenseStackSpec d, Cluster cluster, TrainingWorkload w,
      Layout l, ModelStates states, double peak, List<String> reasons) {
    Accelerator acc = cluster.accelerator();
    PrecisionRecipe recipe = w.precision();
    double e = recipe.activationBytes();
    double b = l.microBatch();
    int microBatches = w.globalBatchSize() / (l.dp() * l.microBatch());
    double activations = 2 * e * b * d.activationsPerSample();
    double bucketBytes = l.dp() > 1 ? 2 * 25e6 * recipe.gradientBytes() : 0.0;
    double other = RUNTIME_RESERVE_BYTES + bucketBytes;
    MemoryBreakdown memory = new MemoryBreakdown(states.weightsBytes(), states.gradientsBytes(),
        states.optimizerBytes(), activations, other, states.layerStatesBytes());
    reasons = withMemoryReason(reasons, memory, acc);
    TimeBreakdown time = new TimeBreakdown(0, 0, 0, 0, 0, 0, 0);
    if (peak > 0) {
      NumberFormat c = recipe.compute();
      KernelEfficiency kernel = acc.kernel(c);
      double bandwidth = memoryModel.streamingBytesPerSecond(acc);
      double ewBandwidth = LayerTime.elementwiseBytesPerSecond(memoryModel, acc, recipe);
      double forward = 0;
      double backward = 0;
      List<Integer> widths = d.widths();
      for (int i = 1; i < widths.size(); i++) {
        double in = widths.get(i - 1);
        double out = widths.get(i);
        double elementwise = e * b * out / ewBandwidth;
        forward += memoryModel.matmulSeconds(acc, b, out, in, 1, e, c, peak) + 2 * elementwise
            + kernel.layerOverheadSeconds() / 3;
        // The first layer's input is data: no gradient is asked of it, so its dX product is
        // not computed (PyTorch autograd computes gradients only of tensors that require them,
        // and HyperFrames' FusedMlp skips it the same way).
        double inputGradient = i == 1 ? 0.0 : memoryModel.matmulSeconds(acc, b, in, out, 1, e,
            c, peak);
        backward += inputGradient
            + memoryModel.matmulSeconds(acc, in, out, b, 1, e, c, peak) + 4 * elementwise
            + 2 * kernel.layerOverheadSeconds() / 3;
      }
      double mbCompute = forward + backward;
      int units = d.layers();
      double backwardWindow = l.overlapGradReduce() ? backward : 0.0;
      double dp = dataParallel.exposedSeconds(cluster, l, states, w, kernel, units,
          forward / units, backward / units, backwardWindow, microBatches, null, 0.0);
      time = new TimeBreakdown(microBatches * mbCompute, 0, 0, 0, dp, 0,
          DataParallelTime.optimizerSeconds(states, l, w,
              bandwidth * kernel.optimizerBandwidthFraction()));
    }
    double samplesPerStep = w.globalBatchSize();
    double modelFlops = d.trainingFlopsPerSample() * samplesPerStep;
    return new TrainingEstimate(reasons.isEmpty(), reasons, l, d.parameters(), d.parameters(),
        memory, time,
        modelFlops, modelFlops, l.devices(), Math.max(peak, 1.0), samplesPerStep,
        w.trainingTokens(), acc.interval(StepInterval.regime(1, 1, 1, l.zeroStage(),
            time.exposedCommShare())));
  }

  /**
   * {@code reasons} and, when the memory exceeds the device's, a memory reason formatted only
   * when it is read ({@link Reasons}).
   */
  private static List<String> withMemoryReason(List<String> reasons, MemoryBreakdown memory,
      Accelerator acc) {
    if (memory.totalBytes() <= acc.memoryBytes()) {
      return reasons;
    }
    return new Reasons(reasons, () -> String.format(Locale.ROOT,
        "memory: %.1f GiB per device exceeds the %.1f GiB of %s (model states %.1f GiB,"
            + " activations %.1f GiB, other %.1f GiB)",
        gib(memory.totalBytes()), gib(acc.memoryBytes()), acc.id(),
        gib(memory.modelStatesBytes()), gib(memory.activationsBytes()),
        gib(memory.otherBytes())));
  }

  static double gib(double bytes) {
    return bytes / (1L << 30);
  }

  private TimeBreakdown stepTime(TransformerSpec m, List<Block> blocks, Cluster cluster,
      TrainingWorkload w, Layout l, ModelStates states, double peak, int microBatches) {
    // One layer of this rank: forward, training and recomputation (LayerTime).
    LayerTime layer = new LayerTime(memoryModel, precisionModel, m, blocks,
        cluster.accelerator(), w, l, peak);
    PrecisionRecipe recipe = layer.recipe;
    KernelEfficiency kernel = layer.kernel;
    double forward = layer.forward;
    double layerTraining = layer.layerTraining;
    double recompute = layer.recompute;

    // Tensor-parallel collectives, on the critical path.
    double tTp = 0.0;
    int tpCollectives = parallelism.tensorParallelCollectivesPerLayer(l);
    if (tpCollectives > 0) {
      CollectiveGroup group = new CollectiveGroup(l.tp(),
          Math.min(l.tp(), cluster.devicesPerNode()) == l.tp() ? l.tp() : cluster.devicesPerNode());
      tTp = tpCollectives * interconnect.time(cluster, Collective.ALL_REDUCE,
          parallelism.tensorParallelMessageBytes(m, l, recipe), group).seconds();
    }

    double tLogits = layer.logitsSeconds();

    // The last pipeline rank also runs the logits and loss, and the multi-token prediction:
    // per module the 2h-to-h projection (three matmul passes), a block like an average layer and
    // its own pass through the output head (DeepSeek-V3 §2.2).
    double lastCompute = layer.lastRankCompute(tLogits);
    double lastRecompute = layer.lastRankRecompute();
    double lastTp = m.mtpLayers() > 0 ? m.mtpLayers() * tTp : 0.0;

    double mbP2p = 0.0;
    if (l.pp() > 1) {
      int stride = l.tp() * l.cp() * l.dp();
      boolean crossesNodes = stride >= cluster.devicesPerNode();
      CollectiveGroup pair = new CollectiveGroup(2, crossesNodes ? 1 : 2);
      double p2p = interconnect.time(cluster, Collective.POINT_TO_POINT,
          parallelism.pipelineMessageBytes(m, l, recipe), pair).seconds();
      mbP2p = 2.0 * l.virtualStages() * p2p;
    }
    double a2aPerLayer = expertExchangePerLayer(layer, m, cluster, l, microBatches);
    double cpPerLayer = l.cp() > 1 ? activations.contextParallelLayerSeconds(m, cluster, l,
        recipe, layer.sq, layer.attnForward, layer.attnBackward, kernel.overlapCost()) : 0.0;

    // The slowest pipeline rank sets the pace of every micro-batch (and of the bubble): the
    // first, a middle or the last, with its own layers (Layout#stageLayers; every rank at
    // ⌈layers / pp⌉ without an uneven split, so the last, with the logits, is the slowest).
    Stage slowest = Stage.slowest(l.stageLayers(m.layers()),
        layerTraining + kernel.layerOverheadSeconds(), recompute, tTp, a2aPerLayer, cpPerLayer,
        mbP2p, lastCompute, lastRecompute, lastTp);
    double bubble = (l.pp() - 1.0) / l.virtualStages() * slowest.total();

    // Data parallelism: gradient reduction (and ZeRO gathers), overlapped with backward where
    // the layout overlaps it (Layout#overlapGradReduce, by default the engine's own).
    double overhead = kernel.layerOverheadSeconds();
    double backwardWindow = l.overlapGradReduce()
        ? slowest.layers() * (layerTraining - forward) : 0.0;
    // The per-layer overhead splits like the compute: a third forward, two thirds backward.
    double dpExposed = dataParallel.exposedSeconds(cluster, l, states, w, kernel,
        slowest.layers(), forward + overhead / 3,
        layerTraining - forward + 2 * overhead / 3 + recompute,
        backwardWindow, microBatches, l.zeroStage() == 3 && l.engine().fetchesPerSubModule()
            ? SubModules.of(m, layer.tDense / forward) : null, recompute);
    double optimizer = DataParallelTime.optimizerSeconds(states, l, w,
        layer.bandwidth * kernel.optimizerBandwidthFraction());

    return new TimeBreakdown(microBatches * slowest.compute(),
        microBatches * slowest.recompute(), microBatches * slowest.tp(), microBatches * mbP2p,
        dpExposed, bubble, optimizer, microBatches * slowest.a2a(),
        microBatches * slowest.cp());
  }

  /**
   * A lower bound on the step time of {@code l} is {@code (m + (pp − 1) / v) · c}, {@code m} the
   * micro-batches a step, where {@code c} is this: the compute of one micro-batch on its slowest
   * pipeline rank, from compute alone. Every rank's micro-batch runs at least its layers'
   * forward, backward, per-layer overhead and recomputation (the last rank also its logits and
   * multi-token prediction), and the step runs the slowest rank's micro-batches and the bubble of
   * that rank's micro-batch ({@link #stepTime}); communication, the data-parallel time and the
   * optimizer only add to it ({@link TimeBreakdown#stepSeconds}). It depends on neither the
   * global batch, the data-parallel degree, the virtual stages nor the ZeRO stage. The planner
   * skips a layout whose bound already ranks it after every plan it keeps (rule 3 of
   * {@link Planner}); the jqwik law {@code StepLowerBoundProperties} checks bound ≤ step. 0 where
   * no step time is estimated.
   */
  double slowestRankComputeSeconds(TransformerSpec model, Cluster cluster, TrainingWorkload w,
      Layout l) {
    Accelerator acc = cluster.accelerator();
    PrecisionRecipe recipe = w.precision();
    double peak = acc.supports(recipe.compute()) ? precisionModel.peakFlopsPerSecond(acc, recipe)
        : 0.0;
    if (peak == 0.0) {
      return 0.0;
    }
    Prepared prepared = prepared(model, w);
    TransformerSpec m = prepared.rank(l);
    LayerTime layer = new LayerTime(memoryModel, precisionModel, m, prepared.rankBlocks(l), acc,
        w, l, peak);
    double perLayer = layer.layerTraining + layer.kernel.layerOverheadSeconds() + layer.recompute;
    double last = layer.lastRankCompute(layer.logitsSeconds()) + layer.lastRankRecompute();
    int[] stages = l.stageLayers(m.layers());
    double slowest = 0.0;
    for (int s = 0; s < stages.length; s++) {
      slowest = Math.max(slowest, stages[s] * perLayer + (s == stages.length - 1 ? last : 0.0));
    }
    return slowest;
  }

  /** {@link #slowestRankComputeSeconds} as a bound on the step time of {@code l}. */
  double stepSecondsLowerBound(TransformerSpec model, Cluster cluster, TrainingWorkload w,
      Layout l) {
    return lowerBoundMicroBatches(w, l) * slowestRankComputeSeconds(model, cluster, w, l);
  }

  /**
   * The slowest rank's micro-batches a step of the bound: the step's micro-batches and the
   * bubble's {@code (pp − 1) / v}.
   */
  static double lowerBoundMicroBatches(TrainingWorkload w, Layout l) {
    int microBatches = w.globalBatchSize() / (l.dp() * l.microBatch());
    return microBatches + (l.pp() - 1.0) / l.virtualStages();
  }

  /**
   * The expert-parallel exchange of one layer of a stage (it is linear in the stage's layers),
   * exposed as far as the layer's compute does not hide it.
   */
  private double expertExchangePerLayer(LayerTime layer, TransformerSpec m, Cluster cluster,
      Layout l, int microBatches) {
    if (!l.overlapMoeComm()) {
      return activations.allToAllSecondsPerLayer(m, cluster, l, layer.recipe, layer.tokens);
    }
    // The attention side of a layer: everything but its (average) MLP; the MoE MLP of a MoE
    // layer: router, routed and shared experts.
    double mlp = layer.tMlp;
    double attentionSide = layer.forward - mlp;
    double moeMlp = layer.moeMlpSeconds();
    return activations.overlappedAllToAllSecondsPerLayer(m, cluster, l, layer.recipe,
        layer.tokens, attentionSide, layer.layerTraining - 3 * mlp - attentionSide, moeMlp,
        layer.kernel.overlapCost(), microBatches);
  }

  /**
   * One pipeline rank's micro-batch: its layers and their compute, recomputation,
   * tensor-parallel, expert-parallel and context-parallel seconds, and their total with the
   * pipeline's point-to-point.
   */
  private record Stage(int layers, double compute, double recompute, double tp, double a2a,
      double cp, double total) {
    /**
     * The slowest rank of {@code stages} (Layout#stageLayers: first, middle, last layers), from
     * per-layer seconds; the last also runs the logits, loss and multi-token prediction.
     */
    static Stage slowest(int[] stages, double layerCompute, double recompute, double tTp,
        double a2aPerLayer, double cpPerLayer, double mbP2p, double lastCompute,
        double lastRecompute, double lastTp) {
      Stage out = new Stage(stages[2], 0.0, 0.0, 0.0, 0.0, 0.0, -1.0);
      for (int stage = 0; stage < stages.length; stage++) {
        int n = stages[stage];
        boolean last = stage == stages.length - 1;
        double sCompute = n * layerCompute + (last ? lastCompute : 0.0);
        double sRecompute = n * recompute + (last ? lastRecompute : 0.0);
        double sTp = n * tTp + (last ? lastTp : 0.0);
        double sA2a = n * a2aPerLayer;
        double sCp = n * cpPerLayer;
        double total = sCompute + sRecompute + sTp + mbP2p + sA2a + sCp;
        if (total > out.total()) {
          out = new Stage(n, sCompute, sRecompute, sTp, sA2a, sCp, total);
        }
      }
      return out;
    }
  }

  /**
   * Step time a collective of {@code comm} seconds adds when it overlaps a compute window of
   * {@code window} seconds, where the compute loses {@code kappa} of its throughput while the
   * collective runs beside it (the collective's kernels hold SMs and memory bandwidth;
   * {@link io.hyperframes.hardware.KernelEfficiency#overlapCost}). While both run the compute
   * advances at {@code 1 − kappa}: a collective that outlasts the slowed compute ends the window
   * ({@code comm − window} exposed, the slowdown hidden under it); a shorter one leaves
   * {@code window − comm·(1 − kappa)} of compute to run alone after it ({@code kappa·comm}
   * exposed). Hence {@code max(comm − window, kappa·comm)}; {@code kappa = 0} is perfect overlap.
   */
  static double exposed(double comm, double window, double kappa) {
    return Math.max(comm - window, kappa * comm);
  }
}
