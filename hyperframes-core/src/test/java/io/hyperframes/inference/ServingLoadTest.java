package io.hyperframes.inference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.hyperframes.hardware.Catalog;
import io.hyperframes.hardware.Cluster;
import io.hyperframes.model.TransformerSpec;
import io.hyperframes.precision.NumberFormat;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** The continuous-batching load model: simulation laws, the approximation, devices for an SLO. */
class ServingLoadTest {

  static final InferenceEstimator ESTIMATOR = InferenceEstimator.analytical();

  static Stream<Arguments> servers() {
    return Stream.of(Arguments.of("a100-sxm-80gb", "llama2-7b", 1, 512, 128),
        Arguments.of("h100-sxm-80gb", "llama2-70b", 8, 1024, 256),
        Arguments.of("l40s-48gb", "mistral-7b", 2, 256, 64));
  }

  static ServingLoad load(String acc, String model, int tp, int prompt, int output) {
    var a = Catalog.builtIn().accelerators().get(acc);
    var node = Catalog.builtIn().nodes().get(a.defaultNode());
    Cluster c = new Cluster(a, tp, node.devicesPerNode(), a.intraNode(), node.interNode());
    TransformerSpec m = Catalog.builtIn().models().get(model);
    InferenceWorkload w = new InferenceWorkload(NumberFormat.FP16, NumberFormat.FP16, 1, prompt,
        output, 0, 0, 0, 99, 16);
    return Serving.load(ESTIMATOR, m, c, w, tp, 1);
  }

  @ParameterizedTest
  @MethodSource("servers")
  void latencyNeverFallsAsTheArrivalRateGrows(String acc, String model, int tp, int prompt,
      int output) {
    ServingLoad load = load(acc, model, tp, prompt, output);
    double cap = load.capacityPerSecond();
    ServingLoad.Percentiles previous = null;
    for (double f = 0.05; f <= 0.95; f += 0.05) {
      ServingLoad.Percentiles s = load.simulate(f * cap, 20_000, 7);
      ServingLoad.Percentiles a = load.analytical(f * cap);
      if (previous != null) {
        // Same arrival sequence, compressed in time: more congestion, never less latency
        // (up to the noise of batching several prompts into one prefill).
        assertTrue(s.p50() >= previous.p50() * 0.995, "p50 fell at load " + f);
        assertTrue(s.p99() >= previous.p99() * 0.995, "p99 fell at load " + f);
      }
      assertTrue(a.p99() >= a.p50() && s.p99() >= s.p50());
      previous = s;
    }
  }

  /**
   * Where the approximation holds: median within 6 % and mean decoding population within 12 % up
   * to half of capacity, p99 within 12 % up to 30 %. Beyond that it misses by up to 40 % (its
   * tail is too thin and, when prefill takes a large share of the time, its median too high), so
   * the estimator reports the simulated percentiles; docs/inference.md has the table.
   */
  @ParameterizedTest
  @MethodSource("servers")
  void analyticalMedianAgreesWithTheSimulation(String acc, String model, int tp, int prompt,
      int output) {
    ServingLoad load = load(acc, model, tp, prompt, output);
    double cap = load.capacityPerSecond();
    for (double f : new double[] {0.1, 0.3, 0.5}) {
      ServingLoad.Percentiles s = load.simulate(f * cap, 40_000, 42);
      ServingLoad.Percentiles a = load.analytical(f * cap);
      assertEquals(s.p50(), a.p50(), 0.06 * s.p50(), "p50 at load " + f);
      assertEquals(s.meanRunning(), a.meanRunning(), 0.12 * s.meanRunning() + 0.5,
          "mean decoding population at load " + f);
      if (f <= 0.3) {
        assertEquals(s.p99(), a.p99(), 0.12 * s.p99(), "p99 at load " + f);
      }
    }
  }

  /** devicesNeeded under load is the minimum that meets the SLO (brute-force scan). */
  @ParameterizedTest
  @MethodSource("slos")
  void devicesNeededUnderLoadIsTheMinimum(double rate, double ttft, double tpot) {
    var a = Catalog.builtIn().accelerators().get("a100-sxm-80gb");
    var node = Catalog.builtIn().nodes().get(a.defaultNode());
    Cluster c = new Cluster(a, 1, node.devicesPerNode(), a.intraNode(), node.interNode());
    TransformerSpec m = Catalog.builtIn().models().get("llama2-7b");
    InferenceWorkload w = new InferenceWorkload(NumberFormat.FP16, NumberFormat.FP16, 1, 256, 64,
        rate, ttft, tpot, 99, 16);
    int needed = Serving.devicesForSlo(ESTIMATOR, new InferenceRequest(m, c, w, 1, 1, 1));
    int brute = 0;
    for (int devices = 1; devices <= 32 && brute == 0; devices++) {
      for (int tp = 1; tp <= Math.min(8, devices) && brute == 0; tp++) {
        if (devices % tp != 0 || m.heads() % tp != 0) {
          continue;
        }
        Cluster replica = c.withDevices(tp);
        ServingLoad load = Serving.load(ESTIMATOR, m, replica, w, tp, 1);
        if (Serving.meetsSlo(load, w, rate / (devices / tp))) {
          brute = devices;
        }
      }
    }
    assertEquals(brute, needed);
  }

  static Stream<Arguments> slos() {
    return Stream.of(Arguments.of(5.0, 0.2, 0.05), Arguments.of(40.0, 0.3, 0.03),
        Arguments.of(100.0, 1.0, 0.1));
  }
}
