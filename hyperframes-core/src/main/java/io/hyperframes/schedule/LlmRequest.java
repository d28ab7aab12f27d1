package io.hyperframes.schedule;

import static com.google.common.base.Preconditions.checkArgument;

/**
 * One request to an LLM inference service: when it arrives, how long its prompt is and how many
 * tokens it generates (the schema of Azure's LLM inference traces, {@link Traces#azureLlm}).
 *
 * @param arrivalSeconds when it arrives, ≥ 0
 * @param promptTokens tokens of its prompt (context), ≥ 1
 * @param outputTokens tokens it generates, the first by the prefill, ≥ 1
 */
public record LlmRequest(double arrivalSeconds, int promptTokens, int outputTokens) {
  public LlmRequest {
    checkArgument(Double.isFinite(arrivalSeconds) && arrivalSeconds >= 0,
        "request.arrivalSeconds: must be finite and >= 0, got %s", arrivalSeconds);
    checkArgument(promptTokens >= 1, "request.promptTokens: must be >= 1, got %s", promptTokens);
    checkArgument(outputTokens >= 1, "request.outputTokens: must be >= 1, got %s", outputTokens);
  }
}
