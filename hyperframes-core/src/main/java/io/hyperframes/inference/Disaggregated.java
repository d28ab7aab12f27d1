package io.hyperframes.inference;

import static com.google.common.base.Preconditions.checkArgument;

import io.hyperframes.hardware.Cluster;
import io.hyperframes.interconnect.Collective;
import io.hyperframes.interconnect.CollectiveGroup;
import io.hyperframes.model.TransformerSpec;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Estimates disaggregated serving ({@link Disaggregation}; docs/inference.md, "Disaggregated
 * prefill and decode").
 *
 * <ul>
 *   <li><b>Prefill pool.</b> A replica runs {@code batch} prompts at once
 *       ({@link InferenceEstimator}'s prefill of that batch); with a TTFT target and no batch
 *       given, the batch is lowered until the unloaded TTFT meets it.
 *   <li><b>KV transfer.</b> Each request's KV cache (its prompt, every layer) goes from the
 *       prefill replica to a decode replica, each of the replica's tp devices sending its share
 *       over its own link (the inter-node fabric when the pools are not all in one node). It is
 *       sent layer by layer as the prefill computes them (Splitwise, Patel et al. 2024, arXiv
 *       2311.18677, §IV-C; DistServe, Zhong et al. 2024, §4), so only the last layer's share is
 *       exposed, or the excess of a transfer longer than the prefill. A replica takes its next
 *       batch when both are done.
 *   <li><b>Decode pool.</b> A replica generates for {@code batch} sequences at once at the
 *       estimator's decode step; with no batch given, the most whose KV cache fits, lowered to
 *       meet a TPOT target.
 *   <li><b>The pair.</b> It sustains the lower of the two pools' request rates. The balanced
 *       split is the one, over the same devices and in whole expert-parallel groups of each pool,
 *       that sustains the most.
 * </ul>
 */
final class Disaggregated {

  private Disaggregated() {}

  /** The estimate of {@code r}, whose pools add up to its cluster ({@link InferenceRequest}). */
  static DisaggregatedEstimate estimate(InferenceEstimator estimator, InferenceRequest r) {
    Disaggregation d = r.disaggregated();
    checkArgument(d != null, "layout.disaggregated: must be given");
    TransformerSpec m = r.model();
    Cluster cluster = r.cluster();
    InferenceWorkload w = r.workload();
    Disaggregation.Pool p = d.prefill();
    Disaggregation.Pool q = d.decode();
    List<String> reasons = new ArrayList<>();
    Cluster prefillCluster = cluster.withDevices(p.devices());
    Cluster decodeCluster = cluster.withDevices(q.devices());
    double nodes = (double) cluster.devicesPerNode();

    // Prefill pool.
    int batch = p.batch() > 0 ? p.batch() : w.batchSize();
    String prefillLimit = p.batch() > 0 ? "layout" : "workload";
    Prefill pre = prefill(estimator, m, prefillCluster, cluster, w, p, batch);
    if (p.batch() == 0 && w.ttftSloSeconds() > 0 && pre.ttft() > w.ttftSloSeconds()) {
      prefillLimit = "ttft";
      pre = largest(batch - 1, b -> prefill(estimator, m, prefillCluster, cluster, w, p, b),
          t -> t.ttft() <= w.ttftSloSeconds());
      if (pre.ttft() > w.ttftSloSeconds()) {
        reasons.add(String.format(Locale.ROOT, "ttft: %.3g s with one prompt per prefill"
            + " replica exceeds the %.3g s target", pre.ttft(), w.ttftSloSeconds()));
      }
    }
    InferenceEstimate pe = pre.estimate();
    if (!pe.feasible()) {
      for (String why : pe.reasons()) {
        reasons.add("prefill pool: " + why);
      }
    }
    double fresh = w.promptTokens() - w.cachedPromptTokens();
    double prefillRequests = p.replicas() * (double) pre.batch() / pre.period();
    double inputRate = prefillRequests * fresh;
    DisaggregatedEstimate.PrefillPool prefillPool = new DisaggregatedEstimate.PrefillPool(pe,
        pre.batch(), prefillLimit, pre.period(), inputRate, inputRate / p.devices(),
        inputRate / p.devices() * nodes, prefillRequests);

    // Decode pool.
    long maxBatch = decode(estimator, m, decodeCluster, w, q, 1).maxBatchSize();
    int decodeBatch;
    String decodeLimit;
    if (q.batch() > 0) {
      decodeBatch = q.batch();
      decodeLimit = "layout";
    } else {
      decodeBatch = (int) Math.max(1, Math.min(Integer.MAX_VALUE, maxBatch));
      decodeLimit = "memory";
      if (maxBatch < 1) {
        reasons.add("decode pool: not one sequence's KV cache fits beside the weights");
      }
    }
    InferenceEstimate de = decode(estimator, m, decodeCluster, w, q, decodeBatch);
    if (q.batch() == 0 && w.tpotSloSeconds() > 0 && de.tpotSeconds() > w.tpotSloSeconds()) {
      decodeLimit = "tpot";
      de = largest(decodeBatch - 1, b -> decode(estimator, m, decodeCluster, w, q, b),
          t -> t.tpotSeconds() <= w.tpotSloSeconds());
      decodeBatch = de.batchSize();
      if (de.tpotSeconds() > w.tpotSloSeconds()) {
        reasons.add(String.format(Locale.ROOT, "tpot: %.3g s with one sequence per decode"
            + " replica exceeds the %.3g s target", de.tpotSeconds(), w.tpotSloSeconds()));
      }
    }
    if (!de.feasible()) {
      for (String why : de.reasons()) {
        reasons.add("decode pool: " + why);
      }
    }
    double tpot = de.tpotSeconds();
    double outputRate = q.replicas() * (double) decodeBatch / tpot;
    double decodeRequests = outputRate / w.outputTokens();
    DisaggregatedEstimate.DecodePool decodePool = new DisaggregatedEstimate.DecodePool(de,
        decodeBatch, decodeLimit, maxBatch, tpot, outputRate, outputRate / q.devices(),
        outputRate / q.devices() * nodes, decodeRequests);

    // The pair, and the balanced split of the same devices.
    double rate = Math.min(prefillRequests, decodeRequests);
    String limitedBy = prefillRequests <= decodeRequests ? "prefill" : "decode";
    DisaggregatedEstimate.Balanced balanced = balance(p, q, prefillRequests, decodeRequests,
        cluster.devices());
    double output = rate * w.outputTokens();
    return new DisaggregatedEstimate(d, reasons.isEmpty(), reasons, prefillPool, decodePool,
        pre.kvBytesPerRequest(), pre.transfer(), pre.exposed(), pre.ttft(), rate, output,
        output / cluster.devices(), limitedBy, balanced);
  }

  /**
   * The estimate at the largest batch in [1, {@code most}] that {@code meets} accepts, by
   * bisection (a larger batch never meets a target a smaller one misses: its prefill and its
   * decode step are no shorter); the estimate at batch 1 when none does.
   */
  static <T> T largest(int most, java.util.function.IntFunction<T> at,
      java.util.function.Predicate<T> meets) {
    int lo = 1;
    int hi = most;
    T best = at.apply(1);
    while (lo <= hi) {
      int mid = (lo + hi) >>> 1;
      T t = at.apply(mid);
      if (meets.test(t)) {
        best = t;
        lo = mid + 1;
      } else {
        hi = mid - 1;
      }
    }
    return best;
  }

  /** A prefill replica at one batch: the estimate, the transfer and the times they give. */
  record Prefill(InferenceEstimate estimate, int batch, double kvBytesPerRequest,
      double transfer, double exposed, double ttft, double period) {}

  static Prefill prefill(InferenceEstimator estimator, TransformerSpec m,
      Cluster pool, Cluster whole, InferenceWorkload w, Disaggregation.Pool p, int batch) {
    return sent(estimator, prefillEstimate(estimator, m, pool, w, p, batch), m, whole, w, p,
        batch);
  }

  /** A prefill replica's estimate at one batch, before its KV cache is sent. */
  static InferenceEstimate prefillEstimate(InferenceEstimator estimator, TransformerSpec m,
      Cluster pool, InferenceWorkload w, Disaggregation.Pool p, int batch) {
    // The prefill pool keeps a prompt's KV cache only until it is sent: one output token.
    return estimator.estimate(withSlots(m, p), pool,
        w.withBatchSize(batch).withLengths(w.promptTokens(), 1), p.tp(), p.ep(), 1,
        p.replicas(), p.twoBatchOverlap());
  }

  /** A prefill replica at one batch, its estimate {@code e}, with the KV transfer over whole. */
  static Prefill sent(InferenceEstimator estimator, InferenceEstimate e, TransformerSpec m,
      Cluster whole, InferenceWorkload w, Disaggregation.Pool p, int batch) {
    double perRequest = e.kvCacheBytesPerToken() * w.promptTokens();
    // Each of the replica's tp devices sends its share over its own link; the pools are on
    // different nodes unless the whole cluster is one node.
    boolean oneNode = whole.devices() <= whole.devicesPerNode();
    double transfer = estimator.interconnect().time(whole, Collective.POINT_TO_POINT,
        batch * perRequest / p.tp(), new CollectiveGroup(2, oneNode ? 2 : 1)).seconds();
    double compute = e.prefillSeconds();
    double layers = m.layers();
    double exposed = Math.max(transfer / layers, transfer - compute * (layers - 1) / layers);
    double ttft = e.requestSeconds() + compute + exposed;
    double period = Math.max(compute, transfer);
    return new Prefill(e, batch, perRequest, transfer, exposed, ttft, period);
  }

  /**
   * A decode replica at one batch. The pool runs no prefill, so its memory is the weights, the
   * batch's KV cache and the runtime reserve with the logits buffer, without the prefill working
   * set {@link InferenceEstimator} counts; the most sequences that fit follow from those.
   */
  static InferenceEstimate decode(InferenceEstimator estimator, TransformerSpec m,
      Cluster pool, InferenceWorkload w, Disaggregation.Pool q, int batch) {
    InferenceEstimate e = estimator.estimate(withSlots(m, q), pool, w.withBatchSize(batch),
        q.tp(), q.ep(), 1, q.replicas(), q.twoBatchOverlap());
    double capacity = pool.accelerator().memoryBytes();
    double logitsPerSequence = 4.0 * m.vocab() / q.tp();
    double perSequence = e.kvCacheBytes() / batch + logitsPerSequence;
    double free = capacity - e.weightsBytes() - InferenceEstimator.RUNTIME_RESERVE_BYTES;
    long most = free > 0 ? (long) Math.floor(free / perSequence) : 0;
    double total = e.weightsBytes() + e.kvCacheBytes() + e.otherBytes();
    List<String> why = new ArrayList<>();
    if (total > capacity) {
      why.add(String.format(Locale.ROOT, "memory: %.1f GiB per device exceeds the %.1f GiB of %s"
          + " (weights %.1f GiB, KV cache %.1f GiB for %d sequences of %d tokens)",
          total / (1L << 30), capacity / (1L << 30), pool.accelerator().id(),
          e.weightsBytes() / (1L << 30), e.kvCacheBytes() / (1L << 30), batch,
          w.promptTokens() + w.outputTokens()));
    }
    return e.decodeOnly(most, why.isEmpty(), why);
  }

  /**
   * The model as a pool with redundant experts holds it: E + R expert slots per MoE layer, the
   * tokens routed uniformly over them (the balance the copies aim at); the model itself without
   * redundant experts.
   */
  static TransformerSpec withSlots(TransformerSpec m, Disaggregation.Pool pool) {
    return withSlots(m, pool.redundantExperts(), "layout.disaggregated pool redundantExperts");
  }

  /** {@link #withSlots(TransformerSpec, Disaggregation.Pool)} with {@code redundant} copies. */
  static TransformerSpec withSlots(TransformerSpec m, int redundant) {
    return withSlots(m, redundant, "redundantExperts");
  }

  /** As the others, a bad value named as {@code field}. */
  static TransformerSpec withSlots(TransformerSpec m, int redundant, String field) {
    if (redundant == 0) {
      return m;
    }
    checkArgument(m.isMoe() && m.moe().routed(), "%s: %s needs a mixture of experts with routed"
        + " experts (model.moe)", field, redundant);
    io.hyperframes.model.MoeSpec moe = m.moe();
    int slots = moe.experts() + redundant;
    checkArgument(moe.groups() <= 1 || slots % moe.groups() == 0, "%s: %s experts and %s copies"
        + " do not divide into the router's %s groups", field, moe.experts(), redundant,
        moe.groups());
    io.hyperframes.model.MoeSpec withCopies = new io.hyperframes.model.MoeSpec(slots,
        moe.topK(), moe.expertFfnHidden(), moe.sharedExperts(), moe.sharedExpertFfnHidden(),
        moe.firstDenseLayers(), moe.layerInterval(), moe.capacityFactor(), moe.groups(),
        moe.groupTopK());
    return new TransformerSpec(m.name(), m.layers(), m.hidden(), m.heads(), m.kvHeads(),
        m.ffnHidden(), m.gatedMlp(), m.vocab(), m.seqLen(), m.tiedEmbeddings(), m.headDim(),
        withCopies, m.mla(), m.slidingWindow(), m.mtpLayers());
  }

  /**
   * The split of {@code devices} into whole expert-parallel groups of each pool (a group:
   * tp · max(1, ep/tp) devices, sustaining the pool's rate per group) that sustains the most
   * requests per second; ties go to fewer devices.
   */
  static DisaggregatedEstimate.Balanced balance(Disaggregation.Pool p, Disaggregation.Pool q,
      double prefillRequests, double decodeRequests, int devices) {
    int prefillGroup = p.tp() * p.replicasPerGroup();
    int decodeGroup = q.tp() * q.replicasPerGroup();
    double perPrefillGroup = prefillRequests / (p.replicas() / p.replicasPerGroup());
    double perDecodeGroup = decodeRequests / (q.replicas() / q.replicasPerGroup());
    int bestP = p.replicas() / p.replicasPerGroup();
    int bestQ = q.replicas() / q.replicasPerGroup();
    double best = Math.min(bestP * perPrefillGroup, bestQ * perDecodeGroup);
    int bestDevices = bestP * prefillGroup + bestQ * decodeGroup;
    for (int a = 1; (long) a * prefillGroup + decodeGroup <= devices; a++) {
      int b = (devices - a * prefillGroup) / decodeGroup;
      double rate = Math.min(a * perPrefillGroup, b * perDecodeGroup);
      int used = a * prefillGroup + b * decodeGroup;
      if (rate > best || (rate == best && used < bestDevices)) {
        best = rate;
        bestP = a;
        bestQ = b;
        bestDevices = used;
      }
    }
    return new DisaggregatedEstimate.Balanced(bestP * p.replicasPerGroup(),
        bestQ * q.replicasPerGroup(), best, bestDevices);
  }
}
