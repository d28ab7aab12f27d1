package io.hyperframes.inference;

import static com.google.common.base.Preconditions.checkArgument;

/**
 * What a capacity estimate ({@code workload.mode: capacity}) needs beyond a serving workload:
 * the engine whose scheduler runs the server, its limits and the length distributions of the
 * traffic.
 *
 * @param engine the scheduler followed ({@code workload.engine}, default vllm)
 * @param maxNumSeqs running requests at most ({@code workload.maxNumSeqs}; vLLM
 *     {@code max_num_seqs}, TensorRT-LLM {@code max_batch_size}, SGLang
 *     {@code max_running_requests})
 * @param maxNumTokens tokens per iteration at most ({@code workload.maxNumTokens}; vLLM
 *     {@code max_num_batched_tokens}, TensorRT-LLM {@code max_num_tokens}, SGLang
 *     {@code chunked_prefill_size})
 * @param memoryFraction the engine's memory fraction ({@code workload.memoryFraction}; vLLM
 *     {@code gpu_memory_utilization}, TensorRT-LLM {@code free_gpu_memory_fraction}, SGLang
 *     {@code mem_fraction_static}), in [0, 1] (a request must give one in (0, 1]; SGLang's
 *     default rule leaves 0 where its reserve exceeds the device, and then nothing fits)
 * @param chunkedPrefill whether a prompt longer than the budget is split over iterations
 * @param prompt prompt lengths ({@code workload.promptTokens}: a number or a distribution)
 * @param output output lengths ({@code workload.outputTokens})
 */
public record CapacityWorkload(ServingEngine engine, int maxNumSeqs, int maxNumTokens,
    double memoryFraction, boolean chunkedPrefill, LengthDistribution prompt,
    LengthDistribution output) {

  public CapacityWorkload {
    checkArgument(engine != null, "workload.engine: must be given");
    checkArgument(maxNumSeqs >= 1, "workload.maxNumSeqs: must be > 0, got %s", maxNumSeqs);
    checkArgument(maxNumTokens >= 1, "workload.maxNumTokens: must be > 0, got %s",
        maxNumTokens);
    checkArgument(Double.isFinite(memoryFraction) && memoryFraction >= 0 && memoryFraction <= 1,
        "workload.memoryFraction: must be in [0, 1], got %s", memoryFraction);
    checkArgument(prompt != null, "workload.promptTokens: must be given");
    checkArgument(output != null, "workload.outputTokens: must be given");
  }
}
