package io.hyperframes.runtime;

import static com.google.common.base.Preconditions.checkArgument;
import static com.google.common.base.Preconditions.checkState;

import com.google.common.collect.ImmutableList;
import io.hyperframes.diagnose.Finding;
import io.hyperframes.diagnose.Severity;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.HdrHistogram.Histogram;

/**
 * Measures every training step: data wait, forward + backward (with the forward part when the
 * loop marks it), optimizer, total; keeps percentiles in HdrHistograms (no allocation and no
 * logging per step) and turns them into findings. For a hand-written loop (plain ND4J, or any
 * other) use {@link #begin()} with try-with-resources; DL4J networks attach
 * {@code io.hyperframes.nd4j.train.StepMeterListener}, DJL trainers
 * {@code io.hyperframes.djl.HyperFramesListener}: each feeds one of these.
 *
 * <pre>{@code
 * try (StepMeter.Step s = meter.begin()) {
 *   DataSet batch = iterator.next();
 *   s.dataReady(batch.numExamples());
 *   ... forward ...
 *   s.forwardDone();   // optional: splits forward from backward
 *   ... backward ...
 *   s.computeDone();
 *   ... optimizer update ...
 * }
 * }</pre>
 *
 * <p>Not thread-safe: one meter per training loop; {@link #summary()} may be called between
 * steps.
 */
public final class StepMeter {

  /** Data wait above this share of the step means the loader limits training. */
  public static final double DATA_WAIT_LIMIT = 0.10;
  /** Optimizer above this share of the step means the update dominates. */
  public static final double OPTIMIZER_LIMIT = 0.30;

  private static final long MAX_NANOS = 3_600_000_000_000L;

  private final Histogram dataWait = new Histogram(MAX_NANOS, 3);
  private final Histogram compute = new Histogram(MAX_NANOS, 3);
  private final Histogram optimizer = new Histogram(MAX_NANOS, 3);
  private final Histogram total = new Histogram(MAX_NANOS, 3);
  private final Step step = new Step();
  private long samples;
  private long sumForward;
  private long sumData;
  private long sumCompute;
  private long sumOptimizer;
  private long sumTotal;
  private long[] stepNanos = new long[256];
  private long[] stepExamples = new long[256];
  private int recorded;

  /** A meter with nothing recorded. */
  public StepMeter() {}

  /** One step's timestamps; reused, so that measuring allocates nothing. */
  public final class Step implements AutoCloseable {
    private long start;
    private long dataReady;
    private long forwardDone;
    private long computeDone;
    private long examples;
    private boolean open;

    private Step() {}

    /** The batch is in hand. */
    public void dataReady(long batchExamples) {
      checkState(open, "step: not begun");
      dataReady = System.nanoTime();
      examples = batchExamples;
    }

    /** The forward pass is done (optional); what follows until {@link #computeDone} is backward. */
    public void forwardDone() {
      checkState(open, "step: not begun");
      forwardDone = System.nanoTime();
    }

    /** Forward and backward are done; what follows until close is the optimizer. */
    public void computeDone() {
      checkState(open, "step: not begun");
      computeDone = System.nanoTime();
    }

    /**
     * Ends the step and records it; a step closed before {@link #dataReady} (the loop found no
     * more data and left) is not a step and is not recorded.
     */
    @Override
    public void close() {
      checkState(open, "step: not begun");
      open = false;
      if (dataReady == 0) {
        return;
      }
      long end = System.nanoTime();
      long d = dataReady > 0 ? dataReady : start;
      long c = computeDone > 0 ? computeDone : end;
      long f = forwardDone > 0 ? Math.min(Math.max(forwardDone - d, 0), c - d) : 0;
      record(d - start, f, c - d, end - c, end - start, examples);
    }
  }

  /** Begins a step (the previous one must be closed). */
  public Step begin() {
    checkState(!step.open, "step: the previous step was not closed");
    step.open = true;
    step.start = System.nanoTime();
    step.dataReady = 0;
    step.forwardDone = 0;
    step.computeDone = 0;
    step.examples = 0;
    return step;
  }

  /** Records one step measured elsewhere (nanoseconds), its forward part unknown. */
  public void record(long dataNanos, long computeNanos, long optimizerNanos, long totalNanos,
      long examples) {
    record(dataNanos, 0, computeNanos, optimizerNanos, totalNanos, examples);
  }

  /**
   * Records one step measured elsewhere (nanoseconds); {@code forwardNanos} is the forward part
   * of {@code computeNanos} (0 when not known).
   */
  public void record(long dataNanos, long forwardNanos, long computeNanos, long optimizerNanos,
      long totalNanos, long examples) {
    checkArgument(dataNanos >= 0 && computeNanos >= 0 && optimizerNanos >= 0 && totalNanos >= 0,
        "durations: must be >= 0");
    checkArgument(forwardNanos >= 0 && forwardNanos <= computeNanos,
        "forwardNanos: must be in [0, computeNanos], got %s of %s", forwardNanos, computeNanos);
    checkArgument(examples >= 0, "examples: must be >= 0, got %s", examples);
    sumForward += forwardNanos;
    dataWait.recordValue(Math.min(dataNanos, MAX_NANOS));
    compute.recordValue(Math.min(computeNanos, MAX_NANOS));
    optimizer.recordValue(Math.min(optimizerNanos, MAX_NANOS));
    total.recordValue(Math.min(totalNanos, MAX_NANOS));
    sumData += dataNanos;
    sumCompute += computeNanos;
    sumOptimizer += optimizerNanos;
    sumTotal += totalNanos;
    samples += examples;
    if (recorded == stepNanos.length) {
      stepNanos = java.util.Arrays.copyOf(stepNanos, 2 * recorded);
      stepExamples = java.util.Arrays.copyOf(stepExamples, 2 * recorded);
    }
    stepNanos[recorded] = totalNanos;
    stepExamples[recorded++] = examples;
  }

  /** Every step's duration so far, seconds, in order (the raw samples behind the summary). */
  public double[] stepSeconds() {
    double[] out = new double[recorded];
    for (int i = 0; i < recorded; i++) {
      out[i] = stepNanos[i] / 1e9;
    }
    return out;
  }

  /** Every step's examples per second so far, in order (0 for a step of no time). */
  public double[] stepSamplesPerSecond() {
    double[] out = new double[recorded];
    for (int i = 0; i < recorded; i++) {
      out[i] = stepNanos[i] > 0 ? stepExamples[i] * 1e9 / stepNanos[i] : 0.0;
    }
    return out;
  }

  /**
   * Percentiles and shares so far.
   *
   * @param steps steps measured
   * @param samplesPerSecond examples per second of measured time
   * @param dataWaitShare data wait / total
   * @param computeShare forward + backward / total ("device utilisation")
   * @param forwardShare forward / total, where the loop marks it (else 0)
   * @param optimizerShare optimizer / total
   * @param p50Seconds median step
   * @param p99Seconds 99th-percentile step
   * @param dataWaitP99Seconds 99th-percentile data wait
   * @param findings advice
   */
  public record Summary(long steps, double samplesPerSecond, double dataWaitShare,
      double computeShare, double forwardShare, double optimizerShare, double p50Seconds,
      double p99Seconds, double dataWaitP99Seconds, List<Finding> findings) {
    public Summary {
      findings = ImmutableList.copyOf(findings);
    }

    /**
     * One line for a log: {@code "48 steps, 5210 samples/s, data wait 1.2 %, compute 80.1 %
     * (forward 30.2 %), optimizer 18.7 %"}, the forward part where the loop marks it.
     */
    public String line() {
      return String.format(Locale.ROOT, "%d steps, %.0f samples/s, data wait %.1f %%, compute"
          + " %.1f %%%s, optimizer %.1f %%", steps, samplesPerSecond, 100 * dataWaitShare,
          100 * computeShare, forwardShare > 0
              ? String.format(Locale.ROOT, " (forward %.1f %%)", 100 * forwardShare) : "",
          100 * optimizerShare);
    }
  }

  /** The summary of the steps measured so far. */
  public Summary summary() {
    long steps = total.getTotalCount();
    double seconds = sumTotal / 1e9;
    double share = sumTotal > 0 ? 1.0 / sumTotal : 0;
    double dataShare = sumData * share;
    double computeShare = sumCompute * share;
    double optShare = sumOptimizer * share;
    List<Finding> findings = new ArrayList<>();
    if (steps > 0 && dataShare > DATA_WAIT_LIMIT) {
      findings.add(new Finding("loader-bound", Severity.WARNING, pct("data wait is %s of the"
          + " step: the loader limits training", dataShare), fmt("p99 data wait %.3g ms of a"
          + " %.3g ms p50 step", dataWait.getValueAtPercentile(99) / 1e6,
          total.getValueAtPercentile(50) / 1e6), "more loader workers, a deeper prefetch queue,"
          + " pre-encoded memory-mapped data"));
    }
    if (steps > 0 && optShare > OPTIMIZER_LIMIT) {
      findings.add(new Finding("optimizer-bound", Severity.WARNING, pct("the optimizer takes %s"
          + " of the step", optShare), fmt("%.3g ms per step", sumOptimizer / 1e6 / steps),
          "larger batches amortise the update; fused optimizers"));
    }
    double p50 = total.getValueAtPercentile(50) / 1e9;
    double p99 = total.getValueAtPercentile(99) / 1e9;
    if (steps >= 100 && p50 > 0 && p99 > 2 * p50) {
      findings.add(new Finding("step-jitter", Severity.INFO, fmt("p99 step is %.1f× the median",
          p99 / p50), fmt("p50 %.3g ms, p99 %.3g ms", p50 * 1e3, p99 * 1e3),
          "look for GC pauses, logging in the loop, or a shared machine"));
    }
    return new Summary(steps, seconds > 0 ? samples / seconds : 0, dataShare, computeShare,
        sumForward * share, optShare, p50, p99, dataWait.getValueAtPercentile(99) / 1e9, findings);
  }

  private static String pct(String format, double share) {
    return String.format(Locale.ROOT, format, String.format(Locale.ROOT, "%.0f %%", 100 * share));
  }

  private static String fmt(String format, Object... args) {
    return String.format(Locale.ROOT, format, args);
  }
}
