package io.hyperframes.parallel;

import java.util.Locale;

/**
 * The training engine that runs a layout: how it schedules the pipeline, what it overlaps with
 * what, and which fused kernels it uses by default.
 *
 * <ul>
 *   <li>{@link #MEGATRON} — Megatron-LM / Megatron-Core: interleaved 1F1B (Narayanan et al. 2021,
 *       arXiv 2104.04473, §2.2.2), tensor-parallel collectives on the critical path, gradient
 *       reduction overlapped with the last micro-batch's backward (distributed optimizer,
 *       {@code --overlap-grad-reduce}); attention kernel as the accelerator's framework default.
 *   <li>{@link #DEEPSPEED} — DeepSpeed's {@code PipelineEngine}: non-interleaved 1F1B only
 *       (DeepSpeed docs, "Pipeline Parallelism": {@code TrainSchedule} is PipeDream-Flush 1F1B,
 *       one model chunk per stage); with pipeline parallelism the data-parallel gradient
 *       reduction runs after the last backward ({@code ReduceGrads} instruction at the end of
 *       {@code TrainSchedule}), not overlapped; ZeRO-2/3 are not combined with its pipeline
 *       (DeepSpeed docs, "ZeRO": "ZeRO-2 and ZeRO-3 are incompatible with pipeline
 *       parallelism"). Without a pipeline, ZeRO's overlapped communication applies
 *       ({@code overlap_comm}).
 *   <li>{@link #FSDP} — PyTorch FSDP / FSDP2 (Zhao et al. 2023, "PyTorch FSDP", VLDB 16(12),
 *       §3.3-3.4): one all-gather per FSDP unit (a transformer layer) before forward, again before
 *       backward when parameters were resharded after forward, a reduce-scatter after backward;
 *       the next unit's all-gather is prefetched during the current unit's compute (forward and
 *       backward prefetch). Attention through {@code scaled_dot_product_attention}, which selects
 *       the FlashAttention-2 kernel on Ampere and later (PyTorch 2.2 release notes), so fused
 *       attention is its default on every generation with BF16/FP16 tensor cores.
 *   <li>{@link #MAXTEXT} — MaxText on JAX/XLA (AI-Hypercomputer/maxtext): data parallelism is
 *       GSPMD sharding over the {@code fsdp} mesh axes, so a ZeRO-3 layout is its FSDP
 *       ({@code ici_fsdp_parallelism} × {@code dcn_fsdp_parallelism}): the same per-layer
 *       all-gathers and reduce-scatters, scheduled by XLA's latency-hiding scheduler to overlap
 *       the neighbouring layers' compute; the program is compiled, so element-wise work is fused
 *       into its neighbours; attention is a fused kernel ({@code attention=cudnn_flash_te} on
 *       GPUs). It has its own kernels, so catalog constants scoped to {@code fsdp} (PyTorch's
 *       kernels) do not apply to it.
 * </ul>
 */
public enum Engine {
  MEGATRON("megatron"),
  DEEPSPEED("deepspeed"),
  FSDP("fsdp"),
  MAXTEXT("maxtext");

  private final String id;

  Engine(String id) {
    this.id = id;
  }

  /** The JSON name ("megatron", "deepspeed", "fsdp", "maxtext"). */
  public String id() {
    return id;
  }

  /** Whether the engine runs interleaved (virtual-stage) pipelines. */
  public boolean interleavesPipeline() {
    return this == MEGATRON;
  }

  /** Whether data-parallel gradient reduction overlaps backward when {@code pp} stages run. */
  public boolean overlapsGradientReduction(int pp) {
    return this != DEEPSPEED || pp == 1;
  }

  /**
   * Whether the engine runs ZeRO {@code stage} with {@code pp} pipeline stages (DeepSpeed's
   * pipeline engine combines with ZeRO 0 and 1 only).
   */
  public boolean runsZeroStage(int stage, int pp) {
    return this != DEEPSPEED || pp == 1 || stage <= 1;
  }

  /** Whether the engine's default attention kernel is fused on every tensor-core generation. */
  public boolean fusedAttentionByDefault() {
    return this == FSDP || this == MAXTEXT;
  }

  /** The engine named {@code value}; {@code IllegalArgumentException} naming it otherwise. */
  public static Engine fromId(String field, String value) {
    String v = value == null ? "" : value.trim().toLowerCase(Locale.ROOT);
    return switch (v) {
      case "megatron" -> MEGATRON;
      case "deepspeed" -> DEEPSPEED;
      case "fsdp" -> FSDP;
      case "maxtext" -> MAXTEXT;
      default -> throw new IllegalArgumentException(field + ": unknown engine '" + value
          + "' (expected megatron, deepspeed, fsdp or maxtext)");
    };
  }
}
