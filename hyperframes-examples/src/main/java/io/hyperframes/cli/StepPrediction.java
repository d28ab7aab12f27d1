package io.hyperframes.cli;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.hyperframes.request.Requests;
import io.hyperframes.catalog.Catalog;
import io.hyperframes.catalog.MachineProfile;
import io.hyperframes.json.Json;
import io.hyperframes.nd4j.probe.HostProbe;
import io.hyperframes.plan.TimeBreakdown;
import io.hyperframes.plan.TrainingEstimator;
import io.hyperframes.runtime.StepMeter;
import java.util.Arrays;

/**
 * {@code bench train --predict}: the planner's step time of the example MLP on a measured
 * profile of this machine and on the spec-sheet figure of a generic CPU, beside the measured
 * step. The request is the MLP as the bench trains it: a dense stack 784-2048-2048-10, one
 * device, the bench's precision (BF16 mixed or FP32), Adam, batch 256 in one micro-batch.
 */
final class StepPrediction {
  private StepPrediction() {}

  /** The request for the example MLP on node template {@code node}. */
  static String request(String node, String recipe) {
    return "{\"model\": {\"name\": \"bench-mlp\", \"dense\": [" + TrainBench.FEATURES + ", "
        + TrainBench.HIDDEN + ", " + TrainBench.HIDDEN + ", " + TrainBench.CLASSES + "]},"
        + " \"cluster\": {\"template\": \"" + node + "\", \"devices\": 1},"
        + " \"workload\": {\"type\": \"training\", \"precision\": \"" + recipe + "\","
        + " \"globalBatchSize\": " + TrainBench.BATCH + ", \"optimizer\": \"adam\"},"
        + " \"layout\": {\"tp\": 1, \"pp\": 1, \"dp\": 1, \"microBatch\": " + TrainBench.BATCH
        + "}}";
  }

  /** The planner's step of the example MLP on the profile's host. */
  static TimeBreakdown time(MachineProfile profile, String recipe) {
    Catalog c = profile.applyTo(Catalog.builtIn());
    return TrainingEstimator.analytical().estimate(Requests.parse(request(profile.nodeId(),
        recipe), c)).time();
  }

  /** The spec-sheet counterpart of this host: its cores, clock, BF16 flag and memory. */
  static MachineProfile generic() {
    return MachineProfile.genericCpu("generic-cpu", Runtime.getRuntime().availableProcessors(),
        HostProbe.clockGhz(), HostProbe.cpuFlag("avx512_bf16"), HostProbe.hostMemoryBytes());
  }

  /**
   * The steps after the first of {@code epochs} epochs (all of them when there is one): the
   * steady state the planner predicts. The first epoch of a fresh JVM also compiles the loop's
   * code (JIT), on the same two cores, which the planner does not model: on 2026-12-02 its
   * median step was 8 % above the second's (docs/benchmarking.md). More epochs give a median
   * over more steps, which a burst of other load on a shared machine moves less.
   */
  static double[] steadySteps(double[] steps, int epochs) {
    if (epochs < 2 || steps.length < epochs) {
      return steps;
    }
    int perEpoch = steps.length / epochs;
    return Arrays.copyOfRange(steps, perEpoch, steps.length);
  }

  /**
   * CPU seconds the bench's input pipeline spends on one batch on this host: the batch over the
   * profile's loader rate with one worker; 0 when the profile measured no loader (a spec sheet).
   * On a host that is also the device, those seconds come out of the cores the step computes
   * on (the planner's step on a GPU does not pay them: its loader runs on the host).
   */
  static double loaderSeconds(MachineProfile profile) {
    return profile.measurement("loader.workers1.samplesPerSecondPerWorker")
        .map(m -> TrainBench.BATCH / m.median()).orElse(0.0);
  }

  /**
   * The JSON {@code prediction} object: the measured median step after the first epoch
   * ({@link #steadySteps}) and the profile's and the
   * generic CPU's predictions with their errors, and the same split into compute (forward,
   * loss and backward), optimizer and loader, measured as the meter's shares of the median step
   * (the loader's: its data wait). A prediction is the planner's step plus
   * {@link #loaderSeconds}.
   */
  static ObjectNode json(StepMeter meter, int epochs, MachineProfile profile, String from,
      String recipe) {
    ObjectNode o = Json.mapper().createObjectNode();
    double[] steps = meter.stepSeconds();
    double measured = com.google.common.math.Quantiles.median().compute(steadySteps(steps,
        epochs));
    StepMeter.Summary summary = meter.summary();
    TimeBreakdown p = time(profile, recipe);
    double pLoader = loaderSeconds(profile);
    double pStep = p.stepSeconds() + pLoader;
    MachineProfile g = generic();
    TimeBreakdown gt = time(g, recipe);
    double gLoader = loaderSeconds(g);
    double gStep = gt.stepSeconds() + gLoader;
    o.put("precision", recipe);
    o.put("measuredStepSeconds", measured);
    o.put("profileStepSeconds", pStep);
    o.put("profileError", pStep / measured - 1);
    o.put("genericStepSeconds", gStep);
    o.put("genericError", gStep / measured - 1);
    ObjectNode parts = o.putObject("parts");
    parts.putObject("measured").put("computeSeconds", summary.computeShare() * measured)
        .put("optimizerSeconds", summary.optimizerShare() * measured)
        .put("loaderSeconds", summary.dataWaitShare() * measured);
    parts.putObject("profile").put("computeSeconds", p.computeSeconds())
        .put("optimizerSeconds", p.optimizerSeconds()).put("loaderSeconds", pLoader);
    parts.putObject("generic").put("computeSeconds", gt.computeSeconds())
        .put("optimizerSeconds", gt.optimizerSeconds()).put("loaderSeconds", gLoader);
    o.put("profile", from);
    o.put("generic", g.conditions().get("source"));
    o.put("isa", profile.conditions().getOrDefault("kernels.onednn.isa", "unknown"));
    return o;
  }
}
