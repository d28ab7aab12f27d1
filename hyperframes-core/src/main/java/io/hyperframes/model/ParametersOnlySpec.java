package io.hyperframes.model;

import static com.google.common.base.Preconditions.checkArgument;

import io.hyperframes.hardware.Checks;

/**
 * A model known only by its parameter count: enough for model-state memory (weights, gradients,
 * optimizer states, ZeRO sharding), not for activations or step time.
 */
public record ParametersOnlySpec(String name, double parameters) implements ModelSpec {
  public ParametersOnlySpec {
    checkArgument(name != null && !name.isBlank(), "model.name: must be given");
    Checks.positive("model.parameters", parameters);
    checkArgument(parameters <= 1e16, "model.parameters: must be <= 1e16, got %s", parameters);
  }
}
