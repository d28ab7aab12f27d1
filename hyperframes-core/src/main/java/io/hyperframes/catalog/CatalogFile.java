package io.hyperframes.catalog;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.function.Function;

/**
 * A catalog file (the built-in {@code hardware.json}, {@code prices.json}, {@code models.json},
 * a user's overrides, the output of {@code calibrate}) as records bound by Jackson: every section
 * optional, every entry's fields named here, an unknown field rejected. Units are those of the
 * file (GB/s, µs, GiB, TFLOP/s); the catalog converts them. {@code fittedOn} of a fabric,
 * accelerator or kernel entry maps each fitted field to the case sources it was fitted on (the
 * provenance leave-one-source-out reads); {@code decisions} are the modelling choices made by
 * comparing cases.
 */
public record CatalogFile(String version, String notes, List<FabricEntry> fabrics,
    List<AcceleratorEntry> accelerators, List<NodeEntry> nodes, List<ModelEntry> models,
    List<PriceEntry> prices, List<KernelEntry> kernels, List<IntervalEntry> intervals,
    List<DecisionEntry> decisions) {

  /** A catalog file without modelling decisions. */
  public CatalogFile(String version, String notes, List<FabricEntry> fabrics,
      List<AcceleratorEntry> accelerators, List<NodeEntry> nodes, List<ModelEntry> models,
      List<PriceEntry> prices, List<KernelEntry> kernels, List<IntervalEntry> intervals) {
    this(version, notes, fabrics, accelerators, nodes, models, prices, kernels, intervals, null);
  }

  /**
   * The entries of {@code top} over those of {@code base}: an entry of {@code top} replaces the
   * entry of {@code base} with the same key (fabrics, accelerators, nodes and models by id,
   * prices by accelerator, kernels by generation, engine and formats, intervals by generation
   * and regime), every other entry of either is kept, {@code base}'s first. The version and
   * notes are {@code top}'s where it has them. This is how a chain of {@code calibrate} runs
   * keeps what the earlier ones fitted.
   */
  public static CatalogFile overlay(CatalogFile base, CatalogFile top) {
    Objects.requireNonNull(base, "base");
    Objects.requireNonNull(top, "top");
    return new CatalogFile(top.version != null ? top.version : base.version,
        top.notes != null ? top.notes : base.notes,
        over(base.fabrics, top.fabrics, FabricEntry::id),
        over(base.accelerators, top.accelerators, AcceleratorEntry::id),
        over(base.nodes, top.nodes, NodeEntry::id),
        over(base.models, top.models, ModelEntry::id),
        over(base.prices, top.prices, PriceEntry::accelerator),
        over(base.kernels, top.kernels,
            k -> List.of(String.valueOf(k.generation()), String.valueOf(k.engine()),
                k.formats() == null ? Set.of() : Set.copyOf(k.formats()))),
        over(base.intervals, top.intervals, i -> List.of(String.valueOf(i.generation()),
            String.valueOf(i.regime()))),
        over(base.decisions, top.decisions, DecisionEntry::decision));
  }

  private static <T> List<T> over(List<T> base, List<T> top, Function<T, Object> key) {
    if (base == null || base.isEmpty()) {
      return top;
    }
    if (top == null || top.isEmpty()) {
      return base;
    }
    Set<Object> replaced = new HashSet<>();
    top.forEach(t -> replaced.add(key.apply(t)));
    List<T> out = new ArrayList<>();
    base.stream().filter(b -> !replaced.contains(key.apply(b))).forEach(out::add);
    out.addAll(top);
    return out;
  }

  /** A fabric: per-device bandwidth and latency of one link type. */
  public record FabricEntry(String id, Double bandwidthGBps, Double latencyUs, Double launchUs,
      Double efficiency, Double halfEfficiencyMB, Double inNetworkReductionGBps, String source,
      Map<String, List<String>> fittedOn) {

    /** A fabric without provenance of fitted fields. */
    public FabricEntry(String id, Double bandwidthGBps, Double latencyUs, Double launchUs,
        Double efficiency, Double halfEfficiencyMB, Double inNetworkReductionGBps,
        String source) {
      this(id, bandwidthGBps, latencyUs, launchUs, efficiency, halfEfficiencyMB,
          inNetworkReductionGBps, source, null);
    }
  }

  /** An accelerator: peaks per format, memory, matmul constants, its link and default node. */
  public record AcceleratorEntry(String id, String name, Map<String, Double> peakTflops,
      Double memoryGiB, Double memoryBandwidthGBps, Double l2MB, Double matmulEfficiency,
      Double matmulHalfDim, Double matmulHalfRows, Double memoryEfficiency, Double powerWatts,
      String intraNode, String defaultNode, Boolean fusedAttention, String generation,
      String source, Map<String, List<String>> fittedOn) {

    /** An accelerator without provenance of fitted fields. */
    public AcceleratorEntry(String id, String name, Map<String, Double> peakTflops,
        Double memoryGiB, Double memoryBandwidthGBps, Double l2MB, Double matmulEfficiency,
        Double matmulHalfDim, Double matmulHalfRows, Double memoryEfficiency, Double powerWatts,
        String intraNode, String defaultNode, Boolean fusedAttention, String generation,
        String source) {
      this(id, name, peakTflops, memoryGiB, memoryBandwidthGBps, l2MB, matmulEfficiency,
          matmulHalfDim, matmulHalfRows, memoryEfficiency, powerWatts, intraNode, defaultNode,
          fusedAttention, generation, source, null);
    }
  }

  /** A node template: devices per node, NICs, host. */
  public record NodeEntry(String id, String accelerator, Integer devicesPerNode, Integer nics,
      String nic, Integer hostCores, Double hostMemoryGiB, String source, String hostSource,
      Integer devicesPerHost) {}

  /** A model architecture with its source. */
  public record ModelEntry(String id, Integer layers, Integer hidden, Integer heads,
      Integer kvHeads, Integer ffnHidden, Boolean gatedMlp, Integer vocab, Integer seqLen,
      Boolean tiedEmbeddings, String source, Integer headDim, ModelDocuments.Moe moe,
      ModelDocuments.Mla mla, ModelDocuments.SlidingWindow slidingWindow, Integer mtpLayers) {

    /** The architecture fields in the request vocabulary. */
    public ModelDocuments.Model architecture() {
      return new ModelDocuments.Model(null, id, layers, hidden, heads, kvHeads, ffnHidden, gatedMlp,
          vocab, seqLen, tiedEmbeddings, null, null, headDim, null, moe, mla, slidingWindow,
          mtpLayers);
    }
  }

  /** An accelerator-hour price with where and when it was read. */
  public record PriceEntry(String accelerator, Double usdPerHour, String source, String date) {}

  /**
   * Fitted kernel constants of one generation for a list of formats; with {@code engine}, the
   * constants of that engine's kernels on the generation, which override the generation's for
   * layouts the engine runs. {@code servingFrom} ({@code "generation/format"}, e.g.
   * {@code "hopper/fp8-e4m3"}) takes the serving constants (per-layer decode and first-token
   * overheads, the request path, the decode-attention bandwidth fractions) from that entry where
   * none were fitted for this one; an entry with it sets none of them itself.
   */
  public record KernelEntry(String generation, String engine, List<String> formats,
      Double matmulEfficiency,
      Double matmulHalfDim, Double matmulHalfRows, Double attentionEfficiency,
      Double layerOverheadUs, Double overlapCost, Double servingLayerOverheadUs,
      Double kvBandwidthFraction, Double servingRequestOverheadUs,
      Double optimizerBandwidthFraction, Double kvPerHeadBandwidthFraction,
      Double kvPerHeadRereadFraction, Double servingFirstTokenLayerOverheadUs,
      Double elementwiseBandwidthFraction, String source, Map<String, List<String>> fittedOn,
      String servingFrom) {

    /** A kernel entry without provenance of fitted fields. */
    public KernelEntry(String generation, String engine, List<String> formats,
        Double matmulEfficiency, Double matmulHalfDim, Double matmulHalfRows,
        Double attentionEfficiency, Double layerOverheadUs, Double overlapCost,
        Double servingLayerOverheadUs, Double kvBandwidthFraction,
        Double servingRequestOverheadUs, Double optimizerBandwidthFraction,
        Double kvPerHeadBandwidthFraction, Double kvPerHeadRereadFraction,
        Double servingFirstTokenLayerOverheadUs, String source) {
      this(generation, engine, formats, matmulEfficiency, matmulHalfDim, matmulHalfRows,
          attentionEfficiency, layerOverheadUs, overlapCost, servingLayerOverheadUs,
          kvBandwidthFraction, servingRequestOverheadUs, optimizerBandwidthFraction,
          kvPerHeadBandwidthFraction, kvPerHeadRereadFraction, servingFirstTokenLayerOverheadUs,
          null, source, null, null);
    }
  }

  /**
   * A modelling choice made by comparing published cases: the sources of {@code lookedAt} are
   * fitting sources of the model from then on ({@code validate --leave-one-source-out} reports
   * them in sample).
   *
   * @param date when (YYYY-MM-DD)
   * @param decision what was chosen, and between what
   * @param lookedAt the case sources (case-id prefixes) whose errors were compared
   * @param where the report section that shows the comparison
   */
  public record DecisionEntry(String date, String decision, List<String> lookedAt,
      String where) {}

  /** An empirical step-time interval of a generation and regime. */
  public record IntervalEntry(String generation, String regime, Double low, Double high,
      Integer cases, String source) {}
}
