package io.hyperframes.plan;

import io.hyperframes.diagnose.Finding;
import io.hyperframes.diagnose.Severity;
import com.google.common.collect.ImmutableList;
import io.hyperframes.hardware.Cluster;
import io.hyperframes.model.ModelSpec;
import io.hyperframes.model.TransformerSpec;
import io.hyperframes.parallel.Layout;
import io.hyperframes.plan.TimeBreakdown;
import io.hyperframes.plan.TrainingEstimate;
import io.hyperframes.precision.NumberFormat;
import io.hyperframes.workload.GradientCompression;
import io.hyperframes.workload.TrainingWorkload;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Rules that turn a training estimate into advice. Thresholds come from the hyperframes method
 * (communication above 30 % of the step: fix the network before adding cards; device utilisation
 * below 50 % means a bottleneck in the pipeline; host memory 1.5-2× device memory), from
 * Narayanan et al. 2021 (pipeline bubble (p-1)/m: keep m ≥ 4p), and from Hoffmann et al. 2022
 * (about 20 training tokens per parameter for compute-optimal training).
 */
public final class TrainingFindings {
  private TrainingFindings() {}

  /** Communication share above which the network, not the device count, limits scaling. */
  public static final double COMM_SHARE_LIMIT = 0.30;
  /**
   * Share of the step that exposed data-parallel collectives must take before a layout that
   * turns off an overlap its engine runs is told so (a judgement: a twentieth of the step).
   */
  static final double OVERLAP_OFF_LIMIT = 0.05;
  /** Bubble share of the step above which the pipeline needs more micro-batches. */
  public static final double BUBBLE_LIMIT = 0.15;
  /** Free memory below which allocator fragmentation risks out-of-memory errors. */
  public static final double HEADROOM_LIMIT = 0.10;
  /** MFU below which the devices are mostly waiting. */
  public static final double MFU_LIMIT = 0.35;
  /** Scaling efficiency below which adding devices buys little. */
  public static final double SCALING_LIMIT = 0.80;

  /** The findings for an estimate of {@code model} on {@code cluster}. */
  public static List<Finding> of(TrainingEstimate e, ModelSpec model, Cluster cluster,
      TrainingWorkload workload) {
    List<Finding> out = new ArrayList<>();
    memory(out, e, model, cluster, workload);
    if (e.stepSeconds() <= 0) {
      return ImmutableList.copyOf(out);
    }
    communication(out, e, model, cluster, workload);
    schedule(out, e, model, cluster, workload);
    kernels(out, e, model, cluster, workload);
    data(out, e, model, cluster, workload);
    return ImmutableList.copyOf(out);
  }

  /** Whether the plan fits, and its memory headroom. */
  private static void memory(List<Finding> out, TrainingEstimate e, ModelSpec model,
      Cluster cluster, TrainingWorkload workload) {
    double capacity = cluster.accelerator().memoryBytes();
    if (!e.feasible()) {
      out.add(new Finding("infeasible", Severity.CRITICAL, "the plan does not fit or cannot run",
          String.join("; ", e.reasons()),
          "use more devices, more pipeline or tensor parallelism, ZeRO sharding, activation"
              + " recomputation, or an accelerator with more memory"));
    }
    double headroom = 1.0 - e.memory().totalBytes() / capacity;
    if (e.feasible() && headroom < HEADROOM_LIMIT) {
      out.add(new Finding("memory-headroom", Severity.WARNING,
          pct("memory headroom is %s of the device", headroom),
          fmt("%.1f GiB used of %.1f GiB", gib(e.memory().totalBytes()), gib(capacity)),
          "keep at least 10 % free against fragmentation: smaller micro-batch, selective"
              + " recomputation, sequence parallelism or a higher ZeRO stage"));
    }
  }

  /**
   * Exposed communication: its share of the step, the all-to-all, expert imbalance, data
   * parallelism and its codec.
   */
  private static void communication(List<Finding> out, TrainingEstimate e, ModelSpec model,
      Cluster cluster, TrainingWorkload workload) {
    TimeBreakdown t = e.time();
    Layout l = e.layout();
    double step = e.stepSeconds();
    if (e.commShare() > COMM_SHARE_LIMIT) {
      out.add(new Finding("comm-bound", Severity.WARNING,
          pct("communication is %s of the step: fix the network before adding cards",
              e.commShare()),
          fmt("exposed communication %.3g s of a %.3g s step (tensor %.3g s, pipeline %.3g s,"
              + " data-parallel %.3g s)", t.exposedCommSeconds(), step,
              t.tensorParallelCommSeconds(), t.pipelineCommSeconds(),
              t.dataParallelCommSeconds()),
          "keep tensor parallelism inside a node, overlap the gradient reduction with backward,"
              + " raise the global batch, or move to a faster fabric (more NICs per node)"));
    }
    double allToAll = t.allToAllSeconds() / step;
    if (allToAll > COMM_SHARE_LIMIT) {
      // The expert-parallel group's ranks are etp apart (Megatron-Core's expert rank grid).
      boolean inside = l.ep() * l.etp() <= cluster.devicesPerNode();
      String remedy = inside ? "lower ep (more experts per rank), raise the micro-batch to"
          + " amortise the exchange, or drop tensor parallelism of the experts"
          : "keep expert parallelism inside the NVLink domain (ep·etp ≤ "
              + cluster.devicesPerNode() + ": layout.etp 1 puts the expert-parallel ranks"
              + " next to each other), or lower ep"
              + (l.moeDispatcher() == io.hyperframes.parallel.MoeDispatcher.ALL_TO_ALL
                  ? ", or dispatch with DeepEP (layout.moeDispatcher deepep: a token crosses"
                      + " the network once per destination node, not once per routed expert)"
                  : "");
      if (!l.overlapMoeComm() && l.whyNotOverlapMoeComm() == null) {
        remedy += "; or hide it behind another micro-batch's computation"
            + " (layout.overlapMoeComm, Megatron-Core's --overlap-moe-expert-parallel-comm)";
      }
      out.add(new Finding("all-to-all-bound", Severity.WARNING,
          pct("the expert-parallel all-to-all is %s of the step", allToAll),
          fmt("dispatch and combine %.3g s of a %.3g s step at ep %d over %s", t.allToAllSeconds(),
              step, l.ep(), inside ? "the node's " + cluster.intraNode().id()
                  : "the nodes' " + cluster.interNode().id() + " (ep·etp = " + l.ep() * l.etp()
                      + " > " + cluster.devicesPerNode() + " devices per node)"),
          remedy));
    }
    if (model instanceof TransformerSpec ts && ts.isMoe() && ts.moe().routed()
        && ts.moe().capacityFactor() == 0 && l.ep() > 1
        && workload.moeLoadImbalance() == TrainingWorkload.DEFAULT_MOE_LOAD_IMBALANCE) {
      out.add(new Finding("moe-balance-assumed", Severity.INFO,
          "dropless routing is estimated as perfectly balanced",
          fmt("workload.moeLoadImbalance %.2f at ep %d with %d experts: the busiest rank computes"
              + " and exchanges the mean load; Megatron-Core's Qwen3-235B-A22B dropless runs"
              + " measure %.2f (their steps 9 %% to 25 %% longer than forced balance at 16K-128K"
              + " tokens)",
              workload.moeLoadImbalance(), l.ep(), ts.moe().experts(),
              TrainingWorkload.MEASURED_DROPLESS_MOE_LOAD_IMBALANCE),
          fmt("for a dropless router with an auxiliary loss set workload.moeLoadImbalance to about"
              + " %.2f (docs/model-reference.md, \"Dropless load imbalance\"); 1 is right for"
              + " forced balance (--moe-router-force-load-balancing) or a router kept balanced",
              TrainingWorkload.MEASURED_DROPLESS_MOE_LOAD_IMBALANCE)));
    }
    double dataParallel = t.dataParallelCommSeconds() / step;
    // The flag is run off only where the engine can (Engine#overlapUnsupported),
    // and there it exposes the reduction at every ZeRO stage.
    boolean gradOff = l.gradReduceOverlapOff();
    boolean gatherOff = l.paramGatherOverlapOff() && (l.zeroStage() == 1 || l.zeroStage() == 2);
    if ((gradOff || gatherOff) && l.dp() > 1 && dataParallel > OVERLAP_OFF_LIMIT) {
      String off = gradOff && gatherOff ? "the gradient reduction and the parameter gather"
          : gradOff ? "the gradient reduction" : "the parameter gather";
      out.add(new Finding("data-parallel-overlap-off", Severity.WARNING,
          pct("data parallelism is exposed for %s of the step: " + off + " is not overlapped",
              dataParallel),
          fmt("%s runs %s, not overlapped, at dp %d: %.3g s exposed of a %.3g s step", off,
              gradOff ? "after the last backward pass" : "after the optimizer step", l.dp(),
              t.dataParallelCommSeconds(), step),
          "overlap it, as " + l.engine().displayName() + " can: layout.overlapGradReduce and"
              + " layout.overlapParamGather true (the default; Megatron-LM's"
              + " --overlap-grad-reduce and --overlap-param-gather)"));
    }
    GradientCompression codec = workload.gradientCompression();
    if (codec == null && dataParallel > COMM_SHARE_LIMIT && l.dp() > 1
        && l.zeroStage() <= 1) {
      out.add(new Finding("gradient-compression", Severity.INFO,
          pct("the gradient reduction is %s of the step: compression could shorten it",
              dataParallel),
          fmt("data-parallel exposed %.3g s of a %.3g s step over dp %d; a codec whose messages"
              + " need an all-gather (top-k, sign, INT8) saves bytes only above a ratio of"
              + " about dp / 2 = %.0f", t.dataParallelCommSeconds(), step, l.dp(), l.dp() / 2.0),
          "model a codec with workload.gradientCompression (ratio, device encode/decode GB/s,"
              + " allReduce) and compare: an all-reduce-compatible one (BF16 gradients, PowerSGD)"
              + " divides the reduction by its ratio, top-k 1 % with error feedback sends about"
              + " 1/76 of the FP32 bytes (docs/compression.md); validate the accuracy before"
              + " trusting a ratio"));
    }
    if (codec != null && !codec.allReduce() && l.dp() > 1 && codec.ratio() < l.dp() / 2.0) {
      out.add(new Finding("compression-gathers-more", Severity.WARNING,
          "the gradient codec sends more than it saves at this data-parallel size",
          fmt("%s gathers dp − 1 = %d messages of 1/%.0f of the FP32 gradient per rank, more"
              + " than a ring all-reduce moves (about 2× the gradient) below a ratio of dp / 2 ="
              + " %.0f", codec.codec(), l.dp() - 1, codec.ratio(), l.dp() / 2.0),
          "use an all-reduce-compatible codec, a higher ratio, or none at this scale"));
    }
  }

  /** The pipeline bubble, MFU, scaling efficiency and micro-batches per pipeline. */
  private static void schedule(List<Finding> out, TrainingEstimate e, ModelSpec model,
      Cluster cluster, TrainingWorkload workload) {
    TimeBreakdown t = e.time();
    Layout l = e.layout();
    double step = e.stepSeconds();
    double bubble = t.bubbleSeconds() / step;
    if (bubble > BUBBLE_LIMIT) {
      out.add(new Finding("pipeline-bubble", Severity.WARNING,
          pct("the pipeline bubble is %s of the step", bubble),
          fmt("pp = %d, %d micro-batches per step, %d virtual stages", l.pp(),
              microBatches(e, workload), l.virtualStages()),
          "use at least 4 micro-batches per pipeline stage, interleaved stages, or less"
              + " pipeline parallelism"));
    }
    if (e.mfu() < MFU_LIMIT) {
      out.add(new Finding("low-mfu", Severity.WARNING,
          pct("MFU is %s: the devices are mostly waiting", e.mfu()),
          fmt("%.0f TFLOP/s per device of a %.0f TFLOP/s peak", e.flopsPerSecondPerDevice()
              / 1e12, e.peakFlopsPerSecond() / 1e12),
          "look at the largest part of the step (communication, bubble, recomputation) and at"
              + " the micro-batch; use BF16/FP8 and fused kernels"));
    }
    if (e.scalingEfficiency() < SCALING_LIMIT) {
      out.add(new Finding("scaling-efficiency", Severity.WARNING,
          pct("scaling efficiency is %s", e.scalingEfficiency()),
          fmt("1 / (1 + C/T) with C = %.3g s exposed communication, T = %.3g s compute",
              t.exposedCommSeconds(), t.computeSeconds() + t.recomputeSeconds()),
          "each added device buys less than 80 % of a device: reduce communication first"));
    }
    int m = microBatches(e, workload);
    if (l.pp() > 1 && m < l.pp()) {
      out.add(new Finding("batch-too-small", Severity.WARNING,
          fmt("%d micro-batches cannot fill a %d-stage pipeline", m, l.pp()),
          fmt("global batch %d = dp %d × micro-batch %d × %d", workload.globalBatchSize(),
              l.dp(), l.microBatch(), m),
          "raise the global batch or lower pipeline parallelism"));
    }
  }

  /** Matmul rows, tensor parallelism across nodes, and the compute format. */
  private static void kernels(List<Finding> out, TrainingEstimate e, ModelSpec model,
      Cluster cluster, TrainingWorkload workload) {
    Layout l = e.layout();
    // Rows of every matmul: tokens of a micro-batch (samples for a dense stack).
    int rows = l.microBatch() * (model instanceof TransformerSpec ts ? ts.seqLen() : 1);
    if (rows < 1024) {
      out.add(new Finding("small-matmuls", Severity.INFO,
          fmt("each micro-batch has only %d %s", rows,
              model instanceof TransformerSpec ? "tokens" : "samples"),
          "matmuls with fewer than ~1024 rows run well below peak",
          "raise the micro-batch if memory allows"));
    }
    if (l.tp() > cluster.devicesPerNode()) {
      out.add(new Finding("tp-across-nodes", Severity.WARNING,
          fmt("tensor parallelism (%d) spans nodes of %d devices", l.tp(),
              cluster.devicesPerNode()),
          "tensor-parallel all-reduces run on the inter-node fabric, 4-20× slower than NVLink",
          "keep tp ≤ devices per node; use pipeline parallelism across nodes"));
    }
    if (workload.precision().compute() == NumberFormat.FP16) {
      out.add(new Finding("fp16-loss-scaling", Severity.INFO,
          "FP16 needs dynamic loss scaling",
          "FP16 has 5 exponent bits: gradients below 6e-8 underflow to zero",
          "use a dynamic loss scaler (initial 2^16, ×2 after 2000 clean steps, ×0.5 and skip on"
              + " overflow) or switch to BF16"));
    }
    if (workload.precision().compute() == NumberFormat.FP32
        || workload.precision().compute() == NumberFormat.TF32) {
      out.add(new Finding("full-precision", Severity.INFO,
          "training in FP32/TF32 leaves the tensor cores' 16-bit throughput unused",
          fmt("peak %.0f TFLOP/s in %s", e.peakFlopsPerSecond() / 1e12,
              workload.precision().compute().id()),
          "use bf16-mixed: half the memory traffic, 2-8× the matmul peak"));
    }
  }

  /** Training tokens per parameter (transformers only). */
  private static void data(List<Finding> out, TrainingEstimate e, ModelSpec model,
      Cluster cluster, TrainingWorkload workload) {
    // The compute-optimal ratio is a language-model law (Hoffmann et al. 2022): transformers only.
    double tokensPerParameter = workload.trainingTokens() / model.parameters();
    if (model instanceof TransformerSpec && workload.trainingTokens() > 0
        && tokensPerParameter < 20) {
      out.add(new Finding("undertrained", Severity.INFO,
          fmt("%.1f training tokens per parameter", tokensPerParameter),
          "compute-optimal training uses about 20 tokens per parameter (Hoffmann et al. 2022)",
          "a smaller model trained on the same tokens may reach the same loss for less"));
    }
  }

  private static int microBatches(TrainingEstimate e, TrainingWorkload w) {
    Layout l = e.layout();
    return Math.max(1, w.globalBatchSize() / (l.dp() * l.microBatch()));
  }

  private static String pct(String format, double share) {
    return String.format(Locale.ROOT, format, String.format(Locale.ROOT, "%.0f %%", 100 * share));
  }

  private static String fmt(String format, Object... args) {
    return String.format(Locale.ROOT, format, args);
  }

  private static double gib(double bytes) {
    return bytes / (1L << 30);
  }
}
