package io.hyperframes;

import io.hyperframes.inference.InferenceEstimator;
import io.hyperframes.interconnect.InterconnectModel;
import io.hyperframes.memory.MemoryHierarchyModel;
import io.hyperframes.parallel.ParallelismModel;
import io.hyperframes.plan.TrainingEstimator;
import io.hyperframes.precision.model.PrecisionModel;

/**
 * The four models every job composes. A builder given {@code models(...)} uses them for all it
 * computes: the plan search and its golden parameters and findings, estimates, serving latency,
 * and validation.
 *
 * <pre>{@code
 * InterconnectModel halfBandwidth = ...;            // a user's model
 * Models mine = Models.analytical().withInterconnect(halfBandwidth);
 * Plan plan = HyperFrames.plan().models(mine)...run();
 * }</pre>
 *
 * @param precision bytes per parameter and peak FLOP/s per format
 * @param memory memory hierarchy and matmul roofline
 * @param interconnect collective times
 * @param parallelism model states, activations and collectives of a layout
 */
public record Models(PrecisionModel precision, MemoryHierarchyModel memory,
    InterconnectModel interconnect, ParallelismModel parallelism) {

  public Models {
    if (precision == null) {
      throw new IllegalArgumentException("models.precision: must be given");
    }
    if (memory == null) {
      throw new IllegalArgumentException("models.memory: must be given");
    }
    if (interconnect == null) {
      throw new IllegalArgumentException("models.interconnect: must be given");
    }
    if (parallelism == null) {
      throw new IllegalArgumentException("models.parallelism: must be given");
    }
  }

  /** The analytical defaults (docs/model-reference.md). */
  public static Models analytical() {
    return new Models(PrecisionModel.analytical(), MemoryHierarchyModel.analytical(),
        InterconnectModel.alphaBeta(), ParallelismModel.megatron());
  }

  /** These models with another precision model. */
  public Models withPrecision(PrecisionModel model) {
    return new Models(model, memory, interconnect, parallelism);
  }

  /** These models with another memory-hierarchy model. */
  public Models withMemory(MemoryHierarchyModel model) {
    return new Models(precision, model, interconnect, parallelism);
  }

  /** These models with another interconnect model. */
  public Models withInterconnect(InterconnectModel model) {
    return new Models(precision, memory, model, parallelism);
  }

  /** These models with another parallelism model. */
  public Models withParallelism(ParallelismModel model) {
    return new Models(precision, memory, interconnect, model);
  }

  /** The training estimator over these models. */
  public TrainingEstimator trainingEstimator() {
    return TrainingEstimator.of(precision, memory, interconnect, parallelism);
  }

  /** The serving estimator over these models. */
  public InferenceEstimator inferenceEstimator() {
    return InferenceEstimator.of(precision, memory, interconnect);
  }
}
