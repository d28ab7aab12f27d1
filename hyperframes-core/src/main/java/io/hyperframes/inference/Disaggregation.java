package io.hyperframes.inference;

import static com.google.common.base.Preconditions.checkArgument;

import io.hyperframes.hardware.Checks;

/**
 * Disaggregated serving ({@code layout.disaggregated}): prompts are processed on one pool of
 * devices and tokens generated on another, the KV cache of each request sent from the first to
 * the second (DistServe, Zhong et al. 2024, arXiv 2401.09670, §2-3; Splitwise, Patel et al.
 * 2024, arXiv 2311.18677, §4). Each pool is replicas of {@code tp} devices; {@code ep} splits a
 * layer's routed experts over ep ranks, inside a replica (ep ≤ tp) or over ep/tp replicas that
 * run attention data-parallel (ep &gt; tp, wide expert parallelism).
 *
 * @param prefill the pool that runs the prompts and sends their KV cache
 * @param decode the pool that receives the KV cache and generates the tokens
 */
public record Disaggregation(Pool prefill, Pool decode) {

  public Disaggregation {
    checkArgument(prefill != null, "layout.disaggregated.prefill: must be given");
    checkArgument(decode != null, "layout.disaggregated.decode: must be given");
  }

  /** Devices of both pools. */
  public int devices() {
    return prefill.devices() + decode.devices();
  }

  /**
   * One pool.
   *
   * @param tp tensor-parallel devices of a replica
   * @param ep expert-parallel ranks of a layer's routed experts (1: none)
   * @param replicas replicas in the pool (a multiple of ep/tp when ep &gt; tp)
   * @param batch sequences a replica runs at once; 0 leaves it to the estimate (prefill: the
   *     workload's batch, lowered to meet the TTFT target; decode: the most that fit in memory,
   *     lowered to meet the TPOT target)
   * @param twoBatchOverlap each step as two halves, one's expert exchange behind the other's
   *     computation (matters where ep &gt; tp; {@link InferenceEstimator#estimate(
   *     io.hyperframes.model.TransformerSpec, io.hyperframes.hardware.Cluster, InferenceWorkload,
   *     int, int, int, int, boolean)})
   * @param redundantExperts extra expert slots per MoE layer holding copies of busy experts
   *     (expert-parallel load balancing, DeepSeek-V3 §3.4; SGLang's
   *     {@code --ep-num-redundant-experts}): the pool holds E + R experts per layer over its ep
   *     ranks, and routing is taken uniform over the E + R slots (the balance the copies aim at)
   */
  public record Pool(int tp, int ep, int replicas, int batch, boolean twoBatchOverlap,
      int redundantExperts) {

    /** A pool without two-batch overlap or redundant experts. */
    public Pool(int tp, int ep, int replicas, int batch) {
      this(tp, ep, replicas, batch, false, 0);
    }

    public Pool {
      // The field names are those of the JSON request, as every message names them.
      Checks.positive("layout.disaggregated pool tp", tp);
      Checks.positive("layout.disaggregated pool ep", ep);
      Checks.positive("layout.disaggregated pool replicas", replicas);
      checkArgument(batch >= 0, "layout.disaggregated pool batch: must be >= 0, got %s", batch);
      checkArgument(redundantExperts >= 0, "layout.disaggregated pool redundantExperts: must be"
          + " >= 0, got %s", redundantExperts);
    }

    /** Devices of the pool: tp · replicas. */
    public int devices() {
      return tp * replicas;
    }

    /** Replicas that share one expert-parallel group: ep/tp when ep &gt; tp, else 1. */
    public int replicasPerGroup() {
      return Disaggregation.replicasPerGroup(tp, ep);
    }
  }

  /**
   * Replicas of tp devices that share one expert-parallel group of ep: ep/tp when the experts
   * span replicas (ep &gt; tp), else 1.
   */
  static int replicasPerGroup(int tp, int ep) {
    return ep > tp ? ep / tp : 1;
  }
}
