package io.hyperframes.runtime;

import static com.google.common.base.Preconditions.checkArgument;

import com.google.common.collect.ImmutableList;
import io.hyperframes.diagnose.Finding;
import io.hyperframes.diagnose.Severity;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The troubleshooting tables of the hyperframes method as rules over a {@link BenchmarkRecord}:
 * each rule reads named metrics (and conditions) of the record, and fires with its symptom, the
 * evidence, the likely cause and the remedy. A rule whose metrics the record lacks stays silent.
 * docs/troubleshooting.md maps every row of the source tables to its rule.
 *
 * <p>Metric names the rules read (medians unless said): {@code dataWaitShare},
 * {@code hostCpuShare} with {@code deviceUtilization}, {@code memoryBandwidthShare} with
 * {@code deviceUtilization}, {@code commShare}, {@code scalingEfficiency},
 * {@code nonFiniteSteps} (maximum), any {@code …stepSeconds} (coefficient of variation),
 * {@code memoryPeakBytes} with the condition {@code memoryLimitBytes},
 * {@code memoryReservedBytes} with {@code memoryAllocatedBytes}, {@code deviceUtilization}
 * (coefficient of variation), and {@code p99Seconds} with the conditions {@code batch} and
 * {@code quantized}.
 */
public final class RecordFindings {

  /** Data wait above this share of the step: the loader limits training. */
  public static final double DATA_WAIT_LIMIT = 0.10;
  /** Host CPU above this share while the device is below {@link #IDLE_DEVICE}: host-bound. */
  public static final double BUSY_HOST = 0.90;
  /** Device utilisation below this is "the device waits". */
  public static final double IDLE_DEVICE = 0.50;
  /** Memory bandwidth above this share of the sustained peak: bandwidth-bound. */
  public static final double BANDWIDTH_LIMIT = 0.80;
  /** Communication above this share of the step: the network sets the ceiling. */
  public static final double COMM_LIMIT = 0.30;
  /** Scaling efficiency below this: adding devices buys little. */
  public static final double SCALING_LIMIT = 0.70;
  /** Step-time coefficient of variation above this: the environment is not clean. */
  public static final double NOISE_LIMIT = 0.10;
  /** Peak memory above this share of the limit: out-of-memory risk. */
  public static final double MEMORY_LIMIT = 0.90;
  /** Reserved over allocated memory above this: fragmentation. */
  public static final double FRAGMENTATION_LIMIT = 1.30;
  /** Device utilisation coefficient of variation above this: scheduling jitter. */
  public static final double UTILISATION_JITTER = 0.30;
  /** Batch at or below this counts as small for inference. */
  public static final int SMALL_BATCH = 4;

  private RecordFindings() {}

  /** The findings for {@code record}. */
  public static List<Finding> of(BenchmarkRecord record) {
    checkArgument(record != null, "record: must be given");
    Map<String, BenchmarkRecord.Metric> m = record.metrics();
    Map<String, String> c = record.conditions();
    List<Finding> out = new ArrayList<>();
    bottlenecks(m, out);
    health(m, out);
    memory(m, c, out);
    scheduling(m, c, out);
    return ImmutableList.copyOf(out);
  }

  /** What limits the step: the loader, the host, memory bandwidth, the network, scaling. */
  private static void bottlenecks(Map<String, BenchmarkRecord.Metric> m, List<Finding> out) {
    Double dataWait = median(m, "dataWaitShare");
    if (dataWait != null && dataWait > DATA_WAIT_LIMIT) {
      out.add(new Finding("loader-bound", Severity.WARNING,
          pct("data wait is %s of the step: the loader limits training", dataWait),
          "median dataWaitShare " + fmt(dataWait),
          "asynchronous prefetching with more loader workers and a deeper queue; pre-encode the"
              + " data (token IDs, memory-mapped binary batches)"));
    }
    Double host = median(m, "hostCpuShare");
    Double device = median(m, "deviceUtilization");
    if (host != null && device != null && host > BUSY_HOST && device < IDLE_DEVICE) {
      out.add(new Finding("host-bound", Severity.WARNING,
          "the host CPU is busy while the device waits: preprocessing or copies limit the step",
          "median hostCpuShare " + fmt(host) + ", deviceUtilization " + fmt(device),
          "move decoding and tokenisation out of the loop (pre-encoded formats), prefetch, and"
              + " use pinned host memory within its system limit"));
    }
    Double bandwidth = median(m, "memoryBandwidthShare");
    if (bandwidth != null && device != null && bandwidth > BANDWIDTH_LIMIT
        && device < IDLE_DEVICE) {
      out.add(new Finding("memory-bandwidth-bound", Severity.WARNING,
          pct("memory bandwidth is at %s of its sustained peak while compute idles",
              bandwidth),
          "median memoryBandwidthShare " + fmt(bandwidth) + ", deviceUtilization "
              + fmt(device),
          "fuse element-wise kernels, keep data close (cache, device memory before host), lower"
              + " precision of activations"));
    }
    Double comm = median(m, "commShare");
    if (comm != null && comm > COMM_LIMIT) {
      out.add(new Finding("communication-bound", Severity.WARNING,
          pct("communication is %s of the step: the network sets the ceiling", comm),
          "median commShare " + fmt(comm),
          "keep tensor parallelism inside a node, overlap the reduction with backward, larger"
              + " gradient buckets, gradient compression, a faster fabric; check links with a"
              + " communication benchmark"));
    }
    Double scaling = median(m, "scalingEfficiency");
    if (scaling != null && scaling < SCALING_LIMIT) {
      out.add(new Finding("poor-scaling", Severity.WARNING,
          pct("scaling efficiency is %s: more devices buy little", scaling),
          "median scalingEfficiency " + fmt(scaling),
          "measure communication alone and compute alone; change the parallel layout or the"
              + " topology before adding devices"));
    }
  }

  /** Whether the run is sound: finite values, a clean environment. */
  private static void health(Map<String, BenchmarkRecord.Metric> m, List<Finding> out) {
    BenchmarkRecord.Metric nonFinite = m.get("nonFiniteSteps");
    if (nonFinite != null && max(nonFinite.samples()) > 0) {
      out.add(new Finding("non-finite", Severity.CRITICAL,
          "the loss or gradients became NaN or infinite: mixed precision too aggressive",
          "nonFiniteSteps up to " + fmt(max(nonFinite.samples())),
          "keep sensitive operations in FP32 (norms, softmax, loss), dynamic loss scaling, or"
              + " BF16 instead of FP16"));
    }
    for (Map.Entry<String, BenchmarkRecord.Metric> e : m.entrySet()) {
      if (!e.getKey().endsWith("stepSeconds")) {
        continue;
      }
      double[] steps = e.getValue().samples();
      if (steps.length >= 5) {
        double cv = cv(steps);
        if (cv > NOISE_LIMIT) {
          out.add(new Finding("noisy-environment", Severity.WARNING,
              pct("step times vary by %s: the environment is not clean", cv),
              e.getKey() + " coefficient of variation " + fmt(cv),
              "empty the node before benchmarking: stop other jobs, services and monitoring"
                  + " agents; no per-step logging in the loop"));
          break;
        }
      }
    }
  }

  /** Device memory: the limit and fragmentation. */
  private static void memory(Map<String, BenchmarkRecord.Metric> m, Map<String, String> c,
      List<Finding> out) {
    Double peak = median(m, "memoryPeakBytes");
    Double limit = number(c.get("memoryLimitBytes"));
    if (peak != null && limit != null && limit > 0 && peak / limit > MEMORY_LIMIT) {
      out.add(new Finding("oom-risk", Severity.WARNING,
          pct("peak memory is %s of the device: out-of-memory risk", peak / limit),
          "median memoryPeakBytes " + fmt(peak) + " of memoryLimitBytes " + fmt(limit),
          "smaller micro-batch or sequence, recomputation, sharding of optimizer states, one"
              + " model per process"));
    }
    Double reserved = median(m, "memoryReservedBytes");
    Double allocated = median(m, "memoryAllocatedBytes");
    if (reserved != null && allocated != null && allocated > 0
        && reserved / allocated > FRAGMENTATION_LIMIT) {
      out.add(new Finding("fragmentation", Severity.WARNING,
          String.format(Locale.ROOT, "reserved memory is %.2f× the allocated: fragmentation",
              reserved / allocated),
          "median memoryReservedBytes " + fmt(reserved) + ", memoryAllocatedBytes "
              + fmt(allocated),
          "a memory pool that reuses blocks, fixed or bucketed sequence lengths, automatic"
              + " release of cached blocks"));
    }
  }

  /** How the work is scheduled: utilisation jitter, small unquantised inference batches. */
  private static void scheduling(Map<String, BenchmarkRecord.Metric> m, Map<String, String> c,
      List<Finding> out) {
    BenchmarkRecord.Metric utilisation = m.get("deviceUtilization");
    double jitter = utilisation == null || utilisation.samples().length < 5 ? 0.0
        : cv(utilisation.samples());
    if (jitter > UTILISATION_JITTER) {
      out.add(new Finding("utilisation-jitter", Severity.INFO,
          pct("device utilisation varies by %s: scheduling fragments the work", jitter),
          "deviceUtilization coefficient of variation " + fmt(jitter),
          "check the scheduler's log for preemption and the isolation of co-located jobs"
              + " (memory reservation, priorities)"));
    }
    Double p99 = median(m, "p99Seconds");
    Double batch = number(c.get("batch"));
    if (p99 != null && batch != null && batch <= SMALL_BATCH
        && "false".equalsIgnoreCase(c.get("quantized"))) {
      out.add(new Finding("inference-small-batch", Severity.INFO,
          "inference runs small batches of an unquantised model",
          "batch " + fmt(batch) + ", quantized false, p99 " + fmt(p99) + " s",
          "batch requests (continuous batching) and quantise the weights (INT8 with"
              + " calibration) where the accuracy allows"));
    }
  }

  private static Double median(Map<String, BenchmarkRecord.Metric> m, String name) {
    BenchmarkRecord.Metric x = m.get(name);
    return x == null ? null : x.median();
  }

  private static Double number(String s) {
    if (s == null) {
      return null;
    }
    try {
      return Double.parseDouble(s.trim());
    } catch (NumberFormatException e) {
      return null;
    }
  }

  private static double max(double[] s) {
    double v = Double.NEGATIVE_INFINITY;
    for (double x : s) {
      v = Math.max(v, x);
    }
    return v;
  }

  private static double cv(double[] s) {
    double mean = 0;
    for (double x : s) {
      mean += x;
    }
    mean /= s.length;
    double var = 0;
    for (double x : s) {
      var += (x - mean) * (x - mean);
    }
    var /= Math.max(1, s.length - 1);
    return mean == 0 ? 0 : Math.sqrt(var) / Math.abs(mean);
  }

  private static String fmt(double v) {
    return String.format(Locale.ROOT, "%.4g", v);
  }

  private static String pct(String format, double share) {
    return String.format(Locale.ROOT, format, String.format(Locale.ROOT, "%.0f %%",
        100 * share));
  }
}
