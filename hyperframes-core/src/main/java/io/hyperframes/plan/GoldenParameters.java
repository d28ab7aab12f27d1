package io.hyperframes.plan;

import com.google.common.collect.ImmutableList;
import io.hyperframes.hardware.Cluster;
import io.hyperframes.interconnect.Collective;
import io.hyperframes.interconnect.CollectiveGroup;
import io.hyperframes.interconnect.InterconnectModel;
import io.hyperframes.model.DenseStackSpec;
import io.hyperframes.model.ModelSpec;
import io.hyperframes.model.TransformerSpec;
import io.hyperframes.parallel.Layout;
import io.hyperframes.plan.TrainingEstimate;
import io.hyperframes.precision.NumberFormat;
import io.hyperframes.precision.PrecisionRecipe;
import io.hyperframes.workload.TrainingWorkload;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The golden parameter table of the hyperframes method, derived from a plan and the hardware.
 *
 * <p>Sources: data-loader workers and prefetch from PyTorch's DataLoader semantics (prefetch_factor
 * 2 per worker by default); gradient bucket from PyTorch DDP (bucket_cap_mb 25 by default; Li et
 * al. 2020 §3.2.3), sized here so the collective's latency term stays under 5 % of its transfer
 * time; loss scaling from PyTorch's GradScaler defaults (init_scale 2^16, growth_factor 2,
 * growth_interval 2000, backoff_factor 0.5); host memory 1.5-2× device memory (hyperframes
 * method); checkpoint interval from Young/Daly's optimum sqrt(2·C·MTBF) (Daly 2006, FGCS 22(3))
 * with a per-device MTBF of 50 000 h derived from the 419 unexpected interruptions of Llama 3's
 * 54-day run on 16 384 H100 (Dubey et al. 2024, §3.3.4).
 */
public final class GoldenParameters {
  private GoldenParameters() {}

  /** Per-device mean time between failures in hours (Dubey et al. 2024, §3.3.4). */
  public static final double DEVICE_MTBF_HOURS = 16384.0 * 54 * 24 / 419;
  /** Host CPU time to prepare one pre-tokenised sequence (seconds), when not measured. */
  public static final double DEFAULT_SAMPLE_SECONDS = 1e-3;
  /** Aggregate checkpoint write bandwidth per node (bytes/s), when not measured. */
  public static final double CHECKPOINT_WRITE_PER_NODE = 2e9;

  /** The table for an estimate of {@code model} on {@code cluster}, analytical interconnect. */
  public static List<GoldenParameter> derive(TrainingEstimate e, ModelSpec model,
      Cluster cluster, TrainingWorkload w) {
    return derive(e, model, cluster, w, InterconnectModel.alphaBeta());
  }

  /**
   * The table for an estimate of {@code model} on {@code cluster}; collective-dependent entries
   * (the gradient bucket) are sized with {@code net}.
   */
  public static List<GoldenParameter> derive(TrainingEstimate e, ModelSpec model,
      Cluster cluster, TrainingWorkload w, InterconnectModel net) {
    if (net == null) {
      throw new IllegalArgumentException("interconnectModel: must be given");
    }
    List<GoldenParameter> out = new ArrayList<>();
    Layout l = e.layout();
    // Loader workers, /dev/shm and host memory are a host's (one of a GB200 NVL72 node's 18).
    int hostCores = cluster.hostCoresPerHost() > 0 ? cluster.hostCoresPerHost() : 8;
    int perNode = Math.min(cluster.devices(), cluster.devicesPerHost());
    double step = e.stepSeconds();
    double samplesPerSecondPerRank = step > 0
        ? (double) w.globalBatchSize() / l.dp() / step : 0.0;
    int coresPerDevice = Math.max(1, hostCores / perNode);
    int needed = (int) Math.ceil(samplesPerSecondPerRank * DEFAULT_SAMPLE_SECONDS * 2);
    int workers = Math.max(1, Math.min(Math.max(coresPerDevice - 2, 1), Math.max(2, needed)));
    out.add(new GoldenParameter("dataLoaderWorkers", workers, "per device", fmt(
        "%d host cores / %d devices = %d cores per device, 2 left for the training process and"
            + " NCCL; the loader must deliver %.1f sequences/s per rank at ~%.0f ms each",
        hostCores, perNode, coresPerDevice, samplesPerSecondPerRank,
        DEFAULT_SAMPLE_SECONDS * 1e3)));
    out.add(new GoldenParameter("prefetchDepth", Math.max(2, 2 * workers), "batches", fmt(
        "2 batches per worker (PyTorch prefetch_factor default) so a slow read of one worker"
            + " is hidden by the others")));
    double sampleBytes = loaderSampleBytes(model);
    double shmNeed = loaderSharedMemoryBytes(perNode, workers, Math.max(2, 2 * workers),
        l.microBatch(), sampleBytes);
    double shm = sharedMemoryBytes(shmNeed);
    out.add(new GoldenParameter("sharedMemoryBytesPerNode", shm, "bytes", fmt(
        "/dev/shm of a node: loader workers hand batches to the training process through shared"
            + " memory (PyTorch DataLoader, torch.multiprocessing); %d devices x %d workers x %d"
            + " batches in flight x %d samples x %.0f bytes = %.3g GiB, twice that, at least"
            + " 1 GiB (the container default of 64 MB crashes loaders: the method's compatibility"
            + " table)", perNode, workers, Math.max(2, 2 * workers), l.microBatch(), sampleBytes,
        gib(shmNeed))));
    int m = Math.max(1, w.globalBatchSize() / (l.dp() * l.microBatch()));
    out.add(new GoldenParameter("microBatch", l.microBatch(), "sequences", "chosen by the plan"));
    out.add(new GoldenParameter("gradientAccumulationSteps", m, "steps", fmt(
        "global batch %d / (dp %d × micro-batch %d)", w.globalBatchSize(), l.dp(),
        l.microBatch())));
    out.add(new GoldenParameter("recompute", l.recompute().id(), "", "chosen by the plan:"
        + " the least recomputation that fits in memory"));
    out.add(new GoldenParameter("sequenceParallel", l.sequenceParallel(), "", l.tp() > 1
        ? "shards norms and dropout activations over the tensor-parallel group (Korthikanti 2022)"
        : "no tensor parallelism"));
    out.add(new GoldenParameter("zeroStage", l.zeroStage(), "", "chosen by the plan"));
    out.add(bucket(e, cluster, l, net));
    out.add(new GoldenParameter("overlapGradReduce", l.dp() > 1 && l.overlapGradReduce(), "",
        "reduce gradient buckets while backward continues (DDP / Megatron"
        + " --overlap-grad-reduce)"));
    out.addAll(lossScale(w.precision()));
    double deviceMemoryPerNode = perNode * cluster.accelerator().memoryBytes();
    out.add(new GoldenParameter("hostMemoryBytesPerNode", 2 * deviceMemoryPerNode, "bytes", fmt(
        "1.5-2× the %.0f GiB of device memory per node (pinned loader buffers, checkpoint"
            + " snapshots, optimizer offload)%s", gib(deviceMemoryPerNode),
        cluster.hostMemoryBytesPerNode() > 0 ? fmt("; the node template has %.0f GiB",
            gib(cluster.hostMemoryBytesPerHost())) : "")));
    // A token id is 2 or 4 bytes; a dense stack's sample is its FP32 input row.
    double bytesPerToken = model instanceof DenseStackSpec d ? 4.0 * d.widths().get(0)
        : model instanceof TransformerSpec t && t.vocab() > 65535 ? 4 : 2;
    double readBandwidth = e.tokensPerSecond() * bytesPerToken * 2;
    out.add(new GoldenParameter("storageReadBytesPerSecond", readBandwidth, "bytes/s", fmt(
        model instanceof DenseStackSpec
            ? "%.3g samples/s × %.0f bytes per FP32 input row × 2 (headroom for shuffling and"
                + " restarts)"
            : "%.3g tokens/s × %.0f bytes per token id × 2 (headroom for shuffling and restarts)",
        e.tokensPerSecond(), bytesPerToken)));
    double checkpointBytes = e.parameters() * (w.precision().weightBytes()
        + w.precision().masterBytes() + w.optimizer().stateBytesPerParameter());
    out.add(new GoldenParameter("checkpointBytes", checkpointBytes, "bytes", fmt(
        "%.3g parameters × (%.0f weight + %.0f master + %.0f optimizer) bytes", e.parameters(),
        w.precision().weightBytes(), w.precision().masterBytes(),
        w.optimizer().stateBytesPerParameter())));
    double writeSeconds = checkpointBytes / (CHECKPOINT_WRITE_PER_NODE * cluster.nodes());
    double jobMtbfSeconds = DEVICE_MTBF_HOURS * 3600 / cluster.devices();
    double interval = Math.sqrt(2 * writeSeconds * jobMtbfSeconds);
    out.add(new GoldenParameter("checkpointIntervalSeconds", interval, "s", fmt(
        "Young/Daly sqrt(2·C·MTBF): write %.3g s at %.0f GB/s per node, job MTBF %.3g h (%.0f h"
            + " per device / %d devices)%s", writeSeconds, CHECKPOINT_WRITE_PER_NODE / 1e9,
        jobMtbfSeconds / 3600, DEVICE_MTBF_HOURS, cluster.devices(),
        step > 0 ? fmt("; every %d steps", Math.max(1, Math.round(interval / step))) : "")));
    return ImmutableList.copyOf(out);
  }

  /**
   * Bytes of one training sample as a loader worker hands it over: a transformer's input ids and
   * labels as 64-bit integers (PyTorch's default integer tensor), a dense stack's FP32 input row
   * and label.
   */
  public static double loaderSampleBytes(ModelSpec model) {
    if (model instanceof DenseStackSpec d) {
      return 4.0 * (d.widths().get(0) + 1);
    }
    if (model instanceof TransformerSpec t) {
      return 2.0 * 8 * t.seqLen();
    }
    return 2.0 * 8 * 2048;
  }

  /**
   * Shared memory a node's loaders hold at once: devices × workers × batches in flight ×
   * samples per batch × bytes per sample.
   */
  public static double loaderSharedMemoryBytes(int devicesPerNode, int workers, int prefetch,
      int microBatch, double sampleBytes) {
    return (double) devicesPerNode * workers * prefetch * microBatch * sampleBytes;
  }

  /**
   * The {@code /dev/shm} to give a node whose loaders hold {@code needBytes}: twice that, in
   * whole GiB, at least 1 GiB.
   */
  public static double sharedMemoryBytes(double needBytes) {
    return Math.max(1.0, Math.ceil(2 * needBytes / (1L << 30))) * (1L << 30);
  }

  private static GoldenParameter bucket(TrainingEstimate e, Cluster cluster, Layout l,
      InterconnectModel net) {
    if (l.dp() <= 1) {
      return new GoldenParameter("gradientBucketBytes", 25e6, "bytes",
          "no data parallelism: the PyTorch default (25 MB) is irrelevant");
    }
    int perNode = l.tp() >= cluster.devicesPerNode() ? 1
        : Math.min(l.dp(), cluster.devicesPerNode() / l.tp());
    CollectiveGroup group = new CollectiveGroup(l.dp(), perNode);
    // Smallest power-of-two bucket whose all-reduce spends < 5 % in latency: time(S) within
    // 5 % of the pure-bandwidth time at the large-message rate.
    double large = net.time(cluster, Collective.ALL_REDUCE, 1e10, group)
        .busBandwidthBytesPerSecond();
    double s = 1 << 22;
    while (s < 1e9) {
      double bw = net.time(cluster, Collective.ALL_REDUCE, s, group).busBandwidthBytesPerSecond();
      if (bw >= 0.95 * large) {
        break;
      }
      s *= 2;
    }
    double bucket = Math.max(25e6, s);
    return new GoldenParameter("gradientBucketBytes", bucket, "bytes", fmt(
        "smallest bucket whose all-reduce over %d ranks reaches 95 %% of the large-message bus"
            + " bandwidth (%.0f GB/s); never below DDP's 25 MB", l.dp(), large / 1e9));
  }

  private static List<GoldenParameter> lossScale(PrecisionRecipe p) {
    if (p.compute() != NumberFormat.FP16 && p.gradients() != NumberFormat.FP16) {
      return List.of(new GoldenParameter("lossScaling", "off", "", p.name()
          + ": 8 exponent bits, gradients do not underflow; no loss scaling"));
    }
    return List.of(
        new GoldenParameter("lossScaleInitial", 65536, "", "2^16 (PyTorch GradScaler)"),
        new GoldenParameter("lossScaleGrowthFactor", 2.0, "", "×2 after a run of clean steps"),
        new GoldenParameter("lossScaleGrowthInterval", 2000, "steps", "PyTorch default"),
        new GoldenParameter("lossScaleBackoffFactor", 0.5, "", "×0.5 and skip the step on"
            + " Inf/NaN gradients"));
  }

  private static String fmt(String format, Object... args) {
    return String.format(Locale.ROOT, format, args);
  }

  private static double gib(double bytes) {
    return bytes / (1L << 30);
  }
}
