package io.hyperframes.inference;

import static com.google.common.base.Preconditions.checkArgument;

import io.hyperframes.hardware.Accelerator;
import io.hyperframes.hardware.Cluster;
import io.hyperframes.model.TransformerSpec;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Throughput at capacity of a continuous-batching server (docs/inference.md, "Capacity"):
 * requests always wait, so each replica runs as many as its KV cache and request limit hold,
 * within its per-iteration token budget, and the engine's scheduler decides what one iteration
 * computes ({@link ServingEngine}).
 *
 * <p>The model is a steady-state flow. A replica holds N requests: the fewest of the request
 * limit and the KV cache over what a running request keeps on average (its prompt, half its
 * output as it grows, half a block, and what the engine's admission reserves of the rest,
 * weighted by how long each length stays). Then per iteration, with mean lengths P (prompt
 * tokens to compute, after the prefix cache) and O (output):
 * <ul>
 *   <li>vLLM and TensorRT-LLM mix prefill and decode: x = min(N/(O − 1 + k), B/(P + O − 1))
 *       requests enter per iteration (k iterations to prefill a prompt beside the decodes, 1
 *       when it fits in the budget left; B the token budget), x·(O − 1) sequences decode and x
 *       prompts are prefilled, in one iteration of time τ
 *       ({@link InferenceEstimator#iterationSeconds}); requests complete at x/τ per second.
 *   <li>SGLang alternates: prefill iterations of b = B/P prompts and decode iterations of all N
 *       running requests, so a request costs τ_prefill/b plus (O − 1)·τ_decode/N of the
 *       replica's time.
 * </ul>
 * Little's law over the iterations (a request runs O − 1 + k of them) gives the rest. No
 * published run was used to choose or fit any of it.
 */
public final class Capacity {
  private Capacity() {}

  /** Fixed-point rounds for the prefill iterations k (the flow converges in a few). */
  private static final int ROUNDS = 32;

  /**
   * The replicas' throughput at capacity.
   *
   * @throws IllegalArgumentException when the request cannot be modelled at capacity (pipeline
   *     stages, speculative decoding), naming the field
   */
  public static CapacityEstimate estimate(InferenceEstimator estimator, InferenceRequest r,
      CapacityWorkload c) {
    checkArgument(estimator != null && r != null && c != null,
        "request: estimator, request and capacity workload must be given");
    checkArgument(r.pp() == 1, "layout.pp: capacity mode models replicas of one pipeline stage"
        + " (layout.pp 1), got %s", r.pp());
    checkArgument(r.workload().speculative() == null, "workload.speculative: not modelled in"
        + " capacity mode (use workload.mode fixed)");
    TransformerSpec m = r.model();
    int tp = r.tp();
    Cluster replica = r.cluster().withDevices(tp);
    Accelerator acc = replica.accelerator();
    InferenceWorkload w = r.workload();
    ServingEngine engine = c.engine();
    int budget = c.maxNumTokens();
    List<String> reasons = new ArrayList<>();

    // Memory: the engine's share, less the weights, the activations of a full iteration and the
    // logits of its sampled rows.
    InferenceEstimate one = estimator.estimate(m, replica,
        w.withBatchSize(1).withLengths(c.prompt().max(), c.output().max()), tp, r.ep(), 1, 1);
    double weights = one.weightsBytes();
    double activations = InferenceEstimator.prefillActivationBytes(m, w, tp, budget);
    double other = InferenceEstimator.RUNTIME_RESERVE_BYTES
        + 4.0 * Math.min(c.maxNumSeqs(), budget) * m.vocab() / tp;
    double kvBytes = engine.kvCacheBytes(acc.memoryBytes(), weights, activations, other,
        c.memoryFraction());
    double kvTokens = Math.max(0.0, kvBytes
        / InferenceEstimator.kvBytesPerTokenPerDevice(m, w, tp));
    double slot = slotTokens(m, c, w.blockTokens());
    double fit = Math.floor(kvTokens / slot);
    double n = Math.min(c.maxNumSeqs(), fit);
    if (kvBytes <= 0) {
      reasons.add(String.format(Locale.ROOT, "memory: %.1f GiB of weights and %.1f GiB of"
          + " activations leave no KV cache in %.0f %% of the %.1f GiB of %s",
          weights / (1L << 30), activations / (1L << 30), 100 * c.memoryFraction(),
          acc.memoryBytes() / (1L << 30), acc.id()));
    } else if (n < 1) {
      reasons.add(String.format(Locale.ROOT, "memory: the KV cache holds %.0f tokens, less than"
          + " one request keeps (%.0f on average)", kvTokens, slot));
    }
    if (!c.chunkedPrefill() && c.prompt().max() > budget) {
      reasons.add(String.format(Locale.ROOT, "workload.maxNumTokens: the longest prompt (%d"
          + " tokens) exceeds the budget of %d and %s does not chunk prefill by default",
          c.prompt().max(), budget, engine.id()));
    }
    double meanPrompt = c.prompt().mean();
    double meanOutput = c.output().mean();
    double fresh = c.prompt().meanOf(p -> p - w.cachedPromptTokens(p));
    if (!reasons.isEmpty()) {
      return new CapacityEstimate(false, reasons, engine, Math.max(0, n), "kv-cache", kvTokens,
          0, 0, 0, 0, 0, 0, 0, 0, 0, meanPrompt, meanOutput, c.maxNumSeqs(), budget,
          c.memoryFraction());
    }
    // Decoding sequences attend, on average over their decode steps weighted by how long each
    // length decodes, to their prompt and half their output.
    double context = meanPrompt + c.output().meanSquare() / (2 * meanOutput);
    double decodesPerRequest = meanOutput - 1;
    SteadyState st = engine.mixesPrefillAndDecode()
        ? mixed(estimator, r, replica, c, n, fresh, context, decodesPerRequest)
        : alternating(estimator, r, replica, c, n, fresh, context, decodesPerRequest);
    String limit = st.budgetBound() ? "max-num-tokens"
        : n == c.maxNumSeqs() ? "max-num-seqs" : "kv-cache";
    int replicas = r.replicas();
    double requests = st.perReplica() * replicas;
    int devices = tp * replicas;
    return new CapacityEstimate(true, List.of(), engine, n, limit, kvTokens, requests,
        requests * meanOutput, requests * meanOutput / devices, requests * fresh, st.iteration(),
        st.decodes(), st.prefillTokens(), st.tpot(), st.ttft() + one.requestSeconds(),
        meanPrompt, meanOutput, c.maxNumSeqs(), budget, c.memoryFraction());
  }

  /**
   * One replica in steady state: requests per second, the mean iteration, the decodes and
   * prefill tokens an iteration holds, TPOT and TTFT once admitted, and whether the token
   * budget (not the running requests) bounds the prefills an iteration takes.
   */
  private record SteadyState(double perReplica, double iteration, double decodes,
      double prefillTokens, double tpot, double ttft, boolean budgetBound) {}

  /**
   * An engine that runs prefill chunks and decodes in one iteration (vLLM, TensorRT-LLM): the
   * prefills an iteration admits and the iterations a prompt takes, solved together by
   * fixed-point rounds.
   */
  private static SteadyState mixed(InferenceEstimator estimator, InferenceRequest r,
      Cluster replica, CapacityWorkload c, double n, double fresh, double context,
      double decodesPerRequest) {
    int budget = c.maxNumTokens();
    double k = 1;
    double x = 0;
    boolean budgetBound = false;
    for (int i = 0; i < ROUNDS; i++) {
      double byRequests = n / (decodesPerRequest + k);
      double byBudget = budget / (fresh + decodesPerRequest);
      budgetBound = byBudget < byRequests;
      x = Math.min(byRequests, byBudget);
      double left = budget - x * decodesPerRequest;
      k = Math.max(1.0, fresh / Math.max(1.0, left));
    }
    double decodes = x * decodesPerRequest;
    double iteration = estimator.iterationSeconds(r.model(), replica, r.workload(), r.tp(),
        r.ep(), decodes, context, x, c.prompt());
    return new SteadyState(x / iteration, iteration, decodes, x * fresh, iteration,
        k * iteration, budgetBound);
  }

  /** An engine whose iterations are all prefill or all decode (SGLang): the two, interleaved. */
  private static SteadyState alternating(InferenceEstimator estimator, InferenceRequest r,
      Cluster replica, CapacityWorkload c, double n, double fresh, double context,
      double decodesPerRequest) {
    TransformerSpec m = r.model();
    InferenceWorkload w = r.workload();
    int tp = r.tp();
    int budget = c.maxNumTokens();
    double b = budget / fresh;
    double prefill = estimator.iterationSeconds(m, replica, w, tp, r.ep(), 0, context, b,
        c.prompt());
    double prefillPerRequest = prefill / b;
    double decode = decodesPerRequest > 0 ? estimator.iterationSeconds(m, replica, w, tp,
        r.ep(), n, context, 0, c.prompt()) : 0.0;
    double decodeIterations = decodesPerRequest / n;
    double iterations = decodeIterations + 1 / b;
    double perReplica = 1 / (decodeIterations * decode + prefillPerRequest);
    return new SteadyState(perReplica, 1 / (perReplica * iterations),
        decodesPerRequest / iterations, fresh / iterations,
        decodesPerRequest > 0 ? decode + prefillPerRequest / decodeIterations : 0.0,
        prefill * Math.max(1.0, fresh / budget), false);
  }

  /**
   * KV-cache positions a running request keeps on average over its time in the server, each
   * (prompt, output) pair weighted by its probability and by how long it runs (its output): its
   * prompt, half its output, half a block, and the engine's reserve of the rest of its output
   * ({@link ServingEngine#reservedOutputShare}); a full reservation is the whole sequence in
   * blocks. Windowed layers keep at most their window ({@link InferenceEstimator#keptTokens}).
   */
  static double slotTokens(TransformerSpec m, CapacityWorkload c, int blockTokens) {
    double share = c.engine().reservedOutputShare();
    double held = 0;
    double time = 0;
    for (LengthDistribution.Bin p : c.prompt().bins()) {
      for (LengthDistribution.Bin o : c.output().bins()) {
        double weight = p.weight() * o.weight() * o.tokens();
        double tokens;
        if (share >= 1) {
          long whole = (long) p.tokens() + o.tokens();
          tokens = (double) ((whole + blockTokens - 1) / blockTokens * blockTokens);
        } else {
          int reserved = c.engine() == ServingEngine.SGLANG
              ? Math.min(o.tokens(), ServingEngine.SGLANG_CLIP_RESERVED_TOKENS) : o.tokens();
          tokens = p.tokens() + o.tokens() / 2.0 + blockTokens / 2.0 + share * reserved / 2.0;
        }
        held += weight * InferenceEstimator.keptTokens(m, tokens, blockTokens);
        time += weight;
      }
    }
    return held / time;
  }
}
