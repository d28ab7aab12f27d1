package io.hyperframes.inference;

import com.fasterxml.jackson.annotation.JsonValue;
import io.hyperframes.json.Ids;
import java.util.Map;

import io.hyperframes.hardware.Accelerator;
import java.util.Locale;

/**
 * The serving engine whose scheduler a capacity estimate follows ({@code workload.engine}):
 * how an iteration is built, how KV-cache memory is set aside and admitted against, and the
 * engine's default limits. Each rule is read from the engine's source at a commit
 * (docs/inference.md, "Capacity").
 */
public enum ServingEngine {
  /**
   * vLLM V1. One token budget per step ({@code max_num_batched_tokens}): running requests first
   * (decodes and continuing prefill chunks), then waiting prompts chunked to what is left
   * ({@code vllm/v1/core/sched/scheduler.py} @ 00024d31, {@code schedule()}: "There's no
   * decoding phase nor prefill phase in the scheduler"); KV blocks allocated as tokens are
   * scheduled ({@code allocate_slots}), the last running request preempted when none are free;
   * the cache is {@code gpu_memory_utilization} (0.92, {@code vllm/config/cache.py} @ 002f10e0)
   * of the device less weights and the profiled activations.
   */
  VLLM,
  /**
   * SGLang. Prefill batches run before decoding ("Run prefill first if possible"), each of at
   * most {@code chunked_prefill_size} tokens (8192 on H100 and H200), and decode batches of every
   * running request between them ({@code enable_mixed_chunk} false by default;
   * {@code python/sglang/srt/server_args.py} @ 001067ff). A running request holds its tokens and
   * a reserve of {@code new_token_ratio} (down to 0.7 × 0.14 = 0.098,
   * {@code python/sglang/srt/environ.py} @ 0003215c) of its remaining output, at most 4096
   * ({@code schedule_policy.py} @ 00550cd1, {@code PrefillAdder}); the cache is
   * {@code mem_fraction_static} of the device less the weights.
   */
  SGLANG,
  /**
   * TensorRT-LLM. In-flight batching: context (prefill) and generation requests in one forward
   * of at most {@code max_num_tokens} tokens (8192), no chunking by default
   * ({@code enable_chunked_prefill} false); the GUARANTEED_NO_EVICT capacity scheduler admits a
   * request only when the blocks for its whole prompt and output fit beside what the running
   * requests still need ({@code cpp/tensorrt_llm/batch_manager/capacityScheduler.cpp} @ 02a10fed,
   * {@code kvCacheManager.cpp} @ 002ba6a7, {@code getRemainingBlocksToCompletion}); the cache is
   * {@code free_gpu_memory_fraction} (0.9) of the memory left after the model loads
   * ({@code tensorrt_llm/llmapi/llm_args.py} @ 00043967).
   */
  TRTLLM;

  private final String id = Ids.lowerCase(this);

  /** The identifier used in requests and output (and in JSON, {@code capacity.engine}). */
  @JsonValue
  public String id() {
    return id;
  }

  /** The engine named {@code value}; {@code IllegalArgumentException} naming it otherwise. */
  public static ServingEngine fromId(String field, String value) {
    return Ids.byId(ServingEngine.class, ServingEngine::id, Map.of("tensorrt-llm", TRTLLM), field,
        value, "serving engine");
  }

  /** Whether an iteration runs prefill chunks and decodes together (vLLM, TensorRT-LLM). */
  public boolean mixesPrefillAndDecode() {
    return this != SGLANG;
  }

  /** Whether a prompt longer than the token budget is split over iterations by default. */
  public boolean chunksPrefill() {
    return this != TRTLLM;
  }

  /**
   * Device memory at least this large (and not an A100) gets vLLM's larger defaults: "For GPUs
   * like H100 and MI300x, use larger default values" ({@code vllm/engine/arg_utils.py} @
   * 99d7eb5d, {@code _set_default_args}: {@code device_memory >= 70 * GiB_bytes}).
   */
  static final double VLLM_LARGE_DEVICE_BYTES = 70.0 * (1L << 30);

  /**
   * The default per-iteration token budget: vLLM's OpenAI server 8192 on large devices, else
   * 2048 ({@code arg_utils.py} @ 99d7eb5d); SGLang's {@code chunked_prefill_size} 8192 below
   * 160 GB, 16384 above ({@code server_args.py} @ 001067ff,
   * {@code _handle_gpu_memory_settings}); TensorRT-LLM's {@code max_num_tokens} 8192
   * ({@code llm_args.py} @ 00043967).
   */
  public int defaultMaxNumTokens(Accelerator acc) {
    return switch (this) {
      case VLLM -> largeForVllm(acc) ? 8192 : 2048;
      case SGLANG -> acc.memoryBytes() < 160.0 * (1L << 30) ? 8192 : 16384;
      case TRTLLM -> 8192;
    };
  }

  /**
   * The default limit on running requests: vLLM's OpenAI server 1024 on large devices, else 256
   * ({@code arg_utils.py} @ 99d7eb5d); TensorRT-LLM's {@code max_batch_size} 2048
   * ({@code llm_args.py} @ 00043967); SGLang sets none below what its KV pool holds (only the
   * pool bounds it here).
   */
  public int defaultMaxNumSeqs(Accelerator acc) {
    return switch (this) {
      case VLLM -> largeForVllm(acc) ? 1024 : 256;
      case SGLANG -> Integer.MAX_VALUE;
      case TRTLLM -> 2048;
    };
  }

  /** The default KV block size in tokens: 16 (vLLM on CUDA; SGLang here), 32 (TensorRT-LLM). */
  public int defaultBlockTokens() {
    return this == TRTLLM ? 32 : 16;
  }

  /**
   * The default memory fraction: vLLM's {@code gpu_memory_utilization} 0.92 and
   * TensorRT-LLM's {@code free_gpu_memory_fraction} 0.9 (above); SGLang's
   * {@code mem_fraction_static} = (GPU MB − reserved MB) / GPU MB, where reserved = 512 + 1.5 ×
   * max(chunk, 2048) + tp·pp/8 × 1024 + 2 × the decode CUDA-graph batch (256 for tp < 4, else
   * 512), at least 10 GB on devices over 60 GB ({@code server_args.py} @ 001067ff; the prefill
   * graphs' reserve, which depends on their batch list, is left out).
   */
  public double defaultMemoryFraction(Accelerator acc, int tp, int maxNumTokens) {
    return switch (this) {
      case VLLM -> 0.92;
      case TRTLLM -> 0.9;
      case SGLANG -> {
        double gpuMb = acc.memoryBytes() / (1 << 20);
        double reserved = 512 + 1.5 * Math.max(maxNumTokens, 2048) + tp / 8.0 * 1024
            + 2 * (tp < 4 ? 256 : 512);
        if (gpuMb > 60 * 1024) {
          reserved = Math.max(reserved, 10 * 1024);
        }
        yield Math.max(0.0, (gpuMb - reserved) / gpuMb);
      }
    };
  }

  /**
   * KV-cache bytes per device: vLLM {@code fraction × memory − weights − activations − other};
   * TensorRT-LLM {@code fraction × (memory − weights − activations − other)}; SGLang
   * {@code fraction × memory − weights}, its activations held outside the static fraction.
   */
  double kvCacheBytes(double memory, double weights, double activations, double other,
      double fraction) {
    return switch (this) {
      case VLLM -> fraction * memory - weights - activations - other;
      case TRTLLM -> fraction * (memory - weights - activations - other);
      case SGLANG -> fraction * memory - weights;
    };
  }

  /**
   * The share of a running request's remaining output that admission keeps free for it, at
   * least: none in vLLM (blocks as tokens come), all in TensorRT-LLM (GUARANTEED_NO_EVICT),
   * {@code new_token_ratio}'s floor 0.098 in SGLang (its initial 0.7 decays by (0.7 − 0.098)/600
   * per decode step without retraction: at capacity the floor).
   */
  double reservedOutputShare() {
    return switch (this) {
      case VLLM -> 0.0;
      case TRTLLM -> 1.0;
      case SGLANG -> 0.7 * 0.14;
    };
  }

  /** SGLang clips the output it reserves for at this many tokens ({@code CLIP_MAX_NEW_TOKENS}). */
  static final int SGLANG_CLIP_RESERVED_TOKENS = 4096;

  /**
   * The request limit and token budget {@code trtllm-bench throughput} picks when it is given
   * neither ({@code workload.engineSettings: trtllm-bench}): the requests the KV cache holds at
   * the mean lengths, (tp · device memory − weights) × fraction / (KV bytes per token × (ISL +
   * OSL)), at most 4096, rounded up; the budget that many requests times 1 + ISL/OSL, at most
   * 32768, rounded up to 256 below 4096 tokens (at least 2048), to 512 below 8192, else to
   * 1024; without chunked prefill at least the longest prompt plus the request limit
   * ({@code tensorrt_llm/bench/build/tuning.py} @ 04cba882, {@code get_benchmark_engine_settings};
   * {@code tensorrt_llm/bench/benchmark/utils/general.py} @ 0171265e, {@code get_settings}).
   *
   * @param kvBytesPerToken KV-cache bytes of one token in the whole model
   * @param weightBytes the model's weights in bytes
   * @return {maxNumSeqs, maxNumTokens}
   */
  static int[] trtllmBenchSettings(Accelerator acc, int tp, double kvBytesPerToken,
      double weightBytes, double isl, double osl, int maxIsl, double fraction,
      boolean chunked) {
    double requests = (tp * acc.memoryBytes() - weightBytes) * fraction
        / (kvBytesPerToken * (isl + osl));
    int seqs = (int) Math.max(1, Math.ceil(Math.min(Math.max(requests, 0), 4096)));
    double raw = Math.min(seqs * (1 + isl / osl), 32768);
    int tokens = raw < 4096 ? (int) Math.max(2048, 256 * Math.ceil(raw / 256))
        : raw < 8192 ? (int) (512 * Math.ceil(raw / 512)) : (int) (1024 * Math.ceil(raw / 1024));
    if (!chunked) {
      tokens = Math.max(tokens, maxIsl + seqs);
    }
    return new int[] {seqs, tokens};
  }

  private static boolean largeForVllm(Accelerator acc) {
    return acc.memoryBytes() >= VLLM_LARGE_DEVICE_BYTES
        && !acc.id().toLowerCase(Locale.ROOT).contains("a100");
  }
}
