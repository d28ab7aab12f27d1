package io.hyperframes.plan;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.hyperframes.json.Json;
import io.hyperframes.parallel.Layout;
import java.util.List;

/**
 * The JSON form of a {@link TrainingEstimate}: feasible, reasons, layout, parameters, memory,
 * time (with its interval), MFU, throughput, time-to-train and GPU-hours, written by Jackson
 * from the result record of each object (field names are a contract; add, never rename).
 */
public final class EstimateJson {
  private EstimateJson() {}

  /** The estimate as a JSON object. */
  public static ObjectNode toJson(TrainingEstimate e) {
    if (e == null) {
      throw new IllegalArgumentException("estimate: must be given");
    }
    return Json.tree(Estimate.of(e));
  }

  /** A training estimate. */
  public record Estimate(boolean feasible, List<String> reasons, EstimateLayout layout,
      double parameters, double activeParameters, Memory memory, Time time, double mfu, double hfu,
      double tflopsPerDevice, double modelTflopsPerDevice, double tokensPerSecond,
      double tokensPerSecondPerDevice, double commShare, double scalingEfficiency, double trainingDays, double trainingDaysLow,
      double trainingDaysHigh, Interval interval, double gpuHours, long devices) {

    /** The document of {@code e}. */
    public static Estimate of(TrainingEstimate e) {
      Layout l = e.layout();
      MemoryBreakdown m = e.memory();
      TimeBreakdown t = e.time();
      return new Estimate(e.feasible(), e.reasons(),
          new EstimateLayout(l.tp(), l.pp(), l.dp(), l.virtualStages(), l.microBatch(),
              l.sequenceParallel(), l.recompute().id(), l.zeroStage(), l.engine().id(),
              l.shardGroupSize(), l.reshardAfterForward(), l.ep(), l.etp(), l.cp(),
              l.cpCommType().id(),
              io.hyperframes.parallel.RecomputeModule.ids(l.recomputeModules()),
              l.moeDispatcher().id(), l.overlapMoeComm(), l.firstStageLayers(),
              l.lastStageLayers(), l.overlapGradReduce(), l.overlapParamGather()),
          e.parameters(), e.activeParameters(),
          new Memory(m.weightsBytes(), m.gradientsBytes(), m.optimizerBytes(),
              m.activationsBytes(), m.otherBytes(), m.totalBytes(), m.modelStatesBytes(),
              m.layerStatesBytes(), m.expertStatesBytes()),
          new Time(t.stepSeconds(), e.stepSecondsLow(), e.stepSecondsHigh(), t.computeSeconds(),
              t.recomputeSeconds(), t.exposedCommSeconds(), t.bubbleSeconds(),
              t.optimizerSeconds(), new CommByKind(t.tensorParallelCommSeconds(),
                  t.pipelineCommSeconds(), t.dataParallelCommSeconds(), t.allToAllSeconds(),
                  t.contextParallelSeconds())),
          e.mfu(), e.hfu(), e.flopsPerSecondPerDevice() / 1e12,
          e.modelFlopsPerSecondPerDevice() / 1e12, e.tokensPerSecond(),
          e.tokensPerSecondPerDevice(), e.commShare(), e.scalingEfficiency(), e.trainingDays(),
          e.trainingDaysLow(), e.trainingDaysHigh(),
          new Interval(e.interval().low(), e.interval().high(), e.interval().cases(),
              e.interval().source(), e.interval().regime()),
          e.gpuHours(), e.devices());
    }

    Estimate withVerdict(boolean isFeasible, List<String> why) {
      return new Estimate(isFeasible, why, layout, parameters, activeParameters, memory, time,
          mfu, hfu,
          tflopsPerDevice, modelTflopsPerDevice, tokensPerSecond, tokensPerSecondPerDevice,
          commShare,
          scalingEfficiency, trainingDays, trainingDaysLow, trainingDaysHigh, interval, gpuHours,
          devices);
    }
  }

  /** {@code layout} of an estimate. */
  public record EstimateLayout(int tp, int pp, int dp, int virtualStages, int microBatch,
      boolean sequenceParallel, String recompute, int zeroStage, String engine,
      int shardGroupSize, boolean reshardAfterForward, int ep, int etp, int cp,
      String cpCommType, List<String> recomputeModules, String moeDispatcher,
      boolean overlapMoeComm, int firstStageLayers, int lastStageLayers,
      boolean overlapGradReduce, boolean overlapParamGather) {}

  /** {@code memory} of an estimate, bytes per device. */
  public record Memory(double weightsBytes, double gradientsBytes, double optimizerBytes,
      double activationsBytes, double otherBytes, double totalBytes, double modelStatesBytes,
      double layerStatesBytes, double expertStatesBytes) {}

  /** {@code time} of an estimate, seconds per step. */
  public record Time(double stepSeconds, double stepSecondsLow, double stepSecondsHigh,
      double computeSeconds, double recomputeSeconds, double exposedCommSeconds,
      double bubbleSeconds, double optimizerSeconds, CommByKind exposedCommByKind) {}

  /** {@code time.exposedCommByKind}. */
  public record CommByKind(double tensorParallelSeconds, double pipelineSeconds,
      double dataParallelSeconds, double allToAllSeconds, double contextParallelSeconds) {}

  /**
   * {@code interval}: the empirical step-time band, the generation and regime it was looked up
   * for, the published cases of that regime it rests on (0: none, the source says so) and how it
   * was derived.
   */
  public record Interval(double low, double high, int cases, String source, String regime) {}
}
