package io.hyperframes.inference;

import static com.google.common.base.Preconditions.checkArgument;

import io.hyperframes.hardware.Accelerator;
import io.hyperframes.hardware.KernelEfficiency;
import io.hyperframes.hardware.Cluster;
import io.hyperframes.interconnect.Collective;
import io.hyperframes.interconnect.CollectiveGroup;
import io.hyperframes.interconnect.ExpertExchange;
import io.hyperframes.interconnect.InterconnectModel;
import io.hyperframes.memory.MemoryHierarchyModel;
import io.hyperframes.precision.model.PrecisionModel;
import io.hyperframes.model.Block;
import io.hyperframes.model.TransformerSpec;
import io.hyperframes.precision.NumberFormat;
import io.hyperframes.workload.Attention;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Serving estimate: memory (weights, paged KV cache, prefill working set), prefill and decode
 * step times, and the largest batch that fits.
 *
 * <p>Model (docs/inference.md): prefill runs the layer matmuls on batch × prompt tokens through
 * the same size-dependent matmul roofline as training (compute-bound), plus the attention softmax
 * traffic of an unfused context kernel and the element-wise work; decode runs them with one token
 * per sequence, where the roofline's memory side dominates (every weight and the whole KV cache
 * read once per step). Tensor parallelism adds two all-reduces per layer (latency-bound at decode
 * sizes). KV cache per token: 2·layers·kvHeads·headDim·bytes (Pope et al. 2022, "Efficiently
 * Scaling Transformer Inference", §2.1; Kwon et al. 2023, vLLM §3); with tp > kvHeads each device
 * keeps one replicated KV head. Paged allocation rounds each sequence up to whole blocks (vLLM §4).
 */
public final class InferenceEstimator {

  /** Runtime reserve per device: CUDA context, library workspaces, allocator slack. */
  static final double RUNTIME_RESERVE_BYTES = 1.5 * (1L << 30);

  private final PrecisionModel precision;
  private final MemoryHierarchyModel memory;
  private final InterconnectModel interconnect;

  private InferenceEstimator(PrecisionModel precision, MemoryHierarchyModel memory,
      InterconnectModel interconnect) {
    this.precision = precision;
    this.memory = memory;
    this.interconnect = interconnect;
  }

  /** An estimator over the given precision, memory-hierarchy and interconnect models. */
  public static InferenceEstimator of(PrecisionModel precision, MemoryHierarchyModel memory,
      InterconnectModel interconnect) {
    checkArgument(precision != null, "precisionModel: must be given");
    checkArgument(memory != null, "memoryModel: must be given");
    checkArgument(interconnect != null, "interconnectModel: must be given");
    return new InferenceEstimator(precision, memory, interconnect);
  }

  /** The interconnect model this estimator times collectives with. */
  InterconnectModel interconnect() {
    return interconnect;
  }

  /** The estimator over the analytical models. */
  public static InferenceEstimator analytical() {
    return new InferenceEstimator(PrecisionModel.analytical(), MemoryHierarchyModel.analytical(),
        InterconnectModel.alphaBeta());
  }

  /**
   * Estimates serving {@code w} with {@code tp × pp} devices per replica and {@code replicas}
   * replicas.
   *
   * @throws IllegalArgumentException when the layout does not fit the model or the cluster
   */
  public InferenceEstimate estimate(TransformerSpec m, Cluster cluster, InferenceWorkload w,
      int tp, int pp, int replicas) {
    return estimate(m, cluster, w, tp, 1, pp, replicas);
  }

  /**
   * Estimates serving {@code w} with {@code tp × pp} devices per replica, the routed experts of
   * each MoE layer split over {@code ep} of a stage's {@code tp} ranks (each expert
   * tensor-parallel over the other {@code tp/ep}: TensorRT-LLM's
   * {@code moe_expert_parallel_size × moe_tensor_parallel_size = tp}; vLLM's
   * {@code --enable-expert-parallel} is {@code ep = tp}), and {@code replicas} replicas.
   *
   * <p>Weights per device are the same for every {@code ep} (E/ep whole experts or E slices of
   * 1/tp), and the collectives too: with the hidden states replicated over the tensor-parallel
   * group, each rank runs its experts on the tokens routed to them and the layer ends in the
   * tensor-parallel all-reduce, with no all-to-all (vLLM
   * {@code FusedMoEParallelConfig.make}: ep_size = tp_size, and {@code use_all2all_kernels}
   * only with data or context parallel attention;
   * vllm/model_executor/layers/fused_moe/config.py @ 002d6073). What changes is who waits: the
   * busiest rank ({@link ExpertBalance}) sets the MoE time, each of its experts at full
   * width {@code expertFfnHidden/(tp/ep)}.
   *
   * @throws IllegalArgumentException when the layout does not fit the model or the cluster
   */
  public InferenceEstimate estimate(TransformerSpec m, Cluster cluster, InferenceWorkload w,
      int tp, int ep, int pp, int replicas) {
    return estimate(m, cluster, w, tp, ep, pp, replicas, false);
  }

  /**
   * {@link #estimate(TransformerSpec, Cluster, InferenceWorkload, int, int, int, int)}, with
   * {@code twoBatchOverlap}: where the experts span replicas (ep &gt; tp), each step runs its batch
   * as two halves, the expert exchange of one behind the computation of the other (SGLang's
   * two-batch overlap, DeepSeek's dual micro-batch overlap: DeepSeek-V3 §3.4.1 for prefill,
   * "Day 6" inference overview for both phases). A layer then takes twice the longer of a half's
   * exchange and its computation slowed by the exchange's SMs ({@link #EXCHANGE_OVERLAP_COST}),
   * and each half reads the weights again. Without an exchange (ep ≤ tp) the flag changes
   * nothing.
   */
  public InferenceEstimate estimate(TransformerSpec m, Cluster cluster, InferenceWorkload w,
      int tp, int ep, int pp, int replicas, boolean twoBatchOverlap) {
    long devices = checkedDevices(m, cluster, w, tp, ep, pp, replicas);
    Accelerator acc = cluster.accelerator();
    NumberFormat compute = w.compute();
    checkArgument(acc.supports(compute), "workload.precision: %s has no %s throughput", acc.id(),
        compute.id());
    double peak = precision.peakFlopsPerSecond(acc, compute);
    double wb = w.weights().bytes();
    double kb = w.kvCache().bytes();
    double e = compute.bytes();
    // FP8 serving engines quantise the operands of each matmul but keep activations between
    // kernels, the tensor-parallel all-reduce and the KV-free traffic in 16 bits (TensorRT-LLM,
    // vLLM FP8 W8A8: FP8 GEMM inputs, FP16/BF16 outputs).
    double act = Math.max(2, e);
    List<String> reasons = new ArrayList<>();

    int layersPerStage = (m.layers() + pp - 1) / pp;
    Speculative spec = w.speculative();
    if (spec != null) {
      SpeculativeDraft.checkSpeculative(m, spec, tp, ep, pp);
    }
    double weights = weightsPerDevice(m, w, tp, ep, pp, layersPerStage);
    double kvPerTokenDevice = (layersPerStage * m.kvCacheElementsPerTokenPerLayer(tp)
        + (spec == null ? 0.0 : SpeculativeDraft.draftKvElementsPerToken(m, spec, tp))) * kb;
    double kvPerToken = m.layers() * m.kvCacheElementsPerTokenPerLayer(1) * kb;
    long tokens = (long) w.promptTokens() + w.outputTokens();
    long paged = (tokens + w.blockTokens() - 1) / w.blockTokens() * w.blockTokens();
    // Windowed layers keep the blocks their last W tokens can span (ceil(W/block) + 1).
    double keptPerSequence = keptTokens(m, paged, w.blockTokens());
    double kvPerSequenceDevice = kvPerTokenDevice * keptPerSequence;
    double kv = kvPerSequenceDevice * w.batchSize();
    // Prefix caching: prefill computes only the prompt tokens the cache does not hold
    // (InferenceWorkload#cachedPromptTokens); they attend to the cached ones.
    int fresh = w.promptTokens() - w.cachedPromptTokens();
    double prefillTokens = (double) w.batchSize() * fresh;
    double activations = prefillActivationBytes(m, w, tp, prefillTokens);
    double other = RUNTIME_RESERVE_BYTES + 4.0 * w.batchSize() * m.vocab() / tp;
    double capacity = acc.memoryBytes();
    double free = capacity - weights - activations - other;
    long maxBatch = free > 0 ? (long) Math.floor(free / kvPerSequenceDevice) : 0;
    double total = weights + kv + activations + other;
    if (total > capacity) {
      reasons.add(String.format(Locale.ROOT, "memory: %.1f GiB per device exceeds the %.1f GiB"
          + " of %s (weights %.1f GiB, KV cache %.1f GiB for %d sequences of %d tokens)",
          total / (1L << 30), capacity / (1L << 30), acc.id(), weights / (1L << 30),
          kv / (1L << 30), w.batchSize(), tokens));
    }

    List<Block> blocks = ExpertBalance.rankBlocks(m, w, ep);
    boolean overlap = twoBatchOverlap && ep > tp;
    double prefillLayer = overlap
        ? overlappedLayer(m, blocks, cluster, tp, ep, w.batchSize(), fresh, w.promptTokens(), e,
            wb, kb, compute, peak, true, w.decodeAttention(), w.attention())
        : layer(m, blocks, cluster, tp, ep, w.batchSize(), fresh,
            w.promptTokens(), e, wb, kb, compute, peak, true, w.decodeAttention(), w.attention(),
            true);
    double prefillLogits = logits(m, acc, tp, w.batchSize(), e, wb, compute, peak);
    double prefill = layersPerStage * pp * prefillLayer + prefillLogits
        + (pp - 1) * pipeline(cluster, tp, replicas, prefillTokens * m.hidden() * act / tp);
    double context = w.promptTokens() + w.outputTokens() / 2.0;
    double decodeLayer = overlap
        ? overlappedLayer(m, blocks, cluster, tp, ep, w.batchSize(), 1, context, e, wb, kb,
            compute, peak, false, w.decodeAttention(), w.attention())
        : layer(m, blocks, cluster, tp, ep, w.batchSize(), 1, context, e, wb, kb,
            compute, peak, false, w.decodeAttention(), w.attention(), true);
    double decodeLogits = logits(m, acc, tp, w.batchSize(), e, wb, compute, peak);
    double decode = layersPerStage * pp * decodeLayer + decodeLogits
        + (pp - 1) * pipeline(cluster, tp, replicas,
            (double) w.batchSize() * m.hidden() * act / tp);
    if (spec != null) {
      // Each step: the draft proposes γ tokens one after another, then the model verifies γ + 1
      // positions per sequence in one pass (a decode step of γ + 1 new tokens over the same KV
      // cache), yielding (1 − α^(γ+1)) / (1 − α) tokens on average (Speculative).
      int gamma = spec.tokens();
      double verify = layersPerStage * pp * layer(m, blocks, cluster, tp, ep, w.batchSize(),
          gamma + 1, context, e, wb, kb, compute, peak, false, w.decodeAttention(),
          w.attention(), true)
          + logits(m, acc, tp, w.batchSize() * (gamma + 1), e, wb, compute, peak);
      double draft = gamma * draftStep(m, cluster, spec, tp, decodeLayer + decodeLogits,
          w.batchSize(), 1, context, e, wb, kb, compute, peak, false, w);
      decode = (draft + verify) / spec.expectedTokensPerStep();
      // The draft reads the prompt too: its own prefill (one layer for MTP and EAGLE).
      prefill += draftStep(m, cluster, spec, tp, prefillLayer + prefillLogits, w.batchSize(),
          fresh, w.promptTokens(), e, wb, kb, compute, peak, true, w);
    }
    return new InferenceEstimate(reasons.isEmpty(), reasons, tp, ep, pp, replicas,
        m.parameters(),
        weights, kv, activations, other, prefill, decode,
        acc.kernel(compute).servingRequestSeconds()
            + m.layers() * acc.kernel(compute).servingFirstTokenLayerSeconds(),
        kvPerToken, kvPerToken * keptPerSequence,
        maxBatch, (int) devices, w.outputTokens(), w.batchSize(),
        // A speculative step's verification routes γ + 1 tokens per sequence.
        ExpertWeights.expertBytesPerDecodeStep(m, layersPerStage, tp, ep,
            w.batchSize() * (spec == null ? 1 : spec.tokens() + 1), wb), spec, overlap);
  }

  /**
   * Weight bytes on a device: its stage's layers over tp (whole routed experts over ep where
   * ep > tp), the embedding and output matrices over tp on the first and last stage, and a
   * speculative draft's weights.
   */
  private static double weightsPerDevice(TransformerSpec m, InferenceWorkload w, int tp, int ep,
      int pp, int layersPerStage) {
    double wb = w.weights().bytes();
    double weights = (layersPerStage * m.parametersPerLayer() / tp
        + (double) m.vocab() * m.hidden() / tp * (m.tiedEmbeddings() ? 1 : 2) / Math.min(pp, 2))
        * wb;
    if (ep > tp) {
      // Whole experts over the ep ranks of ep/tp replicas: a device keeps E/ep of them, not E/tp.
      weights -= layersPerStage * ExpertWeights.routedParametersPerLayer(m)
          * (1.0 / tp - 1.0 / ep) * wb;
    }
    if (w.speculative() != null) {
      // The draft's weights and its KV cache sit beside the model's on every device.
      weights += SpeculativeDraft.draftParameters(m, w.speculative()) / tp * wb;
    }
    return weights;
  }

  /**
   * The devices of a replica layout, once it is checked against the model and the cluster: tp
   * divides the heads, ep fits the experts and tp, pp the layers, and tp·pp·dp the devices.
   */
  private static long checkedDevices(TransformerSpec m, Cluster cluster, InferenceWorkload w,
      int tp, int ep, int pp, int replicas) {
    checkArgument(m != null && cluster != null && w != null, "request: model, cluster and"
        + " workload must be given");
    checkArgument(tp > 0 && pp > 0 && replicas > 0, "layout: tp, pp and dp must be > 0, got"
        + " %s, %s, %s", tp, pp, replicas);
    checkArgument(m.heads() % tp == 0, "layout.tp: %s does not divide model.heads %s", tp,
        m.heads());
    checkArgument(ep > 0, "layout.ep: must be > 0, got %s", ep);
    if (ep > 1) {
      checkArgument(m.isMoe() && m.moe().routed(), "layout.ep: %s needs a mixture-of-experts"
          + " model with routed experts (model.moe)", ep);
      checkArgument(tp % ep == 0 || ep % tp == 0, "layout.ep: %s does not divide layout.tp %s,"
          + " nor is it a multiple of it (ep ≤ tp: a replica's experts are split over its"
          + " tensor-parallel ranks, ep·etp = tp; ep > tp: whole experts over ep/tp replicas"
          + " that run attention data-parallel)", ep, tp);
      checkArgument(m.moe().experts() % ep == 0, "layout.ep: %s does not divide"
          + " model.moe.experts %s", ep, m.moe().experts());
      if (ep > tp) {
        checkArgument(pp == 1, "layout.ep: %s is larger than layout.tp %s (experts over several"
            + " replicas), which is modelled without pipeline parallelism, got layout.pp %s", ep,
            tp, pp);
        checkArgument(replicas % (ep / tp) == 0, "layout.ep: %s spans ep/tp = %s replicas"
            + " (attention data-parallel), which does not divide the %s replicas (layout.dp)",
            ep, ep / tp, replicas);
      }
    }
    checkArgument(pp <= m.layers(), "layout.pp: %s is larger than model.layers %s", pp,
        m.layers());
    long devices = (long) tp * pp * replicas;
    checkArgument(devices == cluster.devices(), "layout: tp·pp·dp = %s·%s·%s = %s does not equal"
        + " cluster.devices %s", tp, pp, replicas, devices, cluster.devices());
    return devices;
  }

  /**
   * KV-cache positions a sequence of {@code paged} tokens (whole blocks) keeps per layer on
   * average: all of them in full-attention layers; in windowed layers the blocks its last W
   * tokens can span (ceil(W/block) + 1).
   */
  static double keptTokens(TransformerSpec m, double paged, int blockTokens) {
    if (m.slidingWindow() == null) {
      return paged;
    }
    double windowed = m.windowedLayerShare();
    long windowBlocks = ((long) m.slidingWindow().tokens() + blockTokens - 1) / blockTokens + 1;
    return (1 - windowed) * paged + windowed * Math.min(paged, windowBlocks * blockTokens);
  }

  /**
   * KV-cache bytes one token keeps on a device of a replica with {@code tp} ranks and one
   * pipeline stage, in every layer ({@link #keptTokens} scales it for windowed layers).
   */
  static double kvBytesPerTokenPerDevice(TransformerSpec m, InferenceWorkload w, int tp) {
    return m.layers() * m.kvCacheElementsPerTokenPerLayer(tp) * w.kvCache().bytes();
  }

  /**
   * Activation bytes per device of an iteration that prefills {@code tokens} tokens: the hidden
   * states in and out and the MLP's inner columns, as {@link #estimate} counts a prefill's.
   */
  static double prefillActivationBytes(TransformerSpec m, InferenceWorkload w, int tp,
      double tokens) {
    double act = Math.max(2, w.compute().bytes());
    return act * tokens * (2.0 * m.hidden() + (m.gatedMlp() ? 3.0 : 2.0) * m.activeFfnHidden()
        / tp);
  }

  /**
   * One iteration of a continuous-batching server on one replica of {@code tp} ranks and one
   * pipeline stage, as vLLM's and TensorRT-LLM's schedulers build it: the decoding sequences'
   * next tokens and the prefill of new prompts flattened into one batch of rows. Every matmul,
   * element-wise pass and tensor-parallel all-reduce runs once over all rows (the weights are
   * read once per iteration); decode attention reads each decoding sequence's cache over
   * {@code decodeContext} positions; each prompt's prefill attention is that of
   * {@link #estimate}'s prefill (causal, over the positions the prefix cache does not hold); the
   * output head runs on the decoding rows and on the last row of each prompt.
   *
   * @param decodes sequences decoding one token each (a mean: fractional values allowed)
   * @param decodeContext positions each decoding sequence attends to, on average
   * @param prompts prompts prefilled in this iteration (a mean: fractional values allowed)
   * @param prompt the prompts' lengths
   */
  double iterationSeconds(TransformerSpec m, Cluster cluster, InferenceWorkload w, int tp,
      int ep, double decodes, double decodeContext, double prompts, LengthDistribution prompt) {
    checkArgument(decodes >= 0 && prompts >= 0 && decodes + prompts > 0,
        "iteration: decodes %s and prompts %s must be >= 0, not both 0", decodes, prompts);
    Accelerator acc = cluster.accelerator();
    NumberFormat compute = w.compute();
    double peak = precision.peakFlopsPerSecond(acc, compute);
    KernelEfficiency kernel = acc.kernel(compute);
    double e = compute.bytes();
    double wb = w.weights().bytes();
    double kb = w.kvCache().bytes();
    double act = Math.max(2, e);
    double bandwidth = memory.streamingBytesPerSecond(acc);
    double heads = (double) m.heads() / tp;
    // Fresh prompt tokens per prompt (prefix caching) and each length's prefill attention.
    double freshTokens = 0.0;
    double[] attention = new double[prompt.bins().size()];
    int[] cached = new int[attention.length];
    for (int i = 0; i < attention.length; i++) {
      LengthDistribution.Bin bin = prompt.bins().get(i);
      cached[i] = w.cachedPromptTokens(bin.tokens());
      int fresh = bin.tokens() - cached[i];
      freshTokens += bin.weight() * fresh;
      attention[i] = prompts > 0 ? prefillAttention(m, acc, w.attention(), 1, fresh, cached[i],
          heads, act, bandwidth, compute, peak) : 0.0;
    }
    double rows = decodes + prompts * freshTokens;
    // Weights stream in their stored format once a decode shares the iteration (weight-only
    // formats), as in a decode step; a prefill-only iteration computes in the compute format.
    double we = decodes > 0 ? wb : e;
    List<Block> rankBlocks = ExpertBalance.rankBlocks(m, w, ep);
    double t = blocksSeconds(m, rankBlocks, cluster, tp, ep, rows, we, compute, peak, true, a -> {
      double seconds = 0.0;
      for (int i = 0; i < attention.length; i++) {
        LengthDistribution.Bin bin = prompt.bins().get(i);
        double pairs = w.attention() == Attention.STANDARD ? 1.0
            : cached[i] > 0 ? a.pairShare(cached[i], bin.tokens()) : a.pairShare(bin.tokens());
        seconds += prompts * bin.weight() * attention[i] * pairs;
      }
      if (decodes > 0) {
        double span = a.window() == null ? decodeContext : a.window().decodeSpan(decodeContext);
        seconds += decodeAttentionSeconds(m, acc, kernel, tp, decodes, span, kb, heads,
            w.decodeAttention(), compute, peak) + kernel.servingLayerOverheadSeconds();
      }
      return seconds;
    });
    return m.layers() * t + logits(m, acc, tp, decodes + prompts, e, wb, compute, peak);
  }

  /**
   * One draft pass for {@code batch} sequences of {@code tokens} new tokens: for MTP and EAGLE
   * {@code modelPass}, the model's own layer (its average shape) with the output head for the
   * same tokens (EAGLE also its 2h × h input layer); for a draft model its whole forward with its
   * own output head.
   */
  private double draftStep(TransformerSpec m, Cluster cluster, Speculative spec, int tp,
      double modelPass, int batch, int tokens, double context, double e, double wb, double kb,
      NumberFormat compute, double peak, boolean prefill, InferenceWorkload w) {
    Accelerator acc = cluster.accelerator();
    if (spec.method() == Speculative.Method.DRAFT) {
      TransformerSpec d = spec.draft();
      // The output head runs on the positions whose next token is asked: every new one in
      // decode, the last of each prompt in prefill (as the model's own prefill).
      int outputRows = prefill ? batch : batch * tokens;
      return d.layers() * layer(d, d.blocks(), cluster, tp, 1, batch, tokens, context, e, wb,
          kb, compute, peak, prefill, w.decodeAttention(), w.attention(), true)
          + logits(d, acc, tp, outputRows, e, wb, compute, peak);
    }
    double step = modelPass;
    if (spec.method() == Speculative.Method.EAGLE) {
      step += memory.matmulSeconds(acc, (double) batch * tokens, (double) m.hidden() / tp,
          2.0 * m.hidden(), 1, prefill ? e : wb, compute, peak);
    }
    return step;
  }

  /**
   * Share of the compute throughput the expert exchange takes while it overlaps a computation:
   * DeepEP's high-throughput kernels run on {@code Buffer.num_sms = 20} SMs ("the SMs used in
   * high-throughput kernels", deep_ep/buffer.py of deepseek-ai/DeepEP @ dcfd9548) of a Hopper
   * GPU's 132 (H100 SXM5: "132 SMs", https://glennklockwood.com/garden/processors/h100 and
   * NVIDIA's H100 specification table as at
   * https://archive-lib.hpctech.co.jp/gpuproduct/nvidia-h100.html). A prior, not fitted; other
   * generations take the same share, and decode's low-latency kernels are not told apart.
   */
  static final double EXCHANGE_OVERLAP_COST = 20.0 / 132.0;

  /**
   * One layer under two-batch overlap: two halves of the batch, each computing while the other's
   * expert exchange runs. While both run, the computation goes at 1 − κ
   * ({@link #EXCHANGE_OVERLAP_COST}), so a half's exchange of a seconds beside its computation of
   * c exposes {@code max(a − c, κ·a)} (the law of overlapped collectives in training,
   * docs/model-reference.md): a layer takes {@code 2·max(a, c + κ·a)}.
   */
  private double overlappedLayer(TransformerSpec m, List<Block> blocks, Cluster cluster, int tp,
      int ep, int batch, int tokens, double context, double e, double wb, double kb,
      NumberFormat compute, double peak, boolean prefill, DecodeAttention decodeAttention,
      Attention attention) {
    double half = batch / 2.0;
    double computeHalf = layer(m, blocks, cluster, tp, ep, half, tokens, context, e, wb, kb,
        compute, peak, prefill, decodeAttention, attention, false);
    double exchangeHalf = m.moeLayerShare() * expertExchangeSeconds(m,
        ExpertBalance.moeOf(blocks, m), cluster, tp, ep, half * tokens, compute);
    return 2 * Math.max(exchangeHalf, computeHalf + EXCHANGE_OVERLAP_COST * exchangeHalf);
  }

  /**
   * One layer for {@code batch} sequences of {@code tokens} new tokens each attending to
   * {@code context} positions; {@code exchange}: with the expert exchange of experts spanning
   * replicas (ep &gt; tp) added, else without it.
   */
  private double layer(TransformerSpec m, List<Block> blocks, Cluster cluster, int tp, int ep,
      double batch, int tokens, double context, double e, double wb, double kb,
      NumberFormat compute, double peak, boolean prefill, DecodeAttention decodeAttention,
      Attention attention, boolean exchange) {
    Accelerator acc = cluster.accelerator();
    KernelEfficiency kernel = acc.kernel(compute);
    double rows = batch * tokens;
    // Weight-only quantised formats stream fewer bytes per weight: scale the element size of
    // each matmul by wb/e on the weight operand through an effective element size.
    double we = prefill ? e : wb;
    double heads = (double) m.heads() / tp;
    double act = Math.max(2, e); // 16-bit activations between kernels (see estimate)
    double bandwidth = memory.streamingBytesPerSecond(acc);
    // Prefill attention of a full layer (scaled per block by the pairs its window keeps); the
    // prompt's first context − tokens positions are cached (prefix caching) and only attended to.
    double cached = prefill ? Math.max(0.0, context - tokens) : 0.0;
    double fullPrefill = prefill
        ? prefillAttention(m, acc, attention, batch, tokens, cached, heads, act, bandwidth,
            compute, peak)
        : 0.0;
    return blocksSeconds(m, blocks, cluster, tp, ep, rows, we, compute, peak, exchange, a -> {
      if (prefill) {
        // A fused kernel computes only the band of a windowed layer; an unfused one computes
        // every score and masks.
        return fullPrefill * (attention == Attention.STANDARD ? 1.0
            : cached > 0 ? a.pairShare(cached, cached + tokens) : a.pairShare(tokens));
      }
      // A windowed layer reads and scores at most its window. A decode step's kernels are
      // small enough that their launch and synchronisation show. (Adding the same overhead to
      // prefill moved FasterTransformer's A100 prefill, a shared case, from +12.8 % to
      // +15.5 %: the overhead stays a decode constant.)
      double span = a.window() == null ? context : a.window().decodeSpan(context);
      return decodeAttentionSeconds(m, acc, kernel, tp, batch, span, kb, heads,
          decodeAttention, compute, peak) + kernel.servingLayerOverheadSeconds();
    });
  }

  /**
   * One layer over {@code rows} token rows, summed over the model's layer blocks
   * ({@link TransformerSpec#blocks}), each weighted by its share of the layers: the matmuls
   * (attention's QKV and output projections, a dense MLP, an MoE layer's router, touched and
   * shared experts), the attention ({@code attention}: its seconds in one attention block), the
   * element-wise bytes (each side's norm and residual, 5 passes over h; the MLP's activation
   * over its inner columns) and the two tensor-parallel all-reduces.
   */
  private double blocksSeconds(TransformerSpec m, List<Block> blocks, Cluster cluster, int tp,
      int ep, double rows, double we, NumberFormat compute, double peak, boolean exchange,
      java.util.function.ToDoubleFunction<Block.Attention> attention) {
    Accelerator acc = cluster.accelerator();
    double h = m.hidden();
    double act = Math.max(2, compute.bytes()); // 16-bit activations between kernels (estimate)
    double bandwidth = memory.streamingBytesPerSecond(acc);
    double t = 0.0;
    double elementwise = 0.0;
    double layers = m.layers();
    double passes = m.gatedMlp() ? 3 : 2;
    double side = act * rows * 5 * h;
    // Every attention block has the model's projections (only its window differs).
    double projections = memory.matmulSeconds(acc, rows, m.qkvWidth() / tp, h, 1, we, compute,
        peak) + memory.matmulSeconds(acc, rows, h, m.valueDim() / tp, 1, we, compute, peak);
    for (Block block : blocks) {
      double share = block.count() / layers;
      if (block instanceof Block.Attention a) {
        t += share * (projections + attention.applyAsDouble(a));
        elementwise += share * side;
      } else if (block instanceof Block.Mlp mlp) {
        t += share * mlpMatmuls(m, acc, rows, (double) mlp.ffnHidden() / tp, we, compute, peak);
        elementwise += share * (side + passes * act * rows * mlp.ffnHidden() / tp);
      } else if (block instanceof Block.Moe moe) {
        io.hyperframes.model.MoeSpec spec = moe.moe();
        double inner = spec.routedPerToken() * spec.expertFfnHidden()
            + spec.sharedExperts() * (double) spec.sharedExpertFfnHidden();
        t += share * (moeSeconds(m, spec, acc, rows, tp, ep, we, compute, peak)
            + (exchange && ep > tp
                ? expertExchangeSeconds(m, spec, cluster, tp, ep, rows, compute) : 0.0));
        elementwise += share * (side + passes * act * rows * inner / tp);
      }
    }
    t += elementwise / bandwidth;
    if (tp > 1) {
      CollectiveGroup group = new CollectiveGroup(tp, Math.min(tp, cluster.devicesPerNode()));
      t += 2 * interconnect.time(cluster, Collective.ALL_REDUCE, rows * h * act, group)
          .seconds();
    }
    return t;
  }

  /**
   * The dispatch and combine of one MoE layer whose experts span ep/tp replicas (ep > tp): each
   * of a replica's tp ranks sends its share of the {@code rows} tokens to the ranks holding their
   * experts and gets the expert outputs back, as DeepEP's kernels move them
   * ({@link InterconnectModel#forwardedExchange}: a token crosses the network once per other node
   * it is routed to and is forwarded inside the node to each destination rank, DeepSeek-V3
   * §3.2.2). The dispatch carries the hidden state in the matmul format (FP8 where the weights are
   * FP8, as DeepEP's dispatch does), the combine in 16 bits; {@code moe} as the busiest rank
   * runs it ({@link ExpertBalance#rankBlocks}): its copies per token scale what it exchanges.
   */
  private double expertExchangeSeconds(TransformerSpec m, io.hyperframes.model.MoeSpec moe,
      Cluster cluster, int tp, int ep, double rows, NumberFormat compute) {
    double tokens = rows / tp * moe.routedPerToken() / moe.topK();
    if (!(tokens > 0)) {
      return 0.0;
    }
    CollectiveGroup group = new CollectiveGroup(ep, Math.min(ep, cluster.devicesPerNode()));
    double dispatchBytes = m.hidden() * compute.bytes();
    double combineBytes = m.hidden() * Math.max(2, compute.bytes());
    return interconnect.forwardedExchange(cluster, new ExpertExchange(tokens, dispatchBytes,
        moe.experts(), moe.topK(), group, moe.groups(), moe.groupTopK())).seconds()
        + interconnect.forwardedExchange(cluster, new ExpertExchange(tokens, combineBytes,
            moe.experts(), moe.topK(), group, moe.groups(), moe.groupTopK())).seconds();
  }

  /**
   * Decode attention of one full layer over {@code context} positions for {@code batch}
   * sequences. Each device reads the cache of its KV heads (at least one, replicated when
   * tp > kvHeads) once per step with a grouped kernel; a per-head kernel reads it once per query
   * head, and the share of those repeated reads that misses in L2 reaches device memory. Paged
   * decode attention streams the KV cache at a fitted fraction of the bandwidth.
   */
  private double decodeAttentionSeconds(TransformerSpec m, Accelerator acc,
      KernelEfficiency kernel, int tp, double batch, double context, double kb, double heads,
      DecodeAttention decodeAttention, NumberFormat compute, double peak) {
    int kvHeads = Math.max(1, m.kvHeads() / tp);
    int readers = Math.max(1, decodeAttention.headsRead(m.heads(), m.kvHeads()) / tp);
    double kvHeadsRead = kvHeads + (readers - kvHeads) * kernel.kvPerHeadRereadFraction();
    double fraction = decodeAttention == DecodeAttention.PER_HEAD
        ? kernel.kvPerHeadBandwidth() : kernel.kvBandwidthFraction();
    double kvRead = 2.0 * batch * context * kvHeadsRead * m.headDim() * kb;
    double flops = 4.0 * batch * context * (double) m.qDim() / tp;
    if (m.mla() != null) {
      // Latent attention decodes on the cache as stored (the up-projections absorbed into
      // the query and the output; DeepSeek-V2 §2.1.2): each rank reads the whole latent and
      // rotary key, and its heads score over r_kv + d_r and sum values over r_kv.
      kvRead = batch * context * m.kvCacheElementsPerTokenPerLayer(tp) * kb;
      flops = 2.0 * batch * context * heads
          * (m.mla().kvCacheElements() + m.mla().kvLoraRank());
    }
    return memory.rooflineSeconds(acc, flops, kvRead / fraction, compute, peak);
  }

  /**
   * One MoE layer's MLP matmuls on one tensor-parallel rank: the router, the experts the step's
   * tokens touch ({@link ExpertWeights#expertsTouched}), each over its share of the routed rows
   * and reading
   * its weights once, and the shared experts. With one expert routed to (E = k = 1) this is the
   * dense MLP exactly.
   */
  private double moeSeconds(TransformerSpec m, io.hyperframes.model.MoeSpec moe, Accelerator acc,
      double rows, int tp, int ep, double we, NumberFormat compute, double peak) {
    double routed = rows * moe.routedPerToken();
    double experts;
    if (ep == 1) {
      double touched = ExpertWeights.expertsTouched(moe.experts(), moe.topK(), rows);
      experts = touched * mlpMatmuls(m, acc, routed / touched,
          (double) moe.expertFfnHidden() / tp, we, compute, peak);
    } else {
      // The busiest rank: its touched experts, and the token copies routed to it (each of the
      // rows·k copies lands on one of ep ranks), each expert at the width ep/tp of one. With
      // ep > tp the group's rows are those of its ep/tp replicas, and each expert is whole.
      double groupRows = ep > tp ? rows * (ep / tp) : rows;
      int width = Math.max(tp, ep);
      double touched = ExpertWeights.busiestRankExperts(moe.experts(), moe.topK(), groupRows, ep);
      long assignments = Math.round(groupRows * moe.topK());
      double copies = Math.max((double) assignments / ep,
          ExpertBalance.expectedMax(assignments, 1.0 / ep, ep))
          * moe.routedPerToken() / moe.topK();
      experts = touched * mlpMatmuls(m, acc, copies / touched,
          (double) moe.expertFfnHidden() * ep / width, we, compute, peak);
    }
    double shared = moe.sharedExperts() > 0 ? mlpMatmuls(m, acc, rows,
        moe.sharedExperts() * (double) moe.sharedExpertFfnHidden() / tp, we, compute, peak)
        : 0.0;
    double router = moe.routed() ? memory.matmulSeconds(acc, rows, moe.experts(), m.hidden(), 1,
        we, compute, peak) : 0.0;
    return router + experts + shared;
  }

  private double mlpMatmuls(TransformerSpec m, Accelerator acc, double rows, double f,
      double we, NumberFormat compute, double peak) {
    double h = m.hidden();
    return memory.matmulSeconds(acc, rows, (m.gatedMlp() ? 2 : 1) * f, h, 1, we, compute, peak)
        + memory.matmulSeconds(acc, rows, h, f, 1, we, compute, peak);
  }

  /**
   * Prefill attention of one layer. {@link Attention#FLASH}: a fused kernel (FlashAttention-2,
   * Dao 2023, arXiv 2307.08691, §3; TensorRT-LLM's context FMHA): the scores stay on chip and
   * causal tiles above the diagonal are skipped ({@link Attention#causalTileShare}), as in
   * training ({@code TrainingEstimator}): at the fitted fused-attention efficiency of the format
   * it runs in where there is one, else the two score and value products through the matmul
   * roofline. {@link Attention#STANDARD}: the two products over materialised scores and the
   * passes over them.
   */
  private double prefillAttention(TransformerSpec m, Accelerator acc, Attention attention,
      double batch, int tokens, double cached, double heads, double act, double bandwidth,
      NumberFormat compute, double peak) {
    NumberFormat attnFormat = attentionFormat(acc, compute);
    double attnPeak = attnFormat == compute ? peak
        : Math.min(peak, precision.peakFlopsPerSecond(acc, attnFormat));
    if (cached > 0) {
      // Prefix caching: the prompt's new tokens attend to the cached positions (whole tiles)
      // and causally to each other; an unfused kernel computes and masks every score.
      double keys = cached + tokens;
      double d = m.headDim();
      if (attention == Attention.STANDARD) {
        return memory.matmulSeconds(acc, tokens, keys, d, batch * heads, act, attnFormat,
            attnPeak)
            + memory.matmulSeconds(acc, tokens, d, keys, batch * heads, act, attnFormat,
                attnPeak)
            + 2 * act * heads * (double) tokens * keys * batch / bandwidth;
      }
      double pairs = tokens * cached + (double) tokens * tokens * Attention.causalTileShare(tokens);
      double fusedAttn = acc.kernel(attnFormat).attention();
      return fusedAttn > 0
          ? 4.0 * batch * pairs * d * heads / (attnPeak * fusedAttn)
          : (memory.matmulSeconds(acc, tokens, keys, d, batch * heads, act, attnFormat, attnPeak)
              + memory.matmulSeconds(acc, tokens, d, keys, batch * heads, act, attnFormat,
                  attnPeak)) * pairs / (tokens * keys);
    }
    if (attention == Attention.STANDARD) {
      return attentionProducts(m, acc, batch, tokens, heads, act, attnFormat, attnPeak)
          + 2 * act * heads * (double) tokens * tokens * batch / bandwidth;
    }
    double causal = Attention.causalTileShare(tokens);
    double fused = acc.kernel(attnFormat).attention();
    return fused > 0
        ? 4.0 * batch * tokens * (double) tokens * m.headDim() * heads * causal
            / (attnPeak * fused)
        : attentionProducts(m, acc, batch, tokens, heads, act, attnFormat, attnPeak) * causal;
  }

  /** The score (Q·Kᵀ) and value (P·V) products of one layer's attention over all s² pairs. */
  private double attentionProducts(TransformerSpec m, Accelerator acc, double batch, int tokens,
      double heads, double act, NumberFormat format, double peak) {
    return memory.matmulSeconds(acc, tokens, tokens, m.headDim(), batch * heads, act, format,
        peak)
        + memory.matmulSeconds(acc, tokens, m.headDim(), tokens, batch * heads, act, format,
            peak);
  }

  /**
   * The format prefill attention computes in: BF16 (else FP16) for FP8 or NVFP4 weights, as
   * training's FP8 recipes keep attention in their 16-bit activation format
   * ({@link io.hyperframes.precision.PrecisionRecipe#attentionFormat}); else the compute format.
   */
  static NumberFormat attentionFormat(Accelerator acc, NumberFormat compute) {
    if (!compute.isNarrowFloat()) {
      return compute;
    }
    return acc.supports(NumberFormat.BF16) ? NumberFormat.BF16
        : acc.supports(NumberFormat.FP16) ? NumberFormat.FP16 : compute;
  }

  private double logits(TransformerSpec m, Accelerator acc, int tp, double batch, double e,
      double wb, NumberFormat compute, double peak) {
    return memory.matmulSeconds(acc, batch, (double) m.vocab() / tp, m.hidden(), 1, wb, compute,
        peak);
  }

  private double pipeline(Cluster cluster, int tp, int replicas, double bytes) {
    boolean crossesNodes = (long) tp * replicas >= cluster.devicesPerNode();
    return interconnect.time(cluster, Collective.POINT_TO_POINT, bytes,
        new CollectiveGroup(2, crossesNodes ? 1 : 2)).seconds();
  }
}
