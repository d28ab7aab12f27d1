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
          + moduleRecomputeFlopsPerToken(m, layout) * tokensPerStep;
      case NONE -> 0.0;
    };
    return new TrainingEstimate(reasons.isEmpty(), reasons, layout, prepared.parameters(),
        prepared.activeParameters(), memory, time,
        modelFlops, modelFlops + recomputeFlops, layout.devices(), Math.max(peak, 1.0),
        tokensPerStep, workload.trainingTokens(), acc.interval(StepInterval.regime(layout.tp(),
            layout.pp(), layout.zeroStage(), time.exposedCommShare())));
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
      double ewBandwidth = elementwiseBytesPerSecond(acc, recipe);
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
      double backwardWindow = l.engine().overlapsGradientReduction(1) ? backward : 0.0;
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
        w.trainingTokens(), acc.interval(StepInterval.regime(1, 1, l.zeroStage(),
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
    Accelerator acc = cluster.accelerator();
    PrecisionRecipe recipe = w.precision();
    double e = recipe.activationBytes();
    double tp = l.tp();
    double s = m.seqLen();
    // Context parallelism: the rank's queries are s/cp of each sequence (two chunks of 2·cp,
    // balanced for causal masking), attending to the keys of the whole sequence.
    double sq = s / l.cp();
    double b = l.microBatch();
    double h = m.hidden();
    double tokens = sq * b;
    double bandwidth = memoryModel.streamingBytesPerSecond(acc);

    double hd = m.headDim();
    double headsPerRank = m.heads() / tp;
    NumberFormat c = recipe.compute();
    KernelEfficiency kernel = acc.kernel(c);
    // FP8 recipes run FP8 in the linear layers only: Transformer Engine's DotProductAttention
    // computes in the activation format (BF16) unless FP8 attention is enabled explicitly.
    NumberFormat attnFormat = recipe.attentionFormat(acc::supports);
    double attnPeak = attnFormat == c ? peak
        : Math.min(peak, precisionModel.peakFlopsPerSecond(acc, attnFormat));
    boolean dropout = !m.gatedMlp();
    double sp = l.sequenceParallel() ? tp : 1.0;

    // One layer's forward, summed over the model's layer blocks (TransformerSpec#blocks), each
    // weighted by its share of the layers:
    // - matmuls (tDense): attention's QKV and output projection; a dense MLP's up (gate and up
    //   for a gated MLP) and down; an MoE layer's router, routed and shared experts (#withMlp);
    // - the attention products QKᵀ and A·V per head (tAttn; an unfused kernel computes every
    //   score, windowed or not) and, for a fused kernel, the share of query-key pairs the
    //   layers' windows keep;
    // - element-wise bytes read and written: each side's norm (2e·h) and residual add
    //   (3e·h, a dropout mask more GPT style), split by sequence parallelism; the MLP's
    //   activation over its inner columns (3e per column gated, 2e GeLU), split by tp; the
    //   attention core's passes over the scores (softmax, GPT style dropout and its mask).
    double tDense = 0.0;
    double tMlp = 0.0;
    double tAttn = 0.0;
    double pairShare = 0.0;
    double replicatedBytes = 0.0;
    double shardedBytes = 0.0;
    double core = 0.0;
    double layers = m.layers();
    double sideBytes = (2 * e + 3 * e + (dropout ? 1 : 0)) * tokens * h;
    double passes = m.gatedMlp() ? 3 : 2;
    // Every attention block has the model's shapes (only its window differs): its matmuls,
    // products and core bytes are computed once.
    double attentionMatmuls = memoryModel.matmulSeconds(acc, tokens, m.qkvWidth() / tp, h, 1, e,
        c, peak) + memoryModel.matmulSeconds(acc, tokens, h, m.valueDim() / tp, 1, e, c, peak);
    double attentionProducts = memoryModel.matmulSeconds(acc, sq, s, hd, b * headsPerRank, e,
        attnFormat, attnPeak) + memoryModel.matmulSeconds(acc, sq, hd, s, b * headsPerRank, e,
            attnFormat, attnPeak);
    double coreBytes = (dropout ? 4 * e + 1 : 2 * e) * m.heads() * sq * s * b / tp;
    for (Block block : blocks) {
      double share = block.count() / layers;
      if (block instanceof Block.Attention a) {
        tDense += share * attentionMatmuls;
        tAttn += share * attentionProducts;
        pairShare += share * a.pairShare();
        replicatedBytes += share * sideBytes;
        core += share * coreBytes;
      } else if (block instanceof Block.Mlp mlp) {
        double f = mlp.ffnHidden() / tp;
        double t = share * mlpMatmuls(m, acc, tokens, f, e, c, peak);
        tDense += t;
        tMlp += t;
        replicatedBytes += share * sideBytes;
        shardedBytes += share * passes * e * tokens * f;
      } else if (block instanceof Block.Moe moe) {
        // With expert parallelism this rank computes E / ep experts over the tokens the ep
        // ranks route to them (#moeExpertSeconds).
        double t = share * (moeRouterSeconds(m, acc, tokens, e, c, peak)
            + moeExpertSeconds(m, acc, tokens, tp, l.ep(), l.etp(), e, c, peak)
            + moeSharedSeconds(m, acc, tokens, tp, e, c, peak));
        tDense += t;
        tMlp += t;
        MoeSpec spec = moe.moe();
        double inner = spec.routedPerToken() * spec.expertFfnHidden()
            + spec.sharedExperts() * (double) spec.sharedExpertFfnHidden();
        replicatedBytes += share * sideBytes;
        shardedBytes += share * passes * e * tokens * inner / tp;
      }
    }
    // Element-wise kernels stream at their format's fitted fraction of the sustained bandwidth
    // (KernelEfficiency#elementwiseBandwidthFraction; docs/model-reference.md, "Element-wise
    // bandwidth"): the activation format's kernels, BF16 in an FP8 recipe. The optimizer step
    // has its own fraction.
    double norms = 2 * 2 * e * tokens * h;
    double ewBandwidth = elementwiseBytesPerSecond(acc, recipe);
    double tElementwise = (replicatedBytes / sp + shardedBytes) / ewBandwidth;
    if (w.kernels() == Kernels.EAGER) {
      tElementwise += eagerExtraBytes(m, l, e, tokens, dropout) / ewBandwidth;
    }
    double tCore = core / ewBandwidth;

    double forward = tDense + tAttn + tElementwise + tCore;
    // The attention a context-parallel exchange can hide behind: forward, and backward (the two
    // products' gradients, twice the forward).
    double attnForward = tAttn + tCore;
    double attnBackward = 2 * attnForward;
    // Selective recomputation reruns the forward of the modules it names (Megatron-Core
    // --recompute-modules; core_attn, its default, is the attention core).
    double modules = moduleRecomputeSeconds(m, acc, l, tokens, e, c, peak, ewBandwidth,
        norms / sp);
    double recompute = switch (l.recompute()) {
      case FULL -> forward;
      case SELECTIVE -> (l.recomputes(RecomputeModule.CORE_ATTN) ? tAttn + tCore : 0.0)
          + modules;
      case NONE -> 0.0;
    };
    // One layer's forward, backward (twice the forward) and recomputation.
    double layerTraining = 3 * forward;
    if (w.attentionOn(acc, l.engine()) == Attention.FLASH) {
      // FlashAttention-2 (Dao 2023, arXiv 2307.08691, §3): scores stay on chip (no element-wise
      // passes over them), causal tiles above the diagonal are skipped ((n+1)/2n of n×n tiles of
      // 128, Attention#causalTileShare), and the backward recomputes the scores: five matmuls
      // against the forward's two.
      // Sliding windows: a windowed layer's kernel computes only the band of tiles inside its
      // window (FlashAttention-2's window_size; TransformerSpec#attentionPairShare). An unfused
      // kernel computes every score and masks, so the eager path below is not reduced.
      double causal = Attention.causalTileShare(s) * pairShare;
      double fused = (attnFormat == c ? kernel : acc.kernel(attnFormat)).attention();
      // With a fitted fused-attention efficiency the kernel runs its executed FLOPs (the two
      // score and value products, 4·b·s²·h/t, causal tiles only) at that fraction of the peak.
      double tFlash = fused > 0
          ? 4.0 * b * sq * s * hd * headsPerRank * causal / (attnPeak * fused)
          : tAttn * causal;
      forward = tDense + tElementwise + tFlash;
      attnForward = tFlash;
      attnBackward = 2.5 * tFlash;
      layerTraining = 3 * (tDense + tElementwise) + 3.5 * tFlash;
      recompute = l.recompute() == Recompute.FULL ? forward : modules;
    }
    // MoE token permutation around the exchange (#moePermutationBytesPerToken): element-wise
    // traffic of the MoE layers, forward; its backward moves the same bytes the other way (the
    // gradient of a gather is a scatter), and it reruns with the layer under full or MoE-module
    // recomputation.
    if (m.isMoe() && m.moe().routed()) {
      double tPermute = moePermutationBytesPerToken(m, l, e) * tokens / ewBandwidth;
      forward += tPermute;
      layerTraining += 2 * tPermute;
      if (l.recompute() == Recompute.FULL || l.recomputes(RecomputeModule.MOE)) {
        recompute += tPermute;
      }
    }
    // FP8 linear layers: every input is cast to FP8 in the forward pass and every output
    // gradient in the backward, each read once in the activation format and written twice in
    // FP8 (row-wise and the transposed copy Hopper's TN-only FP8 GEMMs need for the other
    // product: Transformer Engine, "Performance considerations", handling transposes).
    if (c.isFp8()) {
      double[] cast = fp8CastBytesPerToken(m, l, e);
      double tCastForward = cast[0] * tokens / ewBandwidth;
      double tCastBackward = cast[1] * tokens / ewBandwidth;
      forward += tCastForward;
      layerTraining += tCastForward + tCastBackward;
      if (l.recompute() == Recompute.FULL) {
        recompute += tCastForward;
      }
    }

    // Tensor-parallel collectives, on the critical path.
    double tTp = 0.0;
    int tpCollectives = parallelism.tensorParallelCollectivesPerLayer(l);
    if (tpCollectives > 0) {
      CollectiveGroup group = new CollectiveGroup(l.tp(),
          Math.min(l.tp(), cluster.devicesPerNode()) == l.tp() ? l.tp() : cluster.devicesPerNode());
      tTp = tpCollectives * interconnect.time(cluster, Collective.ALL_REDUCE,
          parallelism.tensorParallelMessageBytes(m, l, recipe), group).seconds();
    }

    // Logits and loss on the last stage: three matmul passes plus the cross-entropy softmax.
    double logitBytes = tokens * m.vocab() / tp * (e + 16.0);
    double tLogits = 3 * memoryModel.matmulSeconds(acc, tokens, m.vocab() / tp, h, 1, e, c, peak)
        + logitBytes / ewBandwidth;

    // The last pipeline rank also runs the logits and loss, and the multi-token prediction:
    // per module the 2h-to-h projection (three matmul passes), a block like an average layer and
    // its own pass through the output head (DeepSeek-V3 §2.2).
    double lastCompute = tLogits;
    double lastRecompute = 0.0;
    double lastTp = 0.0;
    if (m.mtpLayers() > 0) {
      int mtp = m.mtpLayers();
      lastCompute += mtp * (layerTraining + kernel.layerOverheadSeconds() + tLogits
          + 3 * memoryModel.matmulSeconds(acc, tokens, h, 2 * h / tp, 1, e, c, peak));
      lastRecompute += mtp * recompute;
      lastTp += mtp * tTp;
    }

    double mbP2p = 0.0;
    if (l.pp() > 1) {
      int stride = l.tp() * l.cp() * l.dp();
      boolean crossesNodes = stride >= cluster.devicesPerNode();
      CollectiveGroup pair = new CollectiveGroup(2, crossesNodes ? 1 : 2);
      double p2p = interconnect.time(cluster, Collective.POINT_TO_POINT,
          parallelism.pipelineMessageBytes(m, l, recipe), pair).seconds();
      mbP2p = 2.0 * l.virtualStages() * p2p;
    }
    // The expert-parallel exchange of one layer of a stage (it is linear in the stage's layers).
    double a2aPerLayer;
    if (l.overlapMoeComm()) {
      // The attention side of a layer: everything but its (average) MLP; the MoE MLP of a MoE
      // layer: router, routed and shared experts.
      double mlp = tMlp;
      double attentionSide = forward - mlp;
      double moeMlp = moeRouterSeconds(m, acc, tokens, e, c, peak)
          + moeExpertSeconds(m, acc, tokens, tp, l.ep(), l.etp(), e, c, peak)
          + moeSharedSeconds(m, acc, tokens, tp, e, c, peak);
      a2aPerLayer = activations.overlappedAllToAllSecondsPerLayer(m, cluster, l, recipe, tokens,
          attentionSide, layerTraining - 3 * mlp - attentionSide, moeMlp, kernel.overlapCost(),
          microBatches);
    } else {
      a2aPerLayer = activations.allToAllSecondsPerLayer(m, cluster, l, recipe, tokens);
    }
    double cpPerLayer = l.cp() > 1 ? activations.contextParallelLayerSeconds(m, cluster, l,
        recipe, sq, attnForward, attnBackward, kernel.overlapCost()) : 0.0;

    // The slowest pipeline rank sets the pace of every micro-batch (and of the bubble): the
    // first, a middle or the last, with its own layers (Layout#stageLayers; every rank at
    // ⌈layers / pp⌉ without an uneven split, so the last, with the logits, is the slowest).
    int[] stages = l.stageLayers(m.layers());
    int layersPerStage = stages[2];
    double mbCompute = 0.0;
    double mbRecompute = 0.0;
    double mbTp = 0.0;
    double mbA2a = 0.0;
    double mbCp = 0.0;
    double mb = -1.0;
    for (int stage = 0; stage < stages.length; stage++) {
      int n = stages[stage];
      boolean last = stage == stages.length - 1;
      double sCompute = n * (layerTraining + kernel.layerOverheadSeconds())
          + (last ? lastCompute : 0.0);
      double sRecompute = n * recompute + (last ? lastRecompute : 0.0);
      double sTp = n * tTp + (last ? lastTp : 0.0);
      double sA2a = n * a2aPerLayer;
      double sCp = n * cpPerLayer;
      double total = sCompute + sRecompute + sTp + mbP2p + sA2a + sCp;
      if (total > mb) {
        mb = total;
        layersPerStage = n;
        mbCompute = sCompute;
        mbRecompute = sRecompute;
        mbTp = sTp;
        mbA2a = sA2a;
        mbCp = sCp;
      }
    }
    double bubble = (l.pp() - 1.0) / l.virtualStages() * mb;

    // Data parallelism: gradient reduction (and ZeRO gathers), overlapped with backward where
    // the engine overlaps it (Engine#overlapsGradientReduction).
    double overhead = kernel.layerOverheadSeconds();
    double backwardWindow = l.engine().overlapsGradientReduction(l.pp())
        ? layersPerStage * (layerTraining - forward) : 0.0;
    // The per-layer overhead splits like the compute: a third forward, two thirds backward.
    double dpExposed = dataParallel.exposedSeconds(cluster, l, states, w, kernel, layersPerStage,
        forward + overhead / 3, layerTraining - forward + 2 * overhead / 3 + recompute,
        backwardWindow, microBatches, l.zeroStage() == 3 && l.engine().fetchesPerSubModule()
            ? SubModules.of(m, tDense / forward) : null, recompute);
    double optimizer = DataParallelTime.optimizerSeconds(states, l, w,
        bandwidth * kernel.optimizerBandwidthFraction());

    return new TimeBreakdown(microBatches * mbCompute, microBatches * mbRecompute,
        microBatches * mbTp, microBatches * mbP2p, dpExposed, bubble, optimizer,
        microBatches * mbA2a, microBatches * mbCp);
  }




  /** The router's matmul of one MoE layer, forward (tokens × E × h, replicated over tp). */
  private double moeRouterSeconds(TransformerSpec m, Accelerator acc, double tokens, double e,
      NumberFormat c, double peak) {
    return m.moe().routed() ? memoryModel.matmulSeconds(acc, tokens, m.moe().experts(),
        m.hidden(), 1, e, c, peak) : 0.0;
  }

  /**
   * The routed experts' matmuls of one MoE layer on one rank, forward. With expert parallelism
   * this rank computes E / ep experts over the tokens the ep ranks route to them: the same
   * routed rows in all, tokens·k·ep/E per expert. The expert tensor-parallel group gathers the
   * tokens its etp ranks hold (etp/tp of the tensor-parallel group's, which sequence
   * parallelism splits over tp) and splits each expert's columns etp ways: FLOPs as with
   * etp = tp, wider and shorter matmuls with etp < tp.
   */
  private double moeExpertSeconds(TransformerSpec m, Accelerator acc, double tokens, double tp,
      int ep, int etp, double e, NumberFormat c, double peak) {
    MoeSpec moe = m.moe();
    double routed = tokens * (etp / tp) * moe.routedPerToken();
    double local = (double) moe.experts() / ep;
    return local * mlpMatmuls(m, acc, routed / local, moe.expertFfnHidden() / (double) etp, e,
        c, peak);
  }

  /** The shared experts' matmuls of one MoE layer on one rank, forward (0 without them). */
  private double moeSharedSeconds(TransformerSpec m, Accelerator acc, double tokens, double tp,
      double e, NumberFormat c, double peak) {
    MoeSpec moe = m.moe();
    return moe.sharedExperts() > 0 ? mlpMatmuls(m, acc, tokens,
        moe.sharedExperts() * (double) moe.sharedExpertFfnHidden() / tp, e, c, peak) : 0.0;
  }

  /**
   * Forward FLOPs per token of the modules {@link #moduleRecomputeSeconds} reruns, over all
   * layers: 2 per weight of the matmuls they run (the normalisations and activations none).
   */
  private static double moduleRecomputeFlopsPerToken(TransformerSpec m, Layout l) {
    double flops = 0.0;
    if (l.recomputes(RecomputeModule.MLP)) {
      flops += 2 * m.denseLayers() * m.mlpParameters(m.ffnHidden());
    }
    if (m.isMoe()) {
      MoeSpec moe = m.moe();
      double shared = moe.sharedExperts() * m.mlpParameters(moe.sharedExpertFfnHidden());
      if (l.recomputes(RecomputeModule.MOE)) {
        flops += 2 * m.moeLayers() * (moe.routedPerToken() * m.mlpParameters(
            moe.expertFfnHidden()) + shared + (moe.routed() ? moe.experts() * m.hidden() : 0.0));
      } else if (l.recomputes(RecomputeModule.SHARED_EXPERTS)) {
        flops += 2 * m.moeLayers() * shared;
      }
    }
    if (l.recomputes(RecomputeModule.MLA_UP_PROJ) && m.mla() != null) {
      io.hyperframes.model.MlaSpec mla = m.mla();
      flops += 2 * m.layers() * m.heads() * ((double) mla.qLoraRank() * mla.qkHeadDim()
          + (double) mla.kvLoraRank() * (mla.qkNopeHeadDim() + mla.vHeadDim()));
    }
    return flops;
  }

  /**
   * Forward seconds, per layer averaged over the layers, of the modules selective recomputation
   * reruns beyond the attention core ({@link RecomputeModule}; Megatron-Core
   * {@code --recompute-modules}): the two normalisations (their element-wise passes,
   * {@code normSeconds·bandwidth} bytes), a dense layer's MLP (matmuls and activation), the whole
   * MoE layer (router, experts, shared experts and their activations; its all-to-all is counted in
   * {@link #allToAllSecondsPerLayer}), the experts' activation alone, the shared experts, or latent
   * attention's two up-projections. 0 for none of them.
   */
  private double moduleRecomputeSeconds(TransformerSpec m, Accelerator acc, Layout l,
      double tokens, double e, NumberFormat c, double peak, double bandwidth,
      double normBytes) {
    if (l.recomputeModules().isEmpty()
        || l.recomputeModules().equals(RecomputeModule.DEFAULT)) {
      return 0.0;
    }
    double tp = l.tp();
    double layers = m.layers();
    double gatedPasses = m.gatedMlp() ? 3 : 2;
    double seconds = 0.0;
    if (l.recomputes(RecomputeModule.LAYERNORM)) {
      seconds += normBytes / bandwidth;
    }
    if (l.recomputes(RecomputeModule.MLP) && m.denseLayers() > 0) {
      double f = m.ffnHidden() / tp;
      seconds += m.denseLayers() / layers * (mlpMatmuls(m, acc, tokens, f, e, c, peak)
          + gatedPasses * e * tokens * f / bandwidth);
    }
    if (m.isMoe()) {
      MoeSpec moe = m.moe();
      double share = m.moeLayers() / layers;
      double routedF = tokens * moe.routedPerToken() * moe.expertFfnHidden() / tp;
      double sharedF = tokens * moe.sharedExperts() * (double) moe.sharedExpertFfnHidden() / tp;
      if (l.recomputes(RecomputeModule.MOE)) {
        seconds += share * (moeRouterSeconds(m, acc, tokens, e, c, peak)
            + moeExpertSeconds(m, acc, tokens, tp, l.ep(), l.etp(), e, c, peak)
            + moeSharedSeconds(m, acc, tokens, tp, e, c, peak)
            + gatedPasses * e * (routedF + sharedF) / bandwidth);
      } else {
        if (l.recomputes(RecomputeModule.MOE_ACT)) {
          seconds += share * gatedPasses * e * routedF / bandwidth;
        }
        if (l.recomputes(RecomputeModule.SHARED_EXPERTS)) {
          seconds += share * (moeSharedSeconds(m, acc, tokens, tp, e, c, peak)
              + gatedPasses * e * sharedF / bandwidth);
        }
      }
    }
    if (l.recomputes(RecomputeModule.MLA_UP_PROJ) && m.mla() != null) {
      io.hyperframes.model.MlaSpec mla = m.mla();
      // Without query compression (qLoraRank 0) the query projection is no up-projection.
      seconds += (mla.qLoraRank() > 0 ? memoryModel.matmulSeconds(acc, tokens,
          m.heads() * (double) mla.qkHeadDim() / tp, mla.qLoraRank(), 1, e, c, peak) : 0.0)
          + memoryModel.matmulSeconds(acc, tokens,
              m.heads() * (double) (mla.qkNopeHeadDim() + mla.vHeadDim()) / tp,
              mla.kvLoraRank(), 1, e, c, peak);
    }
    return seconds;
  }

  /** Up (or gate and up) and down matmuls of an MLP of {@code f} inner columns per rank. */
  private double mlpMatmuls(TransformerSpec m, Accelerator acc, double rows, double f, double e,
      NumberFormat c, double peak) {
    double h = m.hidden();
    return memoryModel.matmulSeconds(acc, rows, (m.gatedMlp() ? 2 : 1) * f, h, 1, e, c, peak)
        + memoryModel.matmulSeconds(acc, rows, h, f, 1, e, c, peak);
  }

  /**
   * The bandwidth a training layer's element-wise kernels stream at: the sustained bandwidth
   * times the fitted fraction of the format they run in (PrecisionRecipe#elementwiseFormat: the
   * activation format, BF16 in an FP8 recipe).
   */
  private double elementwiseBytesPerSecond(Accelerator acc, PrecisionRecipe recipe) {
    return memoryModel.streamingBytesPerSecond(acc)
        * acc.kernel(recipe.elementwiseFormat(acc::supports)).elementwiseBandwidthFraction();
  }

  /**
   * Bytes per token of this rank, averaged over the layers, that a routed MoE layer's token
   * permutation moves in its forward pass: the copies of each token sorted by expert before the
   * experts and summed back after them. Counted kernel by kernel from Megatron-Core's dispatchers
   * ({@code megatron/core/transformer/moe/token_dispatcher.py} and {@code moe_utils.py}
   * {@code permute}, {@code unpermute}, {@code sort_chunks_by_idxs} at d98e8a64; Transformer
   * Engine's fused permute reads a token once and writes its copies, its unpermute reads the
   * copies and writes the sum), each kernel reading and writing its rows once at {@code e} bytes
   * per element of the hidden width {@code h}. With {@code T} the tokens a rank holds before the
   * exchange (divided by sequence parallelism), {@code k} the routed copies per token (times a
   * capacity factor, whose padding is moved too) and {@code R = T·k·etp/tp} the rows this rank's
   * experts receive:
   * <ul>
   *   <li>all-to-all: permute before the exchange {@code (1 + k)·T·h}, unpermute after the
   *       combine {@code (k + 1)·T·h}, and with more than one local expert the sort of the
   *       received rows by expert and its inverse ({@code 2·R·h} each);
   *   <li>DeepEP: the dispatch kernel delivers one row per token and destination rank
   *       ({@code ρ/k} of R, ρ the ranks a token reaches, {@link ExpertExchange#ranksPerToken}),
   *       permuted into the experts' R rows and summed back before the combine:
   *       {@code 2·(R·ρ/k + R)·h}.
   * </ul>
   * The router's scores and indices (E or k numbers per token) are not counted. 0 for a model
   * without routing.
   */
  static double moePermutationBytesPerToken(TransformerSpec m, Layout l, double e) {
    if (!m.isMoe() || !m.moe().routed()) {
      return 0.0;
    }
    MoeSpec moe = m.moe();
    double tp = l.tp();
    double sp = l.sequenceParallel() ? tp : 1.0;
    double k = moe.routedPerToken();
    double source = 1.0 / sp;
    double received = k * l.etp() / tp;
    double rows;
    if (l.moeDispatcher() == MoeDispatcher.DEEPEP) {
      // The ranks a token reaches depend on the group's size, not on its nodes.
      ExpertExchange exchange = new ExpertExchange(1.0, 1.0, moe.experts(), moe.topK(),
          new CollectiveGroup(l.ep(), l.ep()), moe.groups(), moe.groupTopK());
      rows = 2 * (received * exchange.ranksPerToken() / moe.topK() + received);
    } else {
      // More than one local expert: the received rows are sorted by expert and back.
      rows = 2 * (1 + k) * source + (moe.experts() > l.ep() ? 4 * received : 0.0);
    }
    return m.moeLayerShare() * rows * m.hidden() * e;
  }

  /**
   * Bytes per token of one layer's FP8 casts on this rank, forward and backward: each linear
   * layer's input (forward) and output gradient (backward) read once at {@code e} bytes and
   * written twice at 1 byte (the FP8 tensor and its transpose; Transformer Engine,
   * "Performance considerations", handling transposes, and {@code CanonicalizeGemmInput} in
   * {@code transformer_engine/common/gemm/cublaslt_gemm.cu}: Hopper runs only TN FP8 GEMMs).
   * The linear layers: QKV and the MLP's up projections take the hidden state, the output
   * projection the attention values and the MLP's down projections the inner activation; a
   * token runs through {@code u} MLPs per layer (1 in a dense layer, its routed copies and the
   * shared experts in an MoE layer, averaged over the layers). Widths a tensor-parallel rank
   * holds whole without sequence parallelism (the hidden-wide ones) are divided by the
   * sequence-parallel degree, the sharded ones by tp. The weights' casts (once per step) are
   * not counted.
   *
   * @return {forward bytes, backward bytes} per token
   */
  static double[] fp8CastBytesPerToken(TransformerSpec m, Layout l, double e) {
    double tp = l.tp();
    double sp = l.sequenceParallel() ? tp : 1.0;
    double h = m.hidden();
    MoeSpec moe = m.moe();
    double u = moe == null ? 1.0
        : (m.denseLayers() + m.moeLayers() * (moe.routedPerToken() + moe.sharedExperts()))
            / m.layers();
    double inner = m.activeFfnHidden();
    double perElement = e + 2.0;
    double forward = (h * (1 + u) / sp + (m.valueDim() + inner) / tp) * perElement;
    double backward = ((h * (1 + u)) / sp
        + (m.qkvWidth() + (m.gatedMlp() ? 2 : 1) * inner) / tp) * perElement;
    return new double[] {forward, backward};
  }

  /**
   * Bytes one layer's forward moves beyond the fused count when every operator is its own kernel
   * ({@link Kernels#EAGER}), per micro-batch of {@code tokens} tokens, on one tensor-parallel
   * rank. Counted operator by operator from PyTorch eager LLaMA and GPT blocks (torchtitan
   * {@code torchtitan/models/norms.py} and {@code models/llama/model.py} at 6a6f755; PyTorch
   * {@code nn.LayerNorm}, {@code nn.Linear} with bias as one {@code addmm}): each kernel reads its
   * inputs and writes its output once, e bytes per activation element, 4 per FP32 element.
   * The attention output's {@code transpose(1, 2).contiguous()} costs nothing: the fused
   * attention kernel already writes it token-major. Other eager implementations differ in
   * detail (foundation-model-stack's rotary embedding, a broadcast product and a sum in FP32,
   * moves about 36 bytes per q and k element against torchtitan's 20).
   *
   * <ul>
   *   <li>RMSNorm (gated-MLP blocks), twice: {@code x.float()} (e + 4), {@code pow} (4 + 4),
   *       {@code mean} (4), {@code x * rsqrt} (4 + 4), {@code type_as} (4 + e),
   *       {@code * weight} (e + e): 28 + 4e per element against the fused 2e. A GPT block's
   *       {@code nn.LayerNorm} is one kernel, as fused.
   *   <li>Rotary embedding of q and k (gated-MLP blocks): {@code float()} (e + 4), the complex
   *       product (4 + 4), {@code type_as} (4 + e): 16 + 2e per element of (h + kv)/t; the fused
   *       count has none.
   *   <li>SwiGLU as {@code silu} (2e) then the gate product (3e) against the fused 3e.
   *   <li>Grouped-query attention: {@code repeat_kv} copies k and v from kv to h columns before
   *       {@code scaled_dot_product_attention} (e·(kv + h) each).
   *   <li>Dropout before a residual add (GPT blocks) as its own kernel: 2e more per element.
   * </ul>
   */
  static double eagerExtraBytes(TransformerSpec m, Layout l, double e, double tokens,
      boolean dropout) {
    double tp = l.tp();
    double sp = l.sequenceParallel() ? tp : 1.0;
    double h = m.hidden();
    double q = m.qDim();
    double kv = m.kvDim();
    double perToken = 0.0;
    if (m.gatedMlp()) {
      perToken += 2 * (28 + 4 * e - 2 * e) * h / sp
          + (16 + 2 * e) * (q + kv) / tp
          + 2 * e * m.activeFfnHidden() / tp;
      if (m.kvHeads() < m.heads()) {
        perToken += 2 * e * (kv + q) / tp;
      }
    }
    if (dropout) {
      perToken += 2 * 2 * e * h / sp;
    }
    return perToken * tokens;
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
