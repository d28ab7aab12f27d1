package io.hyperframes.calibrate;

import io.hyperframes.catalog.Catalog;
import io.hyperframes.hardware.KernelEfficiency;
import io.hyperframes.precision.NumberFormat;
import java.util.Map;
import java.util.Set;

/**
 * The catalog a leave-one-source-out refit starts from when it keeps the kernel priors
 * ({@code validate --leave-one-source-out}, {@code --keep-priors} by default): the shipped
 * catalog's kernel entries of each generation, with the constants the refit fits reset to the
 * accelerator's own values (the starting point {@link Catalog#withoutKernels} gives every
 * constant); every other field of an entry (a fused-attention or matmul prior taken from kernel
 * measurements, a serving constant) is kept. Engine-scoped entries ({@code "hopper@fsdp"}) are
 * left out, as without the priors: the refit makes them again from the generation's. A shipped
 * field that was fitted on a case and is kept makes that case's source in sample
 * ({@link Calibration#inSampleSources} reads the shipped catalog either way), so keeping the
 * priors leaks nothing into a held-out source.
 */
final class PriorStart {

  private PriorStart() {}

  static Catalog of(Catalog shipped, Set<Calibration.Constant> refit) {
    Catalog bare = shipped.withoutKernels();
    Catalog start = bare;
    for (Map.Entry<String, Map<NumberFormat, KernelEfficiency>> e : shipped.kernels().entrySet()) {
      String generation = e.getKey();
      if (generation.contains("@")) {
        continue;
      }
      for (Map.Entry<NumberFormat, KernelEfficiency> k : e.getValue().entrySet()) {
        // The accelerator's own constants: the bare catalog has no kernel entries to return.
        KernelEfficiency prior = Calibration.current(bare, generation, k.getKey());
        start = start.withKernel(generation, k.getKey(), reset(k.getValue(), prior, refit));
      }
    }
    return start;
  }

  /** {@code k} with each of {@code constants} set to its value in {@code prior}. */
  static KernelEfficiency reset(KernelEfficiency k, KernelEfficiency prior,
      Set<Calibration.Constant> constants) {
    KernelEfficiency out = k;
    for (Calibration.Constant c : constants) {
      out = switch (c) {
        case MATMUL_EFFICIENCY -> out.withMatmul(prior.matmul());
        case ATTENTION_EFFICIENCY -> out.withAttention(prior.attention());
        case MATMUL_HALF_DIM -> out.withHalfDim(prior.halfDim());
        case LAYER_OVERHEAD -> out.withLayerOverhead(prior.layerOverheadSeconds());
        case OVERLAP_COST -> out.withOverlapCost(prior.overlapCost());
        case SERVING_OVERHEAD -> out.withServingLayerOverhead(
            prior.servingLayerOverheadSeconds());
        case SERVING_REQUEST -> out.withServingRequest(prior.servingRequestSeconds());
        case SERVING_FIRST_TOKEN_LAYER -> out.withServingFirstTokenLayer(
            prior.servingFirstTokenLayerSeconds());
        case KV_BANDWIDTH -> out.withKvBandwidthFraction(prior.kvBandwidthFraction());
        case KV_PER_HEAD_BANDWIDTH -> out.withKvPerHeadBandwidthFraction(
            prior.kvPerHeadBandwidthFraction());
        case KV_PER_HEAD_REREAD -> out.withKvPerHeadRereadFraction(
            prior.kvPerHeadRereadFraction());
        case ELEMENTWISE_BANDWIDTH -> out.withElementwiseBandwidthFraction(
            prior.elementwiseBandwidthFraction());
        case FABRIC_EFFICIENCY, MEMORY_EFFICIENCY -> out; // not kernel constants
      };
    }
    return out;
  }
}
