package io.hyperframes.inference;

import static com.google.common.base.Preconditions.checkArgument;

import io.hyperframes.stat.Quantile;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;

/**
 * Latency under load of a continuous-batching server (iteration-level scheduling as in Orca, Yu et
 * al. 2022, and vLLM, Kwon et al. 2023): between iterations the server admits waiting requests up
 * to the batch limit and prefills them in one iteration (prefill first, as vLLM's default
 * scheduler); otherwise it runs one decode iteration for every running sequence. Requests arrive
 * as a Poisson process.
 *
 * <p>Two models share the iteration times (prefill of k prompts, decode step of n sequences):
 * {@link #simulate} is a discrete-event simulation; {@link #analytical} solves a linear
 * self-exciting cluster model of the same server ({@link ClusterLatency}) through its
 * characteristic function. ServingLoadTest checks that the two agree on p50 and p99 within 5 %
 * over a grid of rates up to 90 % of capacity (docs/inference.md).
 */
public final class ServingLoad implements SimulatedServer {

  /**
   * Latency percentiles in seconds.
   *
   * @param p50 median end-to-end latency
   * @param p90 90th percentile
   * @param p99 99th percentile
   * @param ttftP50 median time to first token
   * @param ttftP99 99th-percentile time to first token
   * @param meanRunning mean number of sequences decoding
   * @param ttftQuantile the time-to-first-token distribution: quantile q in (0, 1) → seconds
   * @param tpotQuantile the distribution of the requests' times per output token (each its
   *     latency less its time to first token, over its tokens after the first): quantile q in
   *     (0, 1) → seconds; null where not simulated (the analytical model)
   */
  public record Percentiles(double p50, double p90, double p99, double ttftP50, double ttftP99,
      double meanRunning, java.util.function.DoubleUnaryOperator ttftQuantile,
      java.util.function.DoubleUnaryOperator tpotQuantile) {

    public Percentiles {
      checkArgument(ttftQuantile != null, "ttftQuantile: must be given");
    }

    /** Percentiles without a TPOT distribution. */
    public Percentiles(double p50, double p90, double p99, double ttftP50, double ttftP99,
        double meanRunning, java.util.function.DoubleUnaryOperator ttftQuantile) {
      this(p50, p90, p99, ttftP50, ttftP99, meanRunning, ttftQuantile, null);
    }

    /**
     * The requests' time per output token at a percentile (any value in (0, 100)).
     *
     * @throws IllegalStateException where the distribution was not simulated
     */
    public double tpotAt(double percentile) {
      checkArgument(percentile > 0 && percentile < 100,
          "workload.latencySlo.tpotPercentile: must be in (0, 100), got %s", percentile);
      if (tpotQuantile == null) {
        throw new IllegalStateException("TPOT percentiles come from the simulation");
      }
      return tpotQuantile.applyAsDouble(percentile / 100);
    }

    /**
     * Time to first token at a percentile (p50 to p99.9, any value in (0, 100)), from the
     * distribution, not rounded to the nearest reported percentile.
     */
    public double ttftAt(double percentile) {
      checkArgument(percentile > 0 && percentile < 100,
          "workload.latencySlo.percentile: must be in (0, 100), got %s", percentile);
      return ttftQuantile.applyAsDouble(percentile / 100);
    }

    /** These percentiles with {@code seconds} added to every request's latency. */
    Percentiles delayed(double seconds) {
      if (seconds == 0) {
        return this;
      }
      java.util.function.DoubleUnaryOperator q = ttftQuantile;
      // The request path delays a request's first token and its last alike: TPOT is unchanged.
      return new Percentiles(p50 + seconds, p90 + seconds, p99 + seconds, ttftP50 + seconds,
          ttftP99 + seconds, meanRunning, x -> q.applyAsDouble(x) + seconds, tpotQuantile);
    }
  }

  private final double[] prefill;
  private final double[] decode;
  private final int maxBatch;
  private final int outputTokens;
  private final ClusterLatency cluster;
  private final double requestSeconds;

  /**
   * @param prefill prefill[k] = time to prefill k prompts in one iteration (index 0 unused)
   * @param decode decode[n] = time of one decode step for n sequences (index 0 unused)
   * @param outputTokens tokens generated per request (the first by the prefill)
   */
  public ServingLoad(double[] prefill, double[] decode, int outputTokens) {
    this(prefill, decode, outputTokens, 0.0);
  }

  /**
   * As {@link #ServingLoad(double[], double[], int)}, with a fixed delay of every request's
   * first token outside the server's iterations (the request path,
   * {@link InferenceEstimate#requestSeconds}): it adds to every latency and occupies no
   * iteration.
   */
  public ServingLoad(double[] prefill, double[] decode, int outputTokens, double requestSeconds) {
    checkArgument(prefill.length == decode.length && prefill.length >= 2,
        "tables: prefill and decode times for batch 1..max must be given");
    checkArgument(outputTokens >= 1, "workload.outputTokens: must be > 0, got %s", outputTokens);
    checkArgument(requestSeconds >= 0 && Double.isFinite(requestSeconds),
        "requestSeconds: must be >= 0, got %s", requestSeconds);
    this.requestSeconds = requestSeconds;
    this.prefill = prefill.clone();
    this.decode = decode.clone();
    this.maxBatch = prefill.length - 1;
    this.outputTokens = outputTokens;
    this.cluster = new ClusterLatency(prefill, decode, outputTokens);
  }

  /**
   * This load with batches of at most {@code limit} sequences: the same times for batches 1 to
   * {@code limit} (this one when {@code limit} is its own).
   */
  ServingLoad limitedTo(int limit) {
    checkArgument(limit >= 1 && limit <= maxBatch, "limit: must be in [1, %s], got %s", maxBatch,
        limit);
    return limit == maxBatch ? this : new ServingLoad(java.util.Arrays.copyOf(prefill, limit + 1),
        java.util.Arrays.copyOf(decode, limit + 1), outputTokens, requestSeconds);
  }

  /**
   * Whether {@link #analytical} is inside its validated domain at this rate: its decoding
   * population (mean plus three standard deviations) stays below the batch limit, so that
   * requests seldom wait for a free slot.
   */
  public boolean analyticalCovers(double rate) {
    checkArgument(rate > 0 && Double.isFinite(rate), "workload.arrivalRatePerSecond: must be"
        + " > 0, got %s", rate);
    return cluster.covers(rate);
  }

  /** The most sequences the server runs at once (the length of its tables). */
  public int batchLimit() {
    return maxBatch;
  }

  /** The request rate at which the server decodes a full batch all the time. */
  public double capacityPerSecond() {
    double perRequest = prefill[1] + (outputTokens - 1) * decode[maxBatch] / maxBatch;
    return 1.0 / perRequest;
  }

  /** Discrete-event simulation of {@code requests} arrivals (10 % warm-up discarded). */
  public Percentiles simulate(double rate, int requests, long seed) {
    checkArgument(rate > 0 && Double.isFinite(rate), "workload.arrivalRatePerSecond: must be"
        + " > 0, got %s", rate);
    checkArgument(requests >= 100, "requests: must be >= 100, got %s", requests);
    double[] arrival = poissonArrivals(rate, requests, seed);
    double[] done = new double[requests];
    double[] first = new double[requests];
    int[] remaining = new int[requests];
    ArrayDeque<Integer> waiting = new ArrayDeque<>();
    List<Integer> running = new ArrayList<>();
    int next = 0;
    int finished = 0;
    double now = 0;
    double runningArea = 0;
    while (finished < requests) {
      while (next < requests && arrival[next] <= now) {
        waiting.add(next++);
      }
      if (waiting.isEmpty() && running.isEmpty()) {
        now = arrival[next];
        continue;
      }
      if (!waiting.isEmpty() && running.size() < maxBatch) {
        int k = Math.min(waiting.size(), maxBatch - running.size());
        double d = prefill[k];
        runningArea += running.size() * d;
        now += d;
        for (int j = 0; j < k; j++) {
          finished += firstToken(waiting.poll(), outputTokens, now, first, remaining, done,
              running);
        }
      } else {
        double d = decode[running.size()];
        runningArea += running.size() * d;
        now += d;
        finished += decodeStep(now, remaining, done, running);
      }
    }
    int[] outputs = new int[requests];
    Arrays.fill(outputs, outputTokens);
    return percentiles(arrival, first, done, outputs, runningArea / now, requestSeconds);
  }

  /**
   * Request {@code r}'s first token at {@code now}: it decodes its other {@code output} − 1
   * tokens among {@code running}, or is done. Returns the requests done (0 or 1).
   */
  static int firstToken(int r, int output, double now, double[] first, int[] remaining,
      double[] done, List<Integer> running) {
    first[r] = now;
    remaining[r] = output - 1;
    if (remaining[r] > 0) {
      running.add(r);
      return 0;
    }
    done[r] = now;
    return 1;
  }

  /**
   * A decode step ending at {@code now}: one token for each of {@code running}; those with none
   * left are done and leave. Returns the requests done.
   */
  static int decodeStep(double now, int[] remaining, double[] done, List<Integer> running) {
    int finished = 0;
    for (int j = running.size() - 1; j >= 0; j--) {
      int r = running.get(j);
      if (--remaining[r] == 0) {
        done[r] = now;
        finished++;
        running.remove(j);
      }
    }
    return finished;
  }

  /**
   * The percentiles of a simulated run: each request's latency, time to first token and time per
   * output token (its decode time over its tokens after the first), the first 10 % discarded as
   * warm-up, every latency delayed by the request path.
   */
  static Percentiles percentiles(double[] arrival, double[] first, double[] done,
      int[] outputs, double meanRunning, double requestSeconds) {
    int requests = arrival.length;
    int skip = requests / 10;
    double[] latency = new double[requests - skip];
    double[] ttft = new double[requests - skip];
    double[] tpot = new double[requests - skip];
    for (int i = skip; i < requests; i++) {
      latency[i - skip] = done[i] - arrival[i];
      ttft[i - skip] = first[i] - arrival[i];
      tpot[i - skip] = outputs[i] > 1 ? (done[i] - first[i]) / (outputs[i] - 1) : 0.0;
    }
    Arrays.sort(latency);
    Arrays.sort(ttft);
    Arrays.sort(tpot);
    return new Percentiles(quantile(latency, 0.5), quantile(latency, 0.9),
        quantile(latency, 0.99), quantile(ttft, 0.5), quantile(ttft, 0.99), meanRunning,
        q -> quantile(ttft, q), q -> quantile(tpot, q)).delayed(requestSeconds);
  }

  /**
   * The analytical model (see the class comment and {@link ClusterLatency}); latencies are
   * infinite where its mean population would reach the batch limit or its branching ratio 1.
   * Where {@link #analyticalCovers} is false the answers leave out admission waits and are
   * underestimates.
   */
  public Percentiles analytical(double rate) {
    checkArgument(rate > 0 && Double.isFinite(rate), "workload.arrivalRatePerSecond: must be"
        + " > 0, got %s", rate);
    return cluster.percentiles(rate).delayed(requestSeconds);
  }

  /** Arrival times of {@code requests} Poisson arrivals at {@code rate}, from {@code seed}. */
  static double[] poissonArrivals(double rate, int requests, long seed) {
    SplittableRandom rnd = new SplittableRandom(seed);
    double[] arrival = new double[requests];
    double t = 0;
    for (int i = 0; i < requests; i++) {
      t += -Math.log(1.0 - rnd.nextDouble()) / rate;
      arrival[i] = t;
    }
    return arrival;
  }

  /** The {@code q}-quantile of {@code sorted}, interpolated linearly between order statistics. */
  static double quantile(double[] sorted, double q) {
    return Quantile.ofSorted(sorted, q, Quantile.Definition.LINEAR);
  }
}
