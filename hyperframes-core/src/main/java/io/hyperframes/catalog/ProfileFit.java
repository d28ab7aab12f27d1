package io.hyperframes.catalog;

import io.hyperframes.hardware.KernelEfficiency;
import io.hyperframes.precision.NumberFormat;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The fit behind {@link MachineProfile.Builder#build}: the estimator's matmul model (a matmul of
 * m×k by k×n runs at {@code e · m/(m + halfRows) · n/(n + halfDim) · k/(k + halfDim)} of the
 * format's peak; {@link KernelEfficiency}) fitted to measured matmul times, per format.
 *
 * <p>The two half dimensions are searched on a grid of 4 from 0 to 2048, and for each pair the
 * large-matrix rate minimising the squared log error has a closed form (the fastest measured
 * rate times the exponential of the mean log ratio), so the search is exhaustive and
 * deterministic: three parameters over some ten shapes do not need an iterative optimiser, and
 * the grid cannot stop in a local minimum. Ties go to the smaller half dimensions. The fitted
 * large-matrix rate is the profile's peak and its efficiency is 1: on a measured machine the
 * peak is what large matmuls sustain, not a datasheet figure (it lies a little above the
 * fastest shape measured, which is not infinitely large).
 *
 * <p>The per-layer overhead is the mean, over the fused dense layers measured, of measured
 * forward + backward time minus what the fitted matmuls and the estimator's six element-wise
 * passes over the layer's output predict (never below zero): the mean, so that the measured
 * layers' total is predicted exactly. The residual is not a constant per layer on a CPU
 * (converting FP32 weights to BF16 inside the call grows with the weights), and a network made
 * of the measured layers is what the overhead has to add up for.
 */
final class ProfileFit {

  private static final int GRID_STEP = 4;
  private static final int GRID_MAX = 2048;

  record MatmulSample(NumberFormat format, int m, int n, int k, double seconds) {}

  record LayerSample(NumberFormat format, int batch, int in, int out, double seconds) {}

  record Result(double peakFlopsPerSecond, double efficiency, double halfDim, double halfRows,
      double layerOverheadSeconds, double rmsLogError, int shapes, int layers) {}

  private ProfileFit() {}

  static Map<NumberFormat, Result> fit(List<MatmulSample> matmuls, List<LayerSample> layers,
      double bandwidth) {
    Map<NumberFormat, List<MatmulSample>> byFormat = new LinkedHashMap<>();
    for (MatmulSample s : matmuls) {
      byFormat.computeIfAbsent(s.format(), f -> new ArrayList<>()).add(s);
    }
    Map<NumberFormat, Result> out = new LinkedHashMap<>();
    byFormat.forEach((format, samples) -> {
      List<LayerSample> mine = layers.stream().filter(l -> l.format() == format).toList();
      out.put(format, fitFormat(format, samples, mine, bandwidth));
    });
    return out;
  }

  private static Result fitFormat(NumberFormat format, List<MatmulSample> samples,
      List<LayerSample> layers, double bandwidth) {
    double peak = 0;
    for (MatmulSample s : samples) {
      peak = Math.max(peak, flops(s) / s.seconds());
    }
    double bestSse = Double.POSITIVE_INFINITY;
    double bestE = 1;
    int bestDim = 0;
    int bestRows = 0;
    double[] logRatio = new double[samples.size()];
    for (int dim = 0; dim <= GRID_MAX; dim += GRID_STEP) {
      for (int rows = 0; rows <= GRID_MAX; rows += GRID_STEP) {
        double mean = 0;
        for (int i = 0; i < logRatio.length; i++) {
          MatmulSample s = samples.get(i);
          logRatio[i] = Math.log(flops(s) / (peak * shape(s.m(), s.n(), s.k(), dim, rows)
              * s.seconds()));
          mean += logRatio[i];
        }
        mean /= logRatio.length;
        double logE = mean;
        double sse = 0;
        for (double r : logRatio) {
          sse += (r - logE) * (r - logE);
        }
        if (sse < bestSse - 1e-12) {
          bestSse = sse;
          bestE = Math.exp(logE);
          bestDim = dim;
          bestRows = rows;
        }
      }
    }
    double e = bestE;
    int dim = bestDim;
    int rows = bestRows;
    double bytes = format.bytes();
    double[] residual = new double[layers.size()];
    for (int i = 0; i < residual.length; i++) {
      LayerSample l = layers.get(i);
      double predicted = matmul(l.batch(), l.out(), l.in(), peak, e, dim, rows, bytes, bandwidth)
          + matmul(l.batch(), l.in(), l.out(), peak, e, dim, rows, bytes, bandwidth)
          + matmul(l.in(), l.out(), l.batch(), peak, e, dim, rows, bytes, bandwidth)
          + 6 * bytes * l.batch() * l.out() / bandwidth;
      residual[i] = l.seconds() - predicted;
    }
    double overhead = residual.length == 0 ? 0.0
        : Math.max(0.0, Arrays.stream(residual).average().orElseThrow());
    return new Result(peak * e, 1.0, dim, rows, overhead, Math.sqrt(bestSse / samples.size()),
        samples.size(), layers.size());
  }

  private static double flops(MatmulSample s) {
    return 2.0 * s.m() * s.n() * s.k();
  }

  private static double shape(double m, double n, double k, double dim, double rows) {
    return m / (m + rows) * n / (n + dim) * k / (k + dim);
  }

  /** As {@code RooflineMemoryModel.matmulSeconds}: the slower of compute and memory traffic. */
  private static double matmul(double m, double n, double k, double peak, double e, double dim,
      double rows, double bytes, double bandwidth) {
    double compute = 2 * m * n * k / (peak * e * shape(m, n, k, dim, rows));
    double memory = bytes * (m * k + k * n + m * n) / bandwidth;
    return Math.max(compute, memory);
  }
}
