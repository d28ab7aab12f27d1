package io.hyperframes.plan;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.hyperframes.parallel.Layout;

/** The JSON form of a {@link TrainingEstimate} (field names are a contract; add, never rename). */
public final class EstimateJson {
  private EstimateJson() {}

  /** The estimate as a JSON object. */
  public static ObjectNode toJson(TrainingEstimate e) {
    JsonNodeFactory f = JsonNodeFactory.instance;
    ObjectNode root = f.objectNode();
    root.put("feasible", e.feasible());
    ArrayNode reasons = root.putArray("reasons");
    e.reasons().forEach(reasons::add);
    Layout l = e.layout();
    ObjectNode layout = root.putObject("layout");
    layout.put("tp", l.tp());
    layout.put("pp", l.pp());
    layout.put("dp", l.dp());
    layout.put("virtualStages", l.virtualStages());
    layout.put("microBatch", l.microBatch());
    layout.put("sequenceParallel", l.sequenceParallel());
    layout.put("recompute", l.recompute().id());
    layout.put("zeroStage", l.zeroStage());
    root.put("parameters", e.parameters());
    MemoryBreakdown m = e.memory();
    ObjectNode memory = root.putObject("memory");
    memory.put("weightsBytes", m.weightsBytes());
    memory.put("gradientsBytes", m.gradientsBytes());
    memory.put("optimizerBytes", m.optimizerBytes());
    memory.put("activationsBytes", m.activationsBytes());
    memory.put("otherBytes", m.otherBytes());
    memory.put("totalBytes", m.totalBytes());
    memory.put("modelStatesBytes", m.modelStatesBytes());
    memory.put("layerStatesBytes", m.layerStatesBytes());
    TimeBreakdown t = e.time();
    ObjectNode time = root.putObject("time");
    time.put("stepSeconds", t.stepSeconds());
    time.put("stepSecondsLow", e.stepSecondsLow());
    time.put("stepSecondsHigh", e.stepSecondsHigh());
    time.put("computeSeconds", t.computeSeconds());
    time.put("recomputeSeconds", t.recomputeSeconds());
    time.put("exposedCommSeconds", t.exposedCommSeconds());
    time.put("bubbleSeconds", t.bubbleSeconds());
    time.put("optimizerSeconds", t.optimizerSeconds());
    ObjectNode comm = time.putObject("exposedCommByKind");
    comm.put("tensorParallelSeconds", t.tensorParallelCommSeconds());
    comm.put("pipelineSeconds", t.pipelineCommSeconds());
    comm.put("dataParallelSeconds", t.dataParallelCommSeconds());
    root.put("mfu", e.mfu());
    root.put("hfu", e.hfu());
    root.put("tflopsPerDevice", e.flopsPerSecondPerDevice() / 1e12);
    root.put("tokensPerSecond", e.tokensPerSecond());
    root.put("tokensPerSecondPerDevice", e.tokensPerSecondPerDevice());
    root.put("commShare", e.commShare());
    root.put("scalingEfficiency", e.scalingEfficiency());
    root.put("trainingDays", e.trainingDays());
    root.put("trainingDaysLow", e.trainingDaysLow());
    root.put("trainingDaysHigh", e.trainingDaysHigh());
    ObjectNode interval = root.putObject("interval");
    interval.put("low", e.interval().low());
    interval.put("high", e.interval().high());
    interval.put("cases", e.interval().cases());
    interval.put("source", e.interval().source());
    root.put("gpuHours", e.gpuHours());
    root.put("devices", e.devices());
    return root;
  }
}
