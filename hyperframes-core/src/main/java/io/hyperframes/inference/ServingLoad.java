package io.hyperframes.inference;

import static com.google.common.base.Preconditions.checkArgument;

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
 * {@link #simulate} is a discrete-event simulation; {@link #analytical} is a queueing
 * approximation checked against it (ServingLoadTest): the decoding population is a birth-death
 * process (Poisson arrivals; completions at k·(1-s)/((O-1)·t(k)) with k running, s the share of
 * time spent in prefill), whose stationary distribution an arrival sees (PASTA); a request's
 * latency is its prefill, its decode steps at the population it joins, the prefill iterations of
 * requests arriving meanwhile (Poisson), the residual of the iteration in progress and, beyond
 * the batch limit, its admission wait. The simulation is the reference: the approximation
 * matches its median closely and underestimates its tail at high load (docs/inference.md).
 */
public final class ServingLoad {

  /**
   * Latency percentiles in seconds.
   *
   * @param p50 median end-to-end latency
   * @param p90 90th percentile
   * @param p99 99th percentile
   * @param ttftP50 median time to first token
   * @param ttftP99 99th-percentile time to first token
   * @param meanRunning mean number of sequences decoding
   */
  public record Percentiles(double p50, double p90, double p99, double ttftP50, double ttftP99,
      double meanRunning) {}

  private final double[] prefill;
  private final double[] decode;
  private final int maxBatch;
  private final int outputTokens;

  /**
   * @param prefill prefill[k] = time to prefill k prompts in one iteration (index 0 unused)
   * @param decode decode[n] = time of one decode step for n sequences (index 0 unused)
   * @param outputTokens tokens generated per request (the first by the prefill)
   */
  public ServingLoad(double[] prefill, double[] decode, int outputTokens) {
    checkArgument(prefill.length == decode.length && prefill.length >= 2,
        "tables: prefill and decode times for batch 1..max must be given");
    checkArgument(outputTokens >= 1, "workload.outputTokens: must be > 0, got %s", outputTokens);
    this.prefill = prefill.clone();
    this.decode = decode.clone();
    this.maxBatch = prefill.length - 1;
    this.outputTokens = outputTokens;
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
    SplittableRandom rnd = new SplittableRandom(seed);
    double[] arrival = new double[requests];
    double t = 0;
    for (int i = 0; i < requests; i++) {
      t += -Math.log(1.0 - rnd.nextDouble()) / rate;
      arrival[i] = t;
    }
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
          int r = waiting.poll();
          first[r] = now;
          remaining[r] = outputTokens - 1;
          if (remaining[r] == 0) {
            done[r] = now;
            finished++;
          } else {
            running.add(r);
          }
        }
      } else {
        double d = decode[running.size()];
        runningArea += running.size() * d;
        now += d;
        for (int j = running.size() - 1; j >= 0; j--) {
          int r = running.get(j);
          if (--remaining[r] == 0) {
            done[r] = now;
            finished++;
            running.remove(j);
          }
        }
      }
    }
    int skip = requests / 10;
    double[] latency = new double[requests - skip];
    double[] ttft = new double[requests - skip];
    for (int i = skip; i < requests; i++) {
      latency[i - skip] = done[i] - arrival[i];
      ttft[i - skip] = first[i] - arrival[i];
    }
    Arrays.sort(latency);
    Arrays.sort(ttft);
    return new Percentiles(quantile(latency, 0.5), quantile(latency, 0.9),
        quantile(latency, 0.99), quantile(ttft, 0.5), quantile(ttft, 0.99),
        runningArea / now);
  }

  /** The analytical approximation (see the class comment). */
  public Percentiles analytical(double rate) {
    checkArgument(rate > 0 && Double.isFinite(rate), "workload.arrivalRatePerSecond: must be"
        + " > 0, got %s", rate);
    // Fixed point for the mean decoding population n (Little's law on the decode phase).
    double prefillShare = Math.min(0.99, rate * prefill[1]);
    double n = 1;
    for (int i = 0; i < 500; i++) {
      double next = Math.min(maxBatch, rate * (outputTokens - 1) * decodeAt(n)
          / (1 - prefillShare));
      if (Math.abs(next - n) < 1e-9) {
        break;
      }
      n = 0.5 * n + 0.5 * next;
    }
    double step = decodeAt(n);
    double busy = Math.min(1.0, prefillShare + (1 - prefillShare) * (1 - Math.exp(-n)));
    double waitProbability = 0; // admission waits are in the birth-death mixture below
    double decay = 0;
    Mixture latency = new Mixture();
    {
      // Birth-death population: arrivals at rate lambda, completions at mu(k) = k (1-s) /
      // ((O-1) t(k)) (processor sharing of the decode steps), admission queue beyond the batch
      // limit. A request's latency is set by the population it joins (PASTA), held over its life.
      int cap = maxBatch * 4;
      double[] pi = new double[cap + 1];
      pi[0] = 1;
      double sum = 1;
      for (int k = 1; k <= cap; k++) {
        int active = Math.min(k, maxBatch);
        double mu = active * (1 - prefillShare) / ((outputTokens - 1) * decodeAt(active));
        pi[k] = pi[k - 1] * rate / mu;
        sum += pi[k];
        if (pi[k] < 1e-12 * sum && k > n) {
          cap = k;
          break;
        }
      }
      for (int k = 0; k <= cap; k++) {
        if (pi[k] <= 0) {
          continue;
        }
        int active = Math.min(k + 1, maxBatch);
        double queueWait = k + 1 > maxBatch ? (k + 1 - maxBatch) / (maxBatch * (1 - prefillShare)
            / ((outputTokens - 1) * decodeAt(maxBatch))) : 0;
        double decodeTime = (outputTokens - 1) * decodeAt(active);
        double interruptions = rate * decodeTime / (1 - prefillShare);
        latency.add(pi[k] / sum, prefill[1] + decodeTime + queueWait, prefill[1], interruptions);
      }
    }
    Mixture ttft = new Mixture();
    ttft.add(1.0, prefill[1], 0, 0);
    double[] qs = {0.5, 0.9, 0.99};
    double[] l = new double[3];
    double[] t = new double[3];
    for (int i = 0; i < 3; i++) {
      l[i] = latency.quantile(qs[i], 1 - busy, step, waitProbability, decay);
      t[i] = ttft.quantile(qs[i], 1 - busy, step, waitProbability, decay);
    }
    return new Percentiles(l[0], l[1], l[2], t[0], t[2], n);
  }

  /** A mixture of base + unit·Poisson(mean) components, plus residual and admission wait. */
  private static final class Mixture {
    final List<double[]> parts = new ArrayList<>();

    void add(double weight, double base, double unit, double mean) {
      parts.add(new double[] {weight, base, unit, mean});
    }

    double quantile(double q, double idle, double residualMax, double waitProbability,
        double decay) {
      double lo = Double.MAX_VALUE;
      double hi = 0;
      for (double[] p : parts) {
        lo = Math.min(lo, p[1]);
        hi = Math.max(hi, p[1] + residualMax + p[2] * (p[3] + 10 * Math.sqrt(p[3] + 1) + 10)
            + (decay > 0 ? 50 / decay : 0));
      }
      for (int it = 0; it < 80; it++) {
        double mid = 0.5 * (lo + hi);
        double c = 0;
        for (double[] p : parts) {
          c += p[0] * cdf(mid - p[1], p[2], p[3], idle, residualMax, waitProbability, decay);
        }
        if (c < q) {
          lo = mid;
        } else {
          hi = mid;
        }
      }
      return 0.5 * (lo + hi);
    }
  }

  private double decodeAt(double n) {
    if (n <= 1) {
      return decode[1];
    }
    int lo = (int) Math.floor(n);
    int hi = Math.min(maxBatch, lo + 1);
    double f = n - lo;
    return decode[Math.min(lo, maxBatch)] * (1 - f) + decode[hi] * f;
  }

  private static double cdf(double x, double unit, double mean, double idle, double residualMax,
      double waitProbability, double decay) {
    if (x < 0) {
      return 0;
    }
    double total = 0;
    double p = Math.exp(-mean);
    int maxK = unit > 0 ? (int) Math.min(10_000, x / unit) : 0;
    for (int k = 0; k <= maxK; k++) {
      if (k > 0) {
        p *= mean / k;
      }
      double rest = x - k * unit;
      total += p * residualAndWait(rest, idle, residualMax, waitProbability, decay);
    }
    return total;
  }

  /** P(residual + wait ≤ x), by numeric integration over the residual. */
  private static double residualAndWait(double x, double idle, double residualMax,
      double waitProbability, double decay) {
    double busyPart = 0;
    int steps = 32;
    for (int i = 0; i < steps; i++) {
      double r = (i + 0.5) / steps * residualMax;
      busyPart += waitCdf(x - r, waitProbability, decay) / steps;
    }
    return idle * waitCdf(x, waitProbability, decay) + (1 - idle) * busyPart;
  }

  private static double waitCdf(double x, double waitProbability, double decay) {
    if (x < 0) {
      return 0;
    }
    if (waitProbability <= 0 || decay <= 0) {
      return waitProbability >= 1 && decay <= 0 ? 0 : 1;
    }
    return 1 - waitProbability * Math.exp(-decay * x);
  }

  private static double quantile(double[] sorted, double q) {
    double pos = q * (sorted.length - 1);
    int i = (int) Math.floor(pos);
    int j = Math.min(sorted.length - 1, i + 1);
    return sorted[i] + (pos - i) * (sorted[j] - sorted[i]);
  }
}
