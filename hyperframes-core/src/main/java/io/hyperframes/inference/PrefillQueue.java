package io.hyperframes.inference;

import static com.google.common.base.Preconditions.checkArgument;

import java.util.Arrays;
import java.util.PriorityQueue;

/**
 * The prefill pool of a disaggregated server under Poisson arrivals: identical replicas, one
 * first-come-first-served queue; a replica that comes free takes every waiting prompt up to its
 * batch limit (at least the next one, waiting for it if none waits), computes them together and
 * is busy for that batch's period (its prefill, or the KV transfer when longer). A prompt's time
 * to first token is its wait plus its batch's latency (request path, prefill and exposed
 * transfer). Discrete-event simulation, the first 10 % of the requests discarded as warm-up (as
 * {@link ServingLoad#simulate}).
 */
final class PrefillQueue {
  private PrefillQueue() {}

  /**
   * The {@code percentile}-th percentile of the time to first token.
   *
   * @param rate requests per second, Poisson
   * @param replicas prefill replicas
   * @param period {@code period[k]}: seconds a replica is busy with a batch of k prompts, for k
   *     in 1 .. batch limit (index 0 unused)
   * @param latency {@code latency[k]}: time to first token of a prompt of a batch of k that
   *     started at once
   * @param percentile in (0, 100)
   * @param requests arrivals simulated (at least 100)
   * @param seed of the arrivals
   */
  static double ttftAt(double rate, int replicas, double[] period, double[] latency,
      double percentile, int requests, long seed) {
    checkArgument(rate > 0 && Double.isFinite(rate), "rate: must be > 0, got %s", rate);
    checkArgument(replicas >= 1, "replicas: must be >= 1, got %s", replicas);
    checkArgument(period.length >= 2 && period.length == latency.length,
        "period and latency: one entry per batch size from 1");
    checkArgument(percentile > 0 && percentile < 100, "workload.latencySlo.percentile: must be"
        + " in (0, 100), got %s", percentile);
    checkArgument(requests >= 100, "requests: must be >= 100, got %s", requests);
    int limit = period.length - 1;
    double[] arrival = ServingLoad.poissonArrivals(rate, requests, seed);
    PriorityQueue<Double> free = new PriorityQueue<>();
    for (int r = 0; r < replicas; r++) {
      free.add(0.0);
    }
    double[] ttft = new double[requests];
    int next = 0;
    while (next < requests) {
      double start = Math.max(free.poll(), arrival[next]);
      int k = 1;
      while (k < limit && next + k < requests && arrival[next + k] <= start) {
        k++;
      }
      for (int j = next; j < next + k; j++) {
        ttft[j] = start - arrival[j] + latency[k];
      }
      free.add(start + period[k]);
      next += k;
    }
    double[] kept = Arrays.copyOfRange(ttft, requests / 10, requests);
    Arrays.sort(kept);
    return ServingLoad.quantile(kept, percentile / 100);
  }
}
