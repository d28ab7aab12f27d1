package io.hyperframes.inference;

import static com.google.common.base.Preconditions.checkArgument;

import io.hyperframes.hardware.Cluster;
import io.hyperframes.model.TransformerSpec;

/**
 * A serving estimate request: model, cluster, workload and the replica layout ({@code ep}: the
 * routed experts split over ep of the tp ranks, {@link InferenceEstimator#estimate(TransformerSpec,
 * Cluster, InferenceWorkload, int, int, int, int)}); {@code capacity}, with
 * {@code workload.mode} capacity, the scheduler and length distributions of a capacity estimate
 * ({@link Capacity}), else null; {@code slo}, with {@code workload.mode} slo, whether to find the
 * highest load that meets the workload's SLO ({@link SloEstimate}); {@code disaggregated}, with
 * {@code layout.disaggregated}, the prefill and decode pools ({@link DisaggregatedEstimate}),
 * else null: {@code tp}, {@code ep}, {@code pp} and {@code replicas} are then the decode pool's;
 * {@code twoBatchOverlap}, where the experts span replicas (ep &gt; tp), whether each step runs
 * its batch as two halves, one's expert exchange behind the other's computation
 * ({@link InferenceEstimator#estimate(TransformerSpec, Cluster, InferenceWorkload, int, int, int,
 * int, boolean)}; {@code layout.twoBatchOverlap}); {@code redundantExperts}, the copies of
 * routed experts the replicas hold beside them ({@code layout.redundantExperts}), which
 * {@code model} already counts among its experts ({@link #withRedundantExperts}).
 */
public record InferenceRequest(TransformerSpec model, Cluster cluster, InferenceWorkload workload,
    int tp, int ep, int pp, int replicas, CapacityWorkload capacity, boolean slo,
    Disaggregation disaggregated, boolean twoBatchOverlap, int redundantExperts) {
  public InferenceRequest {
    checkArgument(redundantExperts >= 0, "layout.redundantExperts: must be >= 0, got %s",
        redundantExperts);
    checkArgument(redundantExperts == 0 || (disaggregated == null && ep > 1),
        "layout.redundantExperts: copies of routed experts share their load over the ep ranks,"
        + " which needs layout.ep > 1 (in layout.disaggregated give it per pool), got %s"
        + " copies with ep %s", redundantExperts, ep);
    checkArgument(!twoBatchOverlap || (disaggregated == null && ep > tp),
        "layout.twoBatchOverlap: overlaps the expert exchange between replicas, which needs"
        + " layout.ep > layout.tp (experts over ep/tp replicas; in layout.disaggregated give it"
        + " per pool), got ep %s, tp %s", ep, tp);
    checkArgument(model != null, "model: an architecture is needed for inference");
    checkArgument(cluster != null, "cluster: must be given");
    checkArgument(workload != null, "workload: must be given");
    checkArgument(!slo || workload.ttftSloSeconds() > 0 || workload.tpotSloSeconds() > 0,
        "workload.latencySlo: slo mode needs a target, ttftSeconds or tpotSeconds (or both)");
    checkArgument(!slo || workload.arrivalRatePerSecond() == 0, "workload.arrivalRatePerSecond:"
        + " slo mode finds the highest rate that meets workload.latencySlo, got %s",
        workload.arrivalRatePerSecond());
    checkArgument(disaggregated == null || (!slo && capacity == null), "layout.disaggregated:"
        + " estimated in workload.mode fixed (its pools' batches are set by the layout, memory"
        + " and workload.latencySlo), got mode %s", slo ? "slo" : "capacity");
    checkArgument(disaggregated == null || disaggregated.devices() == cluster.devices(),
        "layout.disaggregated: the pools' devices, prefill %s + decode %s = %s, do not equal"
        + " cluster.devices %s", disaggregated == null ? 0 : disaggregated.prefill().devices(),
        disaggregated == null ? 0 : disaggregated.decode().devices(),
        disaggregated == null ? 0 : disaggregated.devices(), cluster.devices());
    checkArgument(disaggregated == null || workload.arrivalRatePerSecond() == 0,
        "workload.arrivalRatePerSecond: layout.disaggregated gives the rate the pools sustain;"
        + " a load on them is not simulated, got %s", workload.arrivalRatePerSecond());
  }

  /** A request without redundant experts. */
  public InferenceRequest(TransformerSpec model, Cluster cluster, InferenceWorkload workload,
      int tp, int ep, int pp, int replicas, CapacityWorkload capacity, boolean slo,
      Disaggregation disaggregated, boolean twoBatchOverlap) {
    this(model, cluster, workload, tp, ep, pp, replicas, capacity, slo, disaggregated,
        twoBatchOverlap, 0);
  }

  /** A request without two-batch overlap or redundant experts. */
  public InferenceRequest(TransformerSpec model, Cluster cluster, InferenceWorkload workload,
      int tp, int ep, int pp, int replicas, CapacityWorkload capacity, boolean slo,
      Disaggregation disaggregated) {
    this(model, cluster, workload, tp, ep, pp, replicas, capacity, slo, disaggregated, false);
  }

  /** This request with {@code twoBatchOverlap} (where the experts span replicas). */
  public InferenceRequest withTwoBatchOverlap(boolean overlap) {
    return new InferenceRequest(model, cluster, workload, tp, ep, pp, replicas, capacity, slo,
        disaggregated, overlap, redundantExperts);
  }

  /**
   * This request served with {@code redundant} copies of routed experts: its model with
   * E + {@code redundant} expert slots per MoE layer, the tokens routed uniformly over them
   * (docs/inference.md, "Experts over several replicas"), and {@link #redundantExperts} set.
   *
   * @throws IllegalArgumentException naming {@code layout.redundantExperts} where this request
   *     already holds copies or is disaggregated, and as {@link #withCopies}
   */
  public InferenceRequest withRedundantExperts(int redundant) {
    checkArgument(redundantExperts == 0, "layout.redundantExperts: this request already holds"
        + " %s copies", redundantExperts);
    if (redundant == 0) {
      return this;
    }
    return new InferenceRequest(withCopies(model, redundant, ep), cluster, workload, tp, ep, pp,
        replicas, capacity, slo, disaggregated, twoBatchOverlap, redundant);
  }

  /**
   * {@code model} as replicas with {@code redundant} copies of routed experts hold it (E + R
   * slots per MoE layer, {@link Disaggregated#withSlots}); {@code model} itself without copies.
   *
   * @throws IllegalArgumentException naming {@code layout.redundantExperts} and the value where
   *     the copies are negative, ep is 1, the model has no routed experts, or the router's groups
   *     or ep do not divide the slots
   */
  static TransformerSpec withCopies(TransformerSpec model, int redundant, int ep) {
    checkArgument(redundant >= 0, "layout.redundantExperts: must be >= 0, got %s", redundant);
    if (redundant == 0) {
      return model;
    }
    checkArgument(ep > 1, "layout.redundantExperts: copies of routed experts share their load"
        + " over the ep ranks, which needs layout.ep > 1, got %s copies with ep %s", redundant,
        ep);
    TransformerSpec served = Disaggregated.withSlots(model, redundant, "layout.redundantExperts");
    checkArgument(served.moe().experts() % ep == 0, "layout.redundantExperts: %s experts and %s"
        + " copies make %s slots, which layout.ep %s does not divide", model.moe().experts(),
        redundant, served.moe().experts(), ep);
    return served;
  }

  /** A request in mode fixed, capacity or slo on one pool of replicas. */
  public InferenceRequest(TransformerSpec model, Cluster cluster, InferenceWorkload workload,
      int tp, int ep, int pp, int replicas, CapacityWorkload capacity, boolean slo) {
    this(model, cluster, workload, tp, ep, pp, replicas, capacity, slo, null);
  }

  /** A disaggregated request: the decode pool's layout, and both pools. */
  public static InferenceRequest disaggregated(TransformerSpec model, Cluster cluster,
      InferenceWorkload workload, Disaggregation pools) {
    checkArgument(pools != null, "layout.disaggregated: must be given");
    return new InferenceRequest(model, cluster, workload, pools.decode().tp(),
        pools.decode().ep(), 1, pools.decode().replicas(), null, false, pools);
  }

  /** A request in mode fixed or capacity (no SLO search). */
  public InferenceRequest(TransformerSpec model, Cluster cluster, InferenceWorkload workload,
      int tp, int ep, int pp, int replicas, CapacityWorkload capacity) {
    this(model, cluster, workload, tp, ep, pp, replicas, capacity, false);
  }

  /** A fixed-batch request ({@code workload.mode} fixed: no capacity estimate). */
  public InferenceRequest(TransformerSpec model, Cluster cluster, InferenceWorkload workload,
      int tp, int ep, int pp, int replicas) {
    this(model, cluster, workload, tp, ep, pp, replicas, null);
  }

  /** A request without expert parallelism ({@code ep = 1}). */
  public InferenceRequest(TransformerSpec model, Cluster cluster, InferenceWorkload workload,
      int tp, int pp, int replicas) {
    this(model, cluster, workload, tp, 1, pp, replicas);
  }
}
