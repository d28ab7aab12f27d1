package io.hyperframes.inference;

/**
 * One replica's server under Poisson arrivals, as slo mode bisects on it ({@link SloSearch}): the
 * prefill-first server of {@link ServingLoad}, or an engine's scheduler ({@link EngineLoad}).
 */
interface SimulatedServer {

  /** Latency percentiles of {@code requests} arrivals at {@code rate} per second (fixed seed). */
  ServingLoad.Percentiles simulate(double rate, int requests, long seed);

  /** The request rate the server sustains with every place taken. */
  double capacityPerSecond();

  /** The most sequences the server runs at once. */
  int batchLimit();
}
