package io.hyperframes.hardware;

import io.hyperframes.catalog.Catalog;
import io.hyperframes.catalog.MachineProfile;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.hyperframes.request.Requests;
import io.hyperframes.plan.TrainingEstimate;
import io.hyperframes.plan.TrainingEstimator;
import io.hyperframes.precision.NumberFormat;
import java.util.Map;
import org.junit.jupiter.api.Test;

class MachineProfileTest {

  private static final double PEAK = 400e9;
  private static final double HALF_DIM = 96;
  private static final double HALF_ROWS = 32;
  private static final double OVERHEAD = 50e-6;
  private static final double TRIAD = 20e9;

  /** Seconds of a matmul on a synthetic machine that follows the estimator's model exactly. */
  private static double seconds(double m, double n, double k) {
    double g = m / (m + HALF_ROWS) * n / (n + HALF_DIM) * k / (k + HALF_DIM);
    return 2 * m * n * k / (PEAK * g);
  }

  private static MachineProfile synthetic() {
    MachineProfile.Builder b = MachineProfile.builder("host").name("synthetic CPU")
        .memoryBytes(16.0 * (1L << 30)).conditions(Map.of("cpu", "synthetic"));
    int[][] shapes = {{64, 256, 256}, {64, 2048, 2048}, {256, 256, 1024}, {256, 1024, 1024},
        {256, 2048, 784}, {256, 10, 2048}, {1024, 1024, 1024}, {1024, 2048, 512},
        {2048, 784, 256}};
    for (int[] s : shapes) {
      double t = seconds(s[0], s[1], s[2]);
      b.matmul(NumberFormat.BF16, s[0], s[1], s[2], new double[] {t * 1.01, t, t * 0.99});
    }
    b.stream("triad", 3 * 8 * 1e7, new double[] {3 * 8 * 1e7 / TRIAD});
    b.stream("copy", 2 * 8 * 1e7, new double[] {2 * 8 * 1e7 / 25e9});
    int[][] layers = {{256, 784, 2048}, {256, 2048, 2048}, {256, 2048, 10}};
    for (int[] l : layers) {
      double mm = seconds(l[0], l[2], l[1]) + seconds(l[0], l[1], l[2])
          + seconds(l[1], l[2], l[0]);
      double elementwise = 6 * 2.0 * l[0] * l[2] / TRIAD;
      double total = mm + elementwise + OVERHEAD;
      b.denseLayer(NumberFormat.BF16, l[0], l[1], l[2], new double[] {total / 3},
          new double[] {2 * total / 3});
    }
    return b.build();
  }

  @Test
  void fitRecoversTheModelThatMadeTheMeasurements() {
    MachineProfile p = synthetic();
    Accelerator a = p.accelerator();
    KernelEfficiency k = a.kernel(NumberFormat.BF16);
    assertEquals(HALF_DIM, k.halfDim(), 8.0);
    assertEquals(HALF_ROWS, k.halfRows(), 8.0);
    assertEquals(OVERHEAD, k.layerOverheadSeconds(), 5e-6);
    assertEquals(TRIAD, a.memoryBandwidthBytesPerSecond(), 1e6);
    // A shape not measured is predicted from the fitted constants.
    double predicted = 2.0 * 512 * 1536 * 768
        / (a.peakFlops(NumberFormat.BF16) * k.matmulAt(512, 1536, 768));
    assertEquals(1.0, predicted / seconds(512, 1536, 768), 0.02);
    assertFalse(a.supports(NumberFormat.FP32));
  }

  @Test
  void jsonRoundTripKeepsMeasurementsAndTheFittedAccelerator() {
    MachineProfile p = synthetic();
    MachineProfile q = MachineProfile.parse(p.toJson());
    assertEquals(p.measurements(), q.measurements());
    assertEquals(p.conditions(), q.conditions());
    assertEquals(p.accelerator().peakFlops(NumberFormat.BF16),
        q.accelerator().peakFlops(NumberFormat.BF16));
    assertEquals(p.accelerator().kernel(NumberFormat.BF16),
        q.accelerator().kernel(NumberFormat.BF16));
    assertEquals("host", q.acceleratorId());
    assertEquals(TRIAD / 1e9, q.measurement("memory.triad").orElseThrow().median(), 1e-6);
  }

  @Test
  void aProfileMakesTheHostAnAcceleratorForTheEstimator() {
    MachineProfile p = synthetic();
    Catalog c = p.applyTo(Catalog.builtIn());
    String request = """
        {"model": {"name": "mlp", "dense": [784, 2048, 2048, 10]},
         "cluster": {"template": "host-node", "devices": 1},
         "workload": {"type": "training", "precision": "bf16-mixed", "globalBatchSize": 256,
                      "optimizer": "adam"},
         "layout": {"tp": 1, "pp": 1, "dp": 1, "microBatch": 256}}
        """;
    TrainingEstimate e = TrainingEstimator.analytical().estimate(Requests.parse(request, c));
    assertTrue(e.feasible(), e.reasons().toString());
    // Forward and backward matmuls of the three layers plus overheads, as the synthetic
    // machine times them; the estimate adds the optimizer and element-wise passes on top.
    double matmuls = 0;
    int[][] layers = {{784, 2048}, {2048, 2048}, {2048, 10}};
    for (int[] l : layers) {
      matmuls += seconds(256, l[1], l[0]) + seconds(256, l[0], l[1]) + seconds(l[0], l[1], 256);
    }
    double step = e.time().stepSeconds();
    assertTrue(step > matmuls && step < 2 * matmuls, step + " vs matmuls " + matmuls);

    MachineProfile generic = MachineProfile.genericCpu("generic-cpu", 2, 2.5, true,
        16.0 * (1L << 30));
    Catalog g = generic.applyTo(Catalog.builtIn());
    TrainingEstimate ge = TrainingEstimator.analytical().estimate(Requests.parse(
        request.replace("host-node", "generic-cpu-node"), g));
    assertTrue(ge.time().stepSeconds() > 0 && Double.isFinite(ge.time().stepSeconds()));
    assertEquals(2 * 2.5e9 * 64, generic.accelerator().peakFlops(NumberFormat.BF16));
  }

  /** A synthetic FP32 machine whose Adam step over {@code n} parameters takes {@code t}. */
  private static MachineProfile withOptimizer(long n, double t) {
    MachineProfile.Builder b = MachineProfile.builder("host").name("synthetic CPU")
        .memoryBytes(16.0 * (1L << 30));
    int[][] shapes = {{64, 256, 256}, {256, 2048, 784}, {1024, 1024, 1024}, {2048, 784, 256}};
    for (int[] s : shapes) {
      b.matmul(NumberFormat.FP32, s[0], s[1], s[2], new double[] {seconds(s[0], s[1], s[2])});
    }
    b.stream("triad", 3 * 8 * 1e7, new double[] {3 * 8 * 1e7 / TRIAD});
    return b.optimizer(n, new double[] {t * 1.1, t, t * 0.9}).build();
  }

  @Test
  void theMeasuredOptimizerStepIsWhatTheEstimatorPredictsForIt() {
    long n = 4L << 20;
    double t = 2 * MachineProfile.ADAM_FP32_BYTES * n / TRIAD; // half the triad's rate
    MachineProfile p = withOptimizer(n, t);
    assertEquals(0.5, p.accelerator().kernel(NumberFormat.FP32).optimizerBandwidthFraction(),
        1e-12);
    assertEquals(0.5, MachineProfile.parse(p.toJson()).accelerator().kernel(NumberFormat.FP32)
        .optimizerBandwidthFraction(), 1e-12);
    assertTrue(p.measurement("optimizer.adam.fp32." + n).isPresent());
    // The estimator's optimizer step of an FP32 network of the same parameter count is the
    // measured time: the profile's fraction and the estimator count the same 28 bytes.
    String request = """
        {"model": {"name": "mlp", "dense": [2048, 2048]},
         "cluster": {"template": "host-node", "devices": 1},
         "workload": {"type": "training", "precision": "fp32", "globalBatchSize": 256,
                      "optimizer": "adam"},
         "layout": {"tp": 1, "pp": 1, "dp": 1, "microBatch": 256}}
        """;
    TrainingEstimate e = TrainingEstimator.analytical().estimate(Requests.parse(request,
        p.applyTo(Catalog.builtIn())));
    long params = 2048L * 2048 + 2048;
    assertEquals(t * params / n, e.time().optimizerSeconds(), 1e-9 * t);
    // An optimizer faster than the triad (caches) is capped at the triad's rate.
    assertEquals(1.0, withOptimizer(n, t / 10).accelerator().kernel(NumberFormat.FP32)
        .optimizerBandwidthFraction());
  }

  @Test
  void badInputNamesTheField() {
    assertTrue(assertThrows(IllegalArgumentException.class,
        () -> MachineProfile.builder("host").optimizer(0, new double[] {1})).getMessage()
        .contains("parameters"));
    String badFraction = withOptimizer(1 << 20, 1e-3).toJson().replaceFirst(
        "\"optimizerBandwidthFraction\" : [0-9.eE-]+", "\"optimizerBandwidthFraction\" : 1.5");
    assertTrue(assertThrows(IllegalArgumentException.class,
        () -> MachineProfile.parse(badFraction)).getMessage()
        .contains("optimizerBandwidthFraction: must be in (0, 1], got 1.5"));
    assertTrue(assertThrows(IllegalArgumentException.class,
        () -> MachineProfile.parse("{\"schema\": \"other/1\"}")).getMessage().contains("profile.schema"));
    assertTrue(assertThrows(IllegalArgumentException.class,
        () -> MachineProfile.builder("Host")).getMessage().contains("'Host'"));
    assertTrue(assertThrows(IllegalArgumentException.class,
        () -> MachineProfile.builder("host").matmul(NumberFormat.FP32, 4, 4, 4,
        new double[] {-1})).getMessage().contains("samples[0]"));
    assertTrue(assertThrows(IllegalStateException.class,
        () -> MachineProfile.builder("host").memoryBytes(1).build()).getMessage().contains("no matmul"));
    assertTrue(assertThrows(IllegalArgumentException.class,
        () -> MachineProfile.builder("host").stream("scale", 1, new double[] {1})).getMessage().contains("scale"));
    String broken = synthetic().toJson().replace("\"peakTflops\"", "\"peakTflopz\"");
    assertTrue(assertThrows(IllegalArgumentException.class,
        () -> MachineProfile.parse(broken)).getMessage().contains("peakTflopz"));
  }
}
