package io.hyperframes.inference;

import io.hyperframes.model.TransformerSpec;
import java.util.List;
import java.util.Locale;

/**
 * SLO mode: the highest Poisson request rate whose simulated latencies meet
 * {@code workload.latencySlo} ({@link SloEstimate}).
 *
 * <p>With {@code workload.engine}, the server is that engine's scheduler ({@link EngineLoad}),
 * bracketed by capacity mode's throughput. Without it, one replica's continuous-batching server
 * ({@link ServingLoads#loadToFit}: the estimator's prefill
 * and decode times for every batch up to the KV-cache bound, at most {@code workload.maxNumSeqs},
 * by default 256) is simulated at a rate; the SLO holds
 * when the time to first token at the SLO percentile and the time per output token of the median
 * request meet their targets ({@link Serving#meets}, the test the devices an SLO needs uses). The
 * rate is bisected between 0 and the full-batch capacity until the bracket is within
 * {@link #RELATIVE_TOLERANCE} of it. Every simulation uses the same seed, so a higher rate sees
 * the same requests arriving closer together: the latencies rise with the rate, as the bisection
 * needs. The replicas share the rate evenly.
 */
final class SloSearch {

  /** Bracket width, relative to its upper end, at which the bisection stops. */
  static final double RELATIVE_TOLERANCE = 0.005;

  /** Share of the full-batch capacity tried first: below it a server is as good as idle. */
  static final double FIRST_SHARE = 0.001;

  /** Most rates simulated (the bracket halves each time: 2^-20 of capacity is far below it). */
  static final int MAX_RATES = 24;

  private SloSearch() {}

  static SloEstimate estimate(InferenceEstimator estimator, InferenceRequest r) {
    InferenceWorkload w = r.workload();
    TransformerSpec m = r.model();
    SimulatedServer load;
    String scheduler = "prefill-first";
    if (r.capacity() != null) {
      // An engine's scheduler: capacity mode's places and full-load rate, its iterations.
      CapacityEstimate c = Capacity.estimate(estimator, r, r.capacity());
      if (!c.feasible()) {
        return new SloEstimate(false, c.reasons(), w.ttftSloSeconds(), w.tpotSloSeconds(),
            w.sloPercentile(), 0, 0, 0, 0, 0, 0, 0, 0, 0, "memory", 0, 0, 0,
            w.tpotSloPercentile(), r.capacity().engine().id());
      }
      load = new EngineLoad(estimator, r, r.capacity(), c);
      scheduler = r.capacity().engine().id();
    } else {
      load = ServingLoads.loadToFit(estimator, m, r.cluster().withDevices(r.tp() * r.pp()), w,
          r.tp(), r.ep(), r.pp());
    }
    // Servers: the replicas, or with pipeline stages the pp batches each keeps in flight
    // (ServingLoads.loadToFit).
    int replicas = r.replicas() * r.pp();
    int devices = r.tp() * r.pp() * r.replicas();
    double capacity = load.capacityPerSecond();
    double lo = 0;
    double hi = capacity;
    int tried = 0;
    ServingLoad.Percentiles best = null;
    ServingLoad.Percentiles above = null;
    double rate = FIRST_SHARE * capacity;
    while (tried < MAX_RATES && hi - lo > RELATIVE_TOLERANCE * hi) {
      ServingLoad.Percentiles q = load.simulate(rate, Serving.SIMULATED_REQUESTS, Serving.SEED);
      tried++;
      if (Serving.meets(q, w)) {
        lo = rate;
        best = q;
      } else {
        hi = rate;
        above = q;
        if (best == null) {
          break;
        }
      }
      rate = (lo + hi) / 2;
    }
    if (best == null) {
      ServingLoad.Percentiles q = above;
      return new SloEstimate(false, List.of(String.format(Locale.ROOT, "latencySlo: not met even"
          + " at %.3g requests/s %s (%.1f %% of its capacity): TTFT p%s %.4g s against"
          + " %s, TPOT %.4g s against %s", rate, r.pp() > 1 ? "a batch in flight" : "a replica",
          100 * FIRST_SHARE, percentile(w),
          q.ttftAt(w.sloPercentile()), target(w.ttftSloSeconds()), tpot(q, w),
          target(w.tpotSloSeconds()))), w.ttftSloSeconds(), w.tpotSloSeconds(),
          w.sloPercentile(), 0, 0, 0, capacity * replicas, 0, q.ttftAt(w.sloPercentile()),
          tpot(q, w), q.p50(), q.p99(), limitedBy(q, w), Serving.SIMULATED_REQUESTS, tried,
          load.batchLimit(), w.tpotSloPercentile(), scheduler);
    }
    String limitedBy = above == null ? "capacity" : limitedBy(above, w);
    double requests = lo * replicas;
    double tokens = requests * (r.capacity() != null ? r.capacity().output().mean()
        : w.outputTokens());
    return new SloEstimate(true, List.of(), w.ttftSloSeconds(), w.tpotSloSeconds(),
        w.sloPercentile(), requests, tokens, tokens / devices, capacity * replicas,
        lo / capacity, best.ttftAt(w.sloPercentile()), tpot(best, w), best.p50(), best.p99(),
        limitedBy, Serving.SIMULATED_REQUESTS, tried, load.batchLimit(), w.tpotSloPercentile(),
        scheduler);
  }

  /**
   * The time per output token {@link Serving#meets} compares with the target: with
   * {@code workload.latencySlo.tpotPercentile}, the requests' TPOT at that percentile (from the
   * simulation); else the median request's, its decode time (median latency less median time to
   * first token) over its tokens after the first.
   */
  static double tpot(ServingLoad.Percentiles q, InferenceWorkload w) {
    if (w.tpotSloPercentile() > 0) {
      return q.tpotAt(w.tpotSloPercentile());
    }
    return (q.p50() - q.ttftP50()) / Math.max(1, w.outputTokens() - 1);
  }

  private static String limitedBy(ServingLoad.Percentiles q, InferenceWorkload w) {
    boolean ttft = w.ttftSloSeconds() > 0 && q.ttftAt(w.sloPercentile()) > w.ttftSloSeconds();
    return ttft ? "ttft" : "tpot";
  }

  private static String target(double seconds) {
    return seconds > 0 ? String.format(Locale.ROOT, "%.4g s", seconds) : "none";
  }

  private static String percentile(InferenceWorkload w) {
    double p = w.sloPercentile();
    return p == Math.rint(p) ? String.valueOf((long) p) : String.valueOf(p);
  }
}
