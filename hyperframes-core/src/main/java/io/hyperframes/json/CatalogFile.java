package io.hyperframes.json;

import java.util.List;
import java.util.Map;

/**
 * A catalog file (the built-in {@code hardware.json}, {@code prices.json}, {@code models.json},
 * a user's overrides, the output of {@code calibrate}) as records bound by Jackson: every section
 * optional, every entry's fields named here, an unknown field rejected. Units are those of the
 * file (GB/s, µs, GiB, TFLOP/s); the catalog converts them.
 */
public record CatalogFile(String version, String notes, List<FabricEntry> fabrics,
    List<AcceleratorEntry> accelerators, List<NodeEntry> nodes, List<ModelEntry> models,
    List<PriceEntry> prices, List<KernelEntry> kernels, List<IntervalEntry> intervals) {

  /** A fabric: per-device bandwidth and latency of one link type. */
  public record FabricEntry(String id, Double bandwidthGBps, Double latencyUs, Double launchUs,
      Double efficiency, Double halfEfficiencyMB, Double inNetworkReductionGBps, String source) {}

  /** An accelerator: peaks per format, memory, matmul constants, its link and default node. */
  public record AcceleratorEntry(String id, String name, Map<String, Double> peakTflops,
      Double memoryGiB, Double memoryBandwidthGBps, Double l2MB, Double matmulEfficiency,
      Double matmulHalfDim, Double matmulHalfRows, Double memoryEfficiency, Double powerWatts,
      String intraNode, String defaultNode, Boolean fusedAttention, String generation,
      String source) {}

  /** A node template: devices per node, NICs, host. */
  public record NodeEntry(String id, String accelerator, Integer devicesPerNode, Integer nics,
      String nic, Integer hostCores, Double hostMemoryGiB, String source, String hostSource) {}

  /** A model architecture with its source. */
  public record ModelEntry(String id, Integer layers, Integer hidden, Integer heads,
      Integer kvHeads, Integer ffnHidden, Boolean gatedMlp, Integer vocab, Integer seqLen,
      Boolean tiedEmbeddings, String source) {

    /** The architecture fields in the request vocabulary. */
    public Documents.Model architecture() {
      return new Documents.Model(null, id, layers, hidden, heads, kvHeads, ffnHidden, gatedMlp,
          vocab, seqLen, tiedEmbeddings, null, null);
    }
  }

  /** An accelerator-hour price with where and when it was read. */
  public record PriceEntry(String accelerator, Double usdPerHour, String source, String date) {}

  /**
   * Fitted kernel constants of one generation for a list of formats; with {@code engine}, the
   * constants of that engine's kernels on the generation, which override the generation's for
   * layouts the engine runs.
   */
  public record KernelEntry(String generation, String engine, List<String> formats,
      Double matmulEfficiency,
      Double matmulHalfDim, Double matmulHalfRows, Double attentionEfficiency,
      Double layerOverheadUs, Double overlapCost, Double servingLayerOverheadUs,
      Double kvBandwidthFraction, Double servingRequestOverheadUs,
      Double optimizerBandwidthFraction, Double kvPerHeadBandwidthFraction,
      Double kvPerHeadRereadFraction, Double servingFirstTokenLayerOverheadUs, String source) {}

  /** An empirical step-time interval of a generation and regime. */
  public record IntervalEntry(String generation, String regime, Double low, Double high,
      Integer cases, String source) {}
}
