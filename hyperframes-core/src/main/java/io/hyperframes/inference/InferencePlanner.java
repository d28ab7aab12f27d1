package io.hyperframes.inference;

import static com.google.common.base.Preconditions.checkArgument;

import com.google.common.collect.ImmutableList;
import io.hyperframes.diagnose.Finding;
import io.hyperframes.diagnose.Severity;
import io.hyperframes.hardware.Cluster;
import io.hyperframes.hardware.StepInterval;
import io.hyperframes.model.TransformerSpec;
import io.hyperframes.precision.NumberFormat;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Searches serving configurations — tensor parallelism, expert parallelism (for a mixture of
 * experts: none, the experts split over all tp ranks as vLLM's {@code --enable-expert-parallel}
 * does, or spread over an expert-parallel group of replicas, {@link #spanningReplicas}), weight
 * format, KV-cache format and batch limit — for the fewest devices (replicas × tp)
 * that meet a latency SLO at a request rate, then the lowest cost per million generated tokens,
 * then the lowest simulated p99 latency; and, over the same replica configurations, the
 * disaggregated prefill and decode pools with the fewest devices ({@link DisaggregatedSearch}).
 */
public final class InferencePlanner {
  private InferencePlanner() {}

  /** Requests simulated per candidate during the search (the final answer uses more). */
  static final int SEARCH_REQUESTS = 5_000;
  /** Batch limits a replica is simulated with, widest first ({@link #batchLimits}). */
  static final int[] BATCH_LIMITS = {256, 128, 64, 32, 16};
  /** Most devices a configuration may take. */
  static final int MAX_DEVICES = 4096;
  /** Replica counts tried above the fewest with the capacity. */
  static final int TRIES = 64;
  /**
   * The widest expert-parallel group the search tries (aggregated and disaggregated), a bound
   * of the search (not fitted): one routed expert per device for DeepSeek-V3's 256; the widest deployment recorded
   * in docs/validation.md ("Disaggregated serving") is EP128.
   */
  static final int MAX_SPANNING_EP = 256;
  /** The most nodes an expert-parallel group of the search spans (a bound, not fitted). */
  static final int MAX_SPANNING_NODES = 32;
  /** Batches of the throughput-interactivity front (the concurrencies benchmarks sweep). */
  static final int[] FRONT_BATCHES = {1, 2, 4, 8, 16, 32, 64, 128, 256};

  /**
   * One serving configuration that meets the SLO.
   *
   * @param tp tensor parallelism of a replica
   * @param ep expert parallelism: 1, or tp (every rank of a replica holds whole experts), or a
   *     multiple of tp (the experts, whole, over the ep devices of ep/tp replicas that run
   *     attention data-parallel; {@code replicas} is then a multiple of ep/tp)
   * @param replicas replicas
   * @param weights weight format
   * @param kvCache KV-cache format
   * @param batchLimit most sequences a replica batches
   * @param devices tp × replicas
   * @param usdPerMillionTokens device-hour price × devices per million generated tokens
   * @param load simulated percentiles at the per-replica rate
   * @param twoBatchOverlap whether each step runs two halves of its batch, one's expert exchange
   *     behind the other's computation (only where ep &gt; tp)
   * @param redundantExperts copies of routed experts the group holds beside them, so that its
   *     ep devices hold equal shares of the expert slots (only where ep &gt; tp and ep does not
   *     divide the routed experts; else 0)
   * @param pp pipeline stages of a replica, each of tp devices on a node of its own (1 unless no
   *     replica within a node holds the model); {@code batchLimit} is then per batch in flight,
   *     one a stage, and {@code devices} tp × pp × replicas
   */
  public record Config(int tp, int ep, int replicas, NumberFormat weights, NumberFormat kvCache,
      int batchLimit, int devices, double usdPerMillionTokens, ServingLoad.Percentiles load,
      boolean twoBatchOverlap, int redundantExperts, int pp) {

    public Config {
      checkArgument(pp >= 1, "pp: must be >= 1, got %s", pp);
    }

    /** A configuration of replicas within a node, or of expert-parallel groups (pp 1). */
    public Config(int tp, int ep, int replicas, NumberFormat weights, NumberFormat kvCache,
        int batchLimit, int devices, double usdPerMillionTokens, ServingLoad.Percentiles load,
        boolean twoBatchOverlap, int redundantExperts) {
      this(tp, ep, replicas, weights, kvCache, batchLimit, devices, usdPerMillionTokens, load,
          twoBatchOverlap, redundantExperts, 1);
    }

    /** Replicas that share one expert-parallel group: ep/tp when ep &gt; tp, else 1. */
    public int replicasPerGroup() {
      return Disaggregation.replicasPerGroup(tp, ep);
    }
  }

  /**
   * One point of the throughput-interactivity trade-off: a replica configuration at a fixed
   * batch, unloaded (the batch's sequences in flight together, no queueing), as serving
   * benchmarks sweep concurrency. Where the experts span replicas (ep &gt; tp), the point is
   * one expert-parallel group of ep/tp replicas, each at the batch.
   *
   * @param tp tensor parallelism of a replica
   * @param ep expert parallelism: 1 or tp (within a replica), or a multiple of tp (the experts
   *     over the ep devices of ep/tp replicas that run attention data-parallel)
   * @param weights weight format
   * @param kvCache KV-cache format
   * @param batch sequences in flight in a replica
   * @param tokensPerSecondPerGpu generated tokens per second per GPU, prefill included
   *     ({@link InferenceEstimate#outputTokensPerSecondPerDevice})
   * @param tokensPerSecondPerUser generated tokens per second one sequence sees while it
   *     decodes (1 / TPOT)
   * @param ttftSeconds time to first token: the batch's prefill and the request path
   * @param tpotSeconds time per output token
   * @param meetsLatencyTargets whether this TTFT and TPOT meet {@code workload.latencySlo} (a
   *     target not given counts as met; queueing at the request rate is not in these figures)
   * @param twoBatchOverlap whether each step runs two halves of its batch, one's expert exchange
   *     behind the other's computation (only where ep &gt; tp)
   * @param redundantExperts copies of routed experts the group holds (as
   *     {@link Config#redundantExperts})
   * @param pp pipeline stages of the replica ({@link Config#pp}); {@code batch} is then per
   *     batch in flight, pp of them, and the tokens per GPU count all pp
   */
  public record FrontPoint(int tp, int ep, NumberFormat weights, NumberFormat kvCache, int batch,
      double tokensPerSecondPerGpu, double tokensPerSecondPerUser, double ttftSeconds,
      double tpotSeconds, boolean meetsLatencyTargets, boolean twoBatchOverlap,
      int redundantExperts, int pp) {

    /** A point of a replica within a node, or of an expert-parallel group (pp 1). */
    public FrontPoint(int tp, int ep, NumberFormat weights, NumberFormat kvCache, int batch,
        double tokensPerSecondPerGpu, double tokensPerSecondPerUser, double ttftSeconds,
        double tpotSeconds, boolean meetsLatencyTargets, boolean twoBatchOverlap,
        int redundantExperts) {
      this(tp, ep, weights, kvCache, batch, tokensPerSecondPerGpu, tokensPerSecondPerUser,
          ttftSeconds, tpotSeconds, meetsLatencyTargets, twoBatchOverlap, redundantExperts, 1);
    }

    /** Replicas that share one expert-parallel group: ep/tp when ep &gt; tp, else 1. */
    public int replicasPerGroup() {
      return Disaggregation.replicasPerGroup(tp, ep);
    }
  }

  /**
   * One pool of a disaggregated configuration.
   *
   * @param tp tensor parallelism of a replica
   * @param ep expert parallelism: 1 or tp (a replica's experts over its own ranks), or a
   *     multiple of tp (the experts, whole, over the ep devices of ep/tp replicas that run
   *     attention data-parallel; {@code replicas} is then a multiple of ep/tp)
   * @param replicas replicas in the pool
   * @param batchLimit prompts a prefill replica computes together, or sequences a decode replica
   *     decodes together, at most
   * @param devices tp × replicas
   * @param twoBatchOverlap whether each step runs two halves of its batch, one's expert exchange
   *     behind the other's computation (only where ep &gt; tp)
   * @param redundantExperts copies of routed experts each expert-parallel group holds (as
   *     {@link Config#redundantExperts})
   */
  public record PoolConfig(int tp, int ep, int replicas, int batchLimit, int devices,
      boolean twoBatchOverlap, int redundantExperts) {

    /** Replicas that share one expert-parallel group: ep/tp when ep &gt; tp, else 1. */
    public int replicasPerGroup() {
      return Disaggregation.replicasPerGroup(tp, ep);
    }
  }

  /**
   * The disaggregated configuration that meets the SLO with the fewest devices: a prefill pool
   * and a decode pool, each request's KV cache sent from the first to the second
   * (docs/inference.md, "Serving plans").
   *
   * @param prefill the prefill pool
   * @param decode the decode pool
   * @param weights weight format of both pools
   * @param kvCache KV-cache format of both pools
   * @param devices devices of both pools
   * @param usdPerMillionTokens device-hour price × devices per million generated tokens
   * @param ttftSeconds simulated time to first token at {@code workload.latencySlo.percentile}
   * @param tpotSeconds time per output token of a full decode batch
   * @param oneNode whether both pools fit in one node (the KV cache over NVLink, else over the
   *     inter-node fabric)
   */
  public record DisaggregatedConfig(PoolConfig prefill, PoolConfig decode, NumberFormat weights,
      NumberFormat kvCache, int devices, double usdPerMillionTokens, double ttftSeconds,
      double tpotSeconds, boolean oneNode) {}

  /**
   * The plan: best aggregated configuration (null when none meets the SLO), alternatives (the
   * next configurations, one per deployment: tp, ep, replicas, formats and overlap, each at its
   * best batch limit), findings, the front of tokens per second per GPU against tokens per second per user over
   * every configuration searched (most interactive first), the best disaggregated
   * configuration (null when none meets the SLO), and the band of the front's throughputs (the
   * accelerator's {@link StepInterval#SERVING} interval: published runs' measured / predicted
   * time per token; {@link StepInterval#NONE} where the catalog has none).
   */
  public record ServingPlan(Config best, List<Config> alternatives, List<Finding> findings,
      int candidatesEvaluated, List<FrontPoint> pareto, DisaggregatedConfig disaggregated,
      StepInterval interval) {
    public ServingPlan {
      alternatives = ImmutableList.copyOf(alternatives);
      findings = ImmutableList.copyOf(findings);
      pareto = ImmutableList.copyOf(pareto);
      interval = interval == null ? StepInterval.NONE : interval;
    }

    /** The lower end of {@code tokensPerSecond}'s interval: the throughput at the band's top. */
    public double low(double tokensPerSecond) {
      return tokensPerSecond / interval.high();
    }

    /** The upper end of {@code tokensPerSecond}'s interval: the throughput at the band's bottom. */
    public double high(double tokensPerSecond) {
      return tokensPerSecond / interval.low();
    }

    /**
     * What serves with the fewest devices: {@code "aggregated"} (also on a tie: one kind of
     * server is simpler to run), {@code "disaggregated"}, or null when nothing meets the SLO.
     */
    public String choice() {
      if (best == null) {
        return disaggregated == null ? null : "disaggregated";
      }
      return disaggregated != null && disaggregated.devices() < best.devices() ? "disaggregated"
          : "aggregated";
    }
  }

  /**
   * A replica configuration the search tries: its estimate at batch 1 is feasible. Where ep &gt;
   * tp the replica is one of an expert-parallel group of ep/tp ({@link #group}), {@code cluster}
   * is the group's devices and {@code one} a replica's estimate in it; {@code model} is the
   * model as the group holds it (with {@code redundantExperts} copies of routed experts, where
   * ep does not divide them).
   */
  record Replica(int tp, int ep, NumberFormat weights, NumberFormat kvCache,
      Cluster cluster, InferenceWorkload base, InferenceEstimate one, boolean twoBatchOverlap,
      int redundantExperts, TransformerSpec model, int pp) {

    /** A replica of one pipeline stage. */
    Replica(int tp, int ep, NumberFormat weights, NumberFormat kvCache,
        Cluster cluster, InferenceWorkload base, InferenceEstimate one, boolean twoBatchOverlap,
        int redundantExperts, TransformerSpec model) {
      this(tp, ep, weights, kvCache, cluster, base, one, twoBatchOverlap, redundantExperts, model,
          1);
    }

    /** Replicas of one expert-parallel group: ep/tp where ep &gt; tp, else 1. */
    int group() {
      return Disaggregation.replicasPerGroup(tp, ep);
    }

    /**
     * The servers the queue counts together: an expert-parallel group's replicas, or the pp
     * batches a pipeline keeps in flight (each a server of tp devices' share).
     */
    int servers() {
      return pp > 1 ? pp : group();
    }
  }

  /**
   * Plans serving {@code model} at the workload's rate and SLO.
   *
   * @param weightFormats weight formats to consider (the workload's when empty)
   * @param kvFormats KV-cache formats to consider (the workload's when empty)
   * @param usdPerDeviceHour device price for the cost per million tokens (0 = unknown)
   */
  public static ServingPlan plan(TransformerSpec model, Cluster cluster, InferenceWorkload w,
      List<NumberFormat> weightFormats, List<NumberFormat> kvFormats, double usdPerDeviceHour,
      int alternatives) {
    return plan(model, cluster, w, weightFormats, kvFormats, usdPerDeviceHour, alternatives,
        InferenceEstimator.analytical());
  }

  /** As the other {@code plan}, with a user's estimator (models) for every configuration. */
  public static ServingPlan plan(TransformerSpec model, Cluster cluster, InferenceWorkload w,
      List<NumberFormat> weightFormats, List<NumberFormat> kvFormats, double usdPerDeviceHour,
      int alternatives, InferenceEstimator estimator) {
    checkArgument(estimator != null, "estimator: must be given");
    checkArgument(w.arrivalRatePerSecond() > 0, "workload.arrivalRatePerSecond: a serving plan"
        + " needs a request rate");
    checkArgument(w.ttftSloSeconds() > 0 || w.tpotSloSeconds() > 0,
        "workload.latencySlo: a serving plan needs a TTFT or TPOT target");
    List<NumberFormat> weights = weightFormats.isEmpty() ? List.of(w.weights()) : weightFormats;
    List<NumberFormat> kvs = kvFormats.isEmpty() ? List.of(w.kvCache()) : kvFormats;
    List<Replica> replicas = replicas(model, cluster, w, weights, kvs, estimator);
    List<Replica> pools = new ArrayList<>(replicas);
    pools.addAll(spanningReplicas(model, cluster, w, weights, kvs, estimator));
    // Only where nothing within a node (or an expert-parallel group) holds the model: replicas
    // of pipeline stages over nodes.
    List<Replica> tried = pools.isEmpty()
        ? PipelineReplicas.search(model, cluster, w, weights, kvs, estimator) : pools;
    List<Config> found = new ArrayList<>();
    int evaluated = 0;
    // Ranked by devices first: a configuration that needs more devices than the last one the
    // plan lists, among those already found, cannot be listed, and is not simulated.
    int listedCount = Math.max(1, alternatives + 1);
    for (Replica rc : tried) {
      int tp = rc.tp();
      int group = rc.servers();
      if (group > 1 && !w.meetsTargets(rc.one().ttftSeconds(), rc.one().tpotSeconds())) {
        // One sequence alone misses the targets: no load of more replicas meets them.
        continue;
      }
      if ((long) group * tp > devicesOfLast(found, listedCount)) {
        continue;
      }
      ServingLoad widest = null;
      int[] limits = batchLimits(w);
      for (int limit : limits) {
        // A pipeline's pp batches in flight share its KV-cache memory.
        int cap = (int) Math.min(limit, rc.one().maxBatchSize() / rc.pp());
        if (cap < 1 || (limit != limits[0] && cap < limit)) {
          continue;
        }
        // The limits are tried widest first: each load is a prefix of the widest one's times.
        widest = widest != null ? widest : ServingLoads.load(estimator, rc.model(), rc.cluster(),
            rc.base(), tp, rc.ep(), rc.pp(), cap, rc.twoBatchOverlap());
        ServingLoad load = widest.limitedTo(cap);
        // Replicas come in whole expert-parallel groups; each replica of a group takes its own
        // requests (attention data-parallel) and is queued as a server of its own.
        int count = (int) wholeGroups(group, Math.max(1, (long) Math.ceil(
            w.arrivalRatePerSecond() / load.capacityPerSecond())));
        int listed = devicesOfLast(found, listedCount);
        for (int tries = 0; tries < TRIES && (long) count * tp <= MAX_DEVICES
            && (long) count * tp <= listed; tries++, count += group) {
          evaluated++;
          double rate = w.arrivalRatePerSecond() / count;
          if (rate >= load.capacityPerSecond()) {
            continue;
          }
          // The simulation, not the analytical model: a search evaluates hundreds of
          // configurations and the analytical model costs 0.1-0.9 s each (docs/inference.md).
          ServingLoad.Percentiles q = load.simulate(rate, SEARCH_REQUESTS, Serving.SEED);
          if (Serving.meets(q, w)) {
            // A server is a replica, or one of a pipeline's pp batches in flight.
            int devices = count * tp;
            found.add(new Config(tp, rc.ep(), count / rc.pp(), rc.weights(), rc.kvCache(), cap,
                devices, usdPerMillionTokens(usdPerDeviceHour, devices, w), q,
                rc.twoBatchOverlap(), rc.redundantExperts(), rc.pp()));
            break;
          }
        }
      }
    }
    List<FrontPoint> front = paretoFront(frontPoints(w, tried, estimator));
    StepInterval interval = cluster.accelerator().interval(StepInterval.SERVING);
    DisaggregatedConfig apart = DisaggregatedSearch.best(model, cluster, w, pools,
        usdPerDeviceHour, estimator);
    // Fewest devices, then the cheapest, then (at equal devices and price) experts within each
    // replica (no exchange between replicas to run), then the lowest p99.
    found.sort(Comparator.comparingInt(Config::devices)
        .thenComparingDouble(Config::usdPerMillionTokens)
        .thenComparing((Config c) -> c.replicasPerGroup() > 1)
        .thenComparingDouble(c -> c.load().p99()));
    // One line per deployment: of the batch limits that meet the SLO with the same replicas, the
    // one ranked first (the others launch the same engines with a smaller cap).
    found = distinctDeployments(found);
    List<Finding> findings = new ArrayList<>();
    Config best = found.isEmpty() ? null : found.get(0);
    Finding noReplica = tried.isEmpty() ? PipelineReplicas.noneFits(model, cluster, w, weights,
        kvs, estimator) : null;
    if (best == null && apart == null && noReplica != null) {
      findings.add(noReplica);
      return new ServingPlan(null, List.of(), findings, evaluated, front, null, interval);
    }
    if (best == null && apart == null) {
      findings.add(new Finding("slo-unreachable", Severity.CRITICAL,
          "no configuration up to 4096 devices meets the SLO", String.format(Locale.ROOT,
              "TTFT ≤ %.3g s and TPOT ≤ %.3g s at p%.0f, %.3g requests/s",
              w.ttftSloSeconds(), w.tpotSloSeconds(), w.sloPercentile(),
              w.arrivalRatePerSecond()),
          "relax the SLO, shorten prompts, or use a faster accelerator"));
      return new ServingPlan(null, List.of(), findings, evaluated, front, null, interval);
    }
    if (apart != null && (best == null || apart.devices() < best.devices())) {
      findings.add(new Finding("disaggregate", Severity.INFO, best == null
          ? "only disaggregated prefill and decode meet the SLO"
          : "disaggregated prefill and decode need fewer devices", String.format(Locale.ROOT,
              "%d devices disaggregated%s", apart.devices(), best == null ? ""
                  : String.format(Locale.ROOT, " against %d aggregated", best.devices())),
          "serve prompts and tokens on separate pools (layout.disaggregated), the KV cache"
              + " sent between them"));
    }
    NumberFormat served = best != null ? best.weights() : apart.weights();
    if (!served.isFloating() || served.bytes() < 2) {
      findings.add(new Finding("quantised", Severity.INFO, "the plan serves " + served.id()
          + " weights", "fewer bytes per weight read at every decode step",
          "check the model's accuracy with this quantisation before deploying"));
    }
    return new ServingPlan(best, best == null ? List.of()
        : found.subList(1, Math.min(found.size(), 1 + alternatives)), findings, evaluated, front,
        apart, interval);
  }

  /**
   * The batch limits tried, widest first: {@link #BATCH_LIMITS}, or with
   * {@code workload.maxNumSeqs} that limit and the narrower ones below it.
   */
  static int[] batchLimits(InferenceWorkload w) {
    if (w.maxNumSeqs() == 0) {
      return BATCH_LIMITS;
    }
    return java.util.stream.IntStream.concat(java.util.stream.IntStream.of(w.maxNumSeqs()),
        java.util.Arrays.stream(BATCH_LIMITS).filter(l -> l < w.maxNumSeqs())).toArray();
  }

  /**
   * The devices of the {@code listed}-th configuration of {@code found} by devices, the most a
   * configuration may need and still be listed; {@link Integer#MAX_VALUE} while fewer are found.
   */
  private static int devicesOfLast(List<Config> found, int listed) {
    List<Config> distinct = distinctDeployments(found);
    if (distinct.size() < listed) {
      return Integer.MAX_VALUE;
    }
    return distinct.stream().mapToInt(Config::devices).sorted().skip(listed - 1L).findFirst()
        .orElse(Integer.MAX_VALUE);
  }

  /**
   * The first configuration of each deployment in {@code configs} (tp, ep, pp, replicas,
   * formats and overlap; the batch limit aside), in their order.
   */
  static List<Config> distinctDeployments(List<Config> configs) {
    Map<List<Object>, Config> first = new LinkedHashMap<>();
    for (Config c : configs) {
      first.putIfAbsent(List.of(c.tp(), c.ep(), c.pp(), c.replicas(), c.weights(),
          c.kvCache(), c.twoBatchOverlap(), c.redundantExperts()), c);
    }
    return new ArrayList<>(first.values());
  }

  /** {@code replicas} rounded up to whole expert-parallel groups of {@code group} replicas. */
  static long wholeGroups(int group, long replicas) {
    return (replicas + group - 1) / group * group;
  }

  /** Device-hour price × devices per million tokens generated at the workload's rate. */
  static double usdPerMillionTokens(double usdPerDeviceHour, int devices, InferenceWorkload w) {
    double tokensPerHour = w.arrivalRatePerSecond() * w.outputTokens() * 3600;
    return usdPerDeviceHour * devices / tokensPerHour * 1e6;
  }

  /**
   * The replica configurations searched, in order: tp up to a node (dividing the heads), weight
   * format (its compute supported), KV-cache format, expert split; those that fit one sequence.
   */
  private static List<Replica> replicas(TransformerSpec model, Cluster cluster,
      InferenceWorkload w, List<NumberFormat> weights, List<NumberFormat> kvs,
      InferenceEstimator estimator) {
    List<Replica> out = new ArrayList<>();
    List<InferenceWorkload> bases = bases(cluster, w, weights, kvs);
    for (int tp = 1; tp <= cluster.devicesPerNode(); tp++) {
      if (model.heads() % tp == 0) {
        addFeasible(out, model, cluster.withDevices(tp), tp, 1, bases, estimator);
      }
    }
    return out;
  }

  /**
   * Adds to {@code out} the replicas of tp devices a stage and pp stages on {@code replica}, in
   * each base workload and expert split within a stage, whose estimate at one sequence is
   * feasible.
   */
  static void addFeasible(List<Replica> out, TransformerSpec model, Cluster replica, int tp,
      int pp, List<InferenceWorkload> bases, InferenceEstimator estimator) {
    for (InferenceWorkload base : bases) {
      for (int ep : expertParallelSizes(model, tp)) {
        InferenceEstimate one = estimator.estimate(model, replica, base, tp, ep, pp, 1);
        if (one.feasible()) {
          out.add(new Replica(tp, ep, base.weights(), base.kvCache(), replica, base, one, false,
              0, model, pp));
        }
      }
    }
  }

  /**
   * The workload at batch 1 in each pair of weight format (its compute supported by the
   * accelerator) and KV-cache format, in order.
   */
  static List<InferenceWorkload> bases(Cluster cluster, InferenceWorkload w,
      List<NumberFormat> weights, List<NumberFormat> kvs) {
    List<InferenceWorkload> out = new ArrayList<>();
    for (NumberFormat wf : weights) {
      NumberFormat compute = wf.isFloating() ? wf : NumberFormat.FP16;
      if (!cluster.accelerator().supports(compute == NumberFormat.FP8_E5M2
          ? NumberFormat.FP8_E4M3 : compute)) {
        continue;
      }
      for (NumberFormat kf : kvs) {
        out.add(w.withFormats(wf, kf).withBatchSize(1));
      }
    }
    return out;
  }

  /**
   * The replica configurations whose routed experts span replicas (ep &gt; tp), for a mixture of
   * experts: tp up to a node (dividing the heads) and each ep of {@link #spanningSizes}, without
   * and with two-batch overlap; those whose replica fits one sequence. The way wide-EP
   * deployments run (docs/inference.md, "Disaggregated prefill and decode": attention
   * data-parallel over the ep/tp replicas of a group, the experts whole over its ep devices).
   * Where ep does not divide the routed experts, the group holds the fewest copies of experts
   * ({@link #redundantExperts}) that give each device an equal share of the slots.
   */
  static List<Replica> spanningReplicas(TransformerSpec model, Cluster cluster,
      InferenceWorkload w, List<NumberFormat> weights, List<NumberFormat> kvs,
      InferenceEstimator estimator) {
    List<Replica> out = new ArrayList<>();
    if (!model.isMoe() || !model.moe().routed()) {
      return out;
    }
    for (int tp = 1; tp <= cluster.devicesPerNode(); tp++) {
      if (model.heads() % tp != 0) {
        continue;
      }
      for (int ep : spanningSizes(model, tp, cluster.devicesPerNode())) {
        int redundant = redundantExperts(model, ep);
        TransformerSpec held = Disaggregated.withSlots(model, redundant);
        Cluster group = cluster.withDevices(ep);
        for (InferenceWorkload base : bases(cluster, w, weights, kvs)) {
          for (boolean overlap : new boolean[] {false, true}) {
            InferenceEstimate one = estimator.estimate(held, group, base, tp, ep, 1, ep / tp,
                overlap);
            if (one.feasible()) {
              out.add(new Replica(tp, ep, base.weights(), base.kvCache(), group, base, one,
                  overlap, redundant, held));
            }
          }
        }
      }
    }
    return out;
  }

  /**
   * Expert-parallel group sizes searched at {@code tp} with nodes of {@code node} devices, at
   * most the routed experts and {@link #MAX_SPANNING_EP}: within a node, tp · 2, tp · 4, ...
   * while they divide the routed experts; then every whole number of nodes (node · k; the
   * deployments of docs/validation.md run 4, 9 and 16 to 18 nodes) that tp divides, up to 16
   * nodes, and 32.
   */
  static List<Integer> spanningSizes(TransformerSpec model, int tp, int node) {
    int experts = model.moe().experts();
    int most = Math.min(experts, MAX_SPANNING_EP);
    List<Integer> sizes = new ArrayList<>();
    for (int ep = 2 * tp; ep < node && ep <= most && experts % ep == 0; ep *= 2) {
      sizes.add(ep);
    }
    for (int k = 1; k <= MAX_SPANNING_NODES; k = k < 16 ? k + 1 : 2 * k) {
      int ep = node * k;
      if (ep > most) {
        break;
      }
      if (ep > tp && ep % tp == 0) {
        sizes.add(ep);
      }
    }
    return sizes;
  }

  /**
   * The fewest copies of routed experts that make the slots (experts + copies) a multiple of
   * {@code ep}, and of the router's expert groups where it has them (the layout of SGLang's
   * {@code --ep-num-redundant-experts} and vLLM's {@code --num-redundant-experts}: each device
   * holds (experts + copies) / ep slots; DeepSeek-V3 §3.4 serves decode with 32 redundant
   * experts); 0 where ep divides the experts.
   */
  static int redundantExperts(TransformerSpec model, int ep) {
    int experts = model.moe().experts();
    int groups = Math.max(1, model.moe().groups());
    int step = ep / gcd(ep, groups) * groups;
    return (experts + step - 1) / step * step - experts;
  }

  private static int gcd(int a, int b) {
    return b == 0 ? a : gcd(b, a % b);
  }

  /**
   * Every replica configuration, and every expert-parallel group of replicas, at every batch of
   * {@link #FRONT_BATCHES} that fits.
   */
  private static List<FrontPoint> frontPoints(InferenceWorkload w, List<Replica> replicas,
      InferenceEstimator estimator) {
    List<FrontPoint> points = new ArrayList<>();
    for (Replica rc : replicas) {
      for (int batch : FRONT_BATCHES) {
        // A pipeline keeps pp batches in flight, sharing its KV-cache memory.
        if ((long) batch * rc.pp() > rc.one().maxBatchSize()) {
          break;
        }
        // The base workload runs one sequence: its estimate is the search's own.
        InferenceEstimate e = batch == 1 ? rc.one() : estimator.estimate(rc.model(), rc.cluster(),
            rc.base().withBatchSize(batch), rc.tp(), rc.ep(), rc.pp(), rc.group(),
            rc.twoBatchOverlap());
        if (!e.feasible() || !(e.tpotSeconds() > 0)) {
          continue;
        }
        points.add(new FrontPoint(rc.tp(), rc.ep(), rc.weights(), rc.kvCache(), batch,
            rc.pp() * e.outputTokensPerSecondPerDevice(), 1 / e.tpotSeconds(), e.ttftSeconds(),
            e.tpotSeconds(), w.meetsTargets(e.ttftSeconds(), e.tpotSeconds()),
            rc.twoBatchOverlap(), rc.redundantExperts(), rc.pp()));
      }
    }
    return points;
  }

  /**
   * The points of {@code points} that no other point matches or beats on both tokens per second
   * per GPU and tokens per second per user, most interactive first (per GPU rising along it); of
   * points equal on both, the first.
   */
  static List<FrontPoint> paretoFront(List<FrontPoint> points) {
    List<FrontPoint> sorted = new ArrayList<>(points);
    sorted.sort(Comparator.comparingDouble(FrontPoint::tokensPerSecondPerUser).reversed()
        .thenComparing(Comparator.comparingDouble(FrontPoint::tokensPerSecondPerGpu)
            .reversed()));
    List<FrontPoint> front = new ArrayList<>();
    double perGpu = Double.NEGATIVE_INFINITY;
    for (FrontPoint p : sorted) {
      if (p.tokensPerSecondPerGpu() > perGpu) {
        front.add(p);
        perGpu = p.tokensPerSecondPerGpu();
      }
    }
    return front;
  }

  /**
   * Expert-parallel sizes searched at {@code tp}: 1, and tp itself for a mixture of experts
   * whose routed experts tp divides (the split vLLM's {@code --enable-expert-parallel} makes;
   * partial splits, TensorRT-LLM's {@code moe_tensor_parallel_size > 1}, can be estimated but
   * are not searched).
   */
  static List<Integer> expertParallelSizes(TransformerSpec model, int tp) {
    if (tp > 1 && model.isMoe() && model.moe().routed() && model.moe().experts() % tp == 0) {
      return List.of(1, tp);
    }
    return List.of(1);
  }

}
