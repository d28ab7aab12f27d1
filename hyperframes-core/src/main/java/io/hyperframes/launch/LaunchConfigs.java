package io.hyperframes.launch;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.google.common.collect.ImmutableList;
import io.hyperframes.model.TransformerSpec;
import io.hyperframes.parallel.CpCommType;
import io.hyperframes.parallel.Engine;
import io.hyperframes.parallel.Layout;
import io.hyperframes.parallel.Recompute;
import io.hyperframes.parallel.RecomputeModule;
import io.hyperframes.plan.Candidate;
import io.hyperframes.precision.NumberFormat;
import io.hyperframes.precision.PrecisionRecipe;
import io.hyperframes.plan.GoldenParameter;
import io.hyperframes.workload.Attention;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Launch configurations that realise a plan on engines teams already run: Megatron-LM
 * command-line arguments, a DeepSpeed config JSON, and a torchrun launch line. Option names follow
 * the engines' documentation (Megatron-LM {@code megatron/training/arguments.py}; DeepSpeed
 * "DeepSpeed Configuration JSON"; PyTorch "torchrun (Elastic Launch)"), checked by
 * {@code LaunchConfigsTest} against lists kept with their source.
 */
public final class LaunchConfigs {
  private LaunchConfigs() {}

  /** An emitted configuration with the caveats the engine cannot express. */
  public record Emitted(String text, List<String> notes) {
    public Emitted {
      notes = ImmutableList.copyOf(notes);
    }
  }

  /** The model's shape: layers, widths, attention kind and window, MTP and the MLP width. */
  private static void architecture(List<String> a, List<String> notes, TransformerSpec m) {
    a.add("--num-layers " + m.layers());
    a.add("--hidden-size " + m.hidden());
    a.add("--num-attention-heads " + m.heads());
    if (m.mla() != null) {
      // Latent attention, spelled as examples/megatron_fsdp/sbatch_mfsdp_deepseek_v3.sh at
      // d98e8a64 (qk-head-dim is the non-rotary part, qk-pos-emb-head-dim the rotary one).
      a.add("--multi-latent-attention");
      if (m.mla().qLoraRank() > 0) {
        a.add("--q-lora-rank " + m.mla().qLoraRank());
      }
      a.add("--kv-lora-rank " + m.mla().kvLoraRank());
      a.add("--qk-head-dim " + m.mla().qkNopeHeadDim());
      a.add("--qk-pos-emb-head-dim " + m.mla().qkRopeHeadDim());
      a.add("--v-head-dim " + m.mla().vHeadDim());
    } else if (m.qDim() != m.hidden()) {
      // A head size of the model's own (Qwen3): Megatron-LM's projection width per head.
      a.add("--kv-channels " + m.headDim());
    }
    if (m.mtpLayers() > 0) {
      // As examples/megatron_fsdp/sbatch_mfsdp_deepseek_v3.sh at d98e8a64.
      a.add("--mtp-num-layers " + m.mtpLayers());
    }
    if (m.slidingWindow() != null && m.slidingWindow().chunked()) {
      notes.add(String.format(Locale.ROOT, "chunked attention (chunks of %d tokens) has no"
          + " Megatron-LM option at d98e8a64: these arguments train full attention in every"
          + " layer, which computes more than the plan assumes", m.slidingWindow().tokens()));
    } else if (m.slidingWindow() != null) {
      // Windowed layers, spelled as examples/gptoss/02_train.sh at d98e8a64: a window of W
      // tokens is W - 1 positions to the left and none to the right; every skip-freq-th layer
      // attends fully.
      a.add("--window-size " + (m.slidingWindow().tokens() - 1) + ",0");
      if (m.slidingWindow().fullAttentionEvery() > 0) {
        a.add("--window-attn-skip-freq " + m.slidingWindow().fullAttentionEvery());
      }
    }
    if (m.kvHeads() != m.heads()) {
      a.add("--group-query-attention");
      a.add("--num-query-groups " + m.kvHeads());
    }
    a.add("--ffn-hidden-size " + m.ffnHidden());
  }

  /**
   * An uneven pipeline split (first and last ranks' layers, or a layout string with virtual
   * stages when {@code layoutString}) and the experts' layout.
   */
  private static void stagesAndExperts(List<String> a, TransformerSpec m, Layout l,
      boolean layoutString) {
    // Uneven splits: the first and last ranks' layers, or with virtual stages a layout string
    // (Megatron-Core divides first/last layers by the virtual stages and the per-virtual-stage
    // count assumes an even split: transformer_config.py and arguments.py at d98e8a64).
    if (layoutString) {
      // Quoted for the shell ("|" separates its stages); exec-form manifests take it unquoted.
      a.add("--pipeline-model-parallel-layout '" + pipelineLayout(m, l) + "'");
    } else {
      if (l.firstStageLayers() > 0) {
        a.add("--decoder-first-pipeline-num-layers " + l.firstStageLayers());
      }
      if (l.lastStageLayers() > 0) {
        a.add("--decoder-last-pipeline-num-layers " + l.lastStageLayers());
      }
    }
    if (m.isMoe()) {
      moe(a, m, l.ep(), l.etp(), l.moeDispatcher());
      if (l.overlapMoeComm()) {
        // Megatron-Core's EP A2A overlap (megatron/core/transformer/moe/README.md at d98e8a64).
        a.add("--overlap-moe-expert-parallel-comm --delay-wgrad-compute");
      }
    }
  }

  /** Tensor, pipeline (virtual stages unless a layout string), sequence and context parallelism. */
  private static void parallelism(List<String> a, TransformerSpec m, Layout l,
      boolean layoutString, int devicesPerNode) {
    a.add("--tensor-model-parallel-size " + l.tp());
    a.add("--pipeline-model-parallel-size " + l.pp());
    if (l.virtualStages() > 1 && !layoutString) {
      int perVirtual = m.layers() / (l.pp() * l.virtualStages());
      a.add("--num-layers-per-virtual-pipeline-stage " + perVirtual);
    }
    if (l.sequenceParallel()) {
      a.add("--sequence-parallel");
    }
    if (l.cp() > 1) {
      // --context-parallel-size as examples/llama/train_llama3_8b_h100_fp8.sh at d98e8a64;
      // --cp-comm-type and --hierarchical-context-parallel-sizes (required for a2a+p2p) from
      // megatron/training/arguments.py there.
      a.add("--context-parallel-size " + l.cp());
      a.add("--cp-comm-type " + l.cpCommType().megatronName());
      if (l.cpCommType() == CpCommType.A2A_P2P) {
        if (devicesPerNode <= 0) {
          throw new IllegalArgumentException("layout.cpCommType: a2a+p2p needs the node size"
              + " for --hierarchical-context-parallel-sizes");
        }
        int inner = Math.max(1, Math.min(l.cp(), devicesPerNode / l.tp()));
        a.add("--hierarchical-context-parallel-sizes " + inner + " " + l.cp() / inner);
      }
    }
  }

  /** Data-parallel sharding, gradient-reduction overlap and the number formats. */
  private static void shardingAndPrecision(List<String> a, List<String> notes, Layout l,
      PrecisionRecipe p) {
    // Data-parallel sharding (Engine's table): under DeepSpeed the ZeRO stage is in its
    // configuration; under Megatron-LM stage 1 is the distributed optimizer and stages 2/3 are
    // Megatron-FSDP (megatron/training/arguments.py, docs/user-guide/parallelism-guide.md).
    if (l.engine() != Engine.DEEPSPEED && l.zeroStage() >= 1) {
      a.add("--use-distributed-optimizer");
    }
    if (l.engine() != Engine.DEEPSPEED && l.zeroStage() >= 2) {
      a.add("--use-megatron-fsdp");
      a.add("--data-parallel-sharding-strategy "
          + (l.zeroStage() == 2 ? "optim_grads" : "optim_grads_params"));
      a.add("--ckpt-format fsdp_dtensor");
      notes.add("Megatron-FSDP requires CUDA_DEVICE_MAX_CONNECTIONS unset or above 1");
    }
    if (l.engine() != Engine.DEEPSPEED && l.zeroStage() >= 1 && l.shardGroupSize() > 0
        && l.shardGroupSize() < l.dp()) {
      // Shards inside each group, replicas of them across the groups: hybrid sharding under
      // Megatron-FSDP, the partial distributed optimizer under ZeRO-1.
      a.add("--num-distributed-optimizer-instances " + l.dp() / l.shardGroupSize());
    }
    if (l.dp() > 1) {
      // As the estimate: overlapped unless the layout says not (layout.overlapGradReduce,
      // layout.overlapParamGather; Megatron-LM's defaults are off).
      if (l.overlapGradReduce()) {
        a.add("--overlap-grad-reduce");
      }
      if (l.engine() == Engine.MEGATRON && l.zeroStage() >= 1 && l.overlapParamGather()) {
        // The estimate hides the parameter gather behind the next forward pass (Engine).
        a.add("--overlap-param-gather");
      }
    }
    switch (p.compute()) {
      case BF16 -> a.add("--bf16");
      case FP16 -> {
        a.add("--fp16");
        a.add("--initial-loss-scale 65536");
        a.add("--loss-scale-window 2000");
        a.add("--hysteresis 1");
      }
      case FP8_E4M3, FP8_E5M2 -> {
        a.add("--bf16");
        a.add("--fp8-format hybrid");
      }
      default -> notes.add("Megatron-LM trains in FP32 without --fp16/--bf16");
    }
    if (p.gradients() == NumberFormat.FP32 && p.compute() != NumberFormat.FP32) {
      a.add("--accumulate-allreduce-grads-in-fp32");
    }
  }

  /** Megatron-LM {@code pretrain_gpt.py} arguments, one per line (a plan without a2a+p2p). */
  public static Emitted megatron(Candidate plan, TransformerSpec m, List<GoldenParameter> golden) {
    return megatron(plan, m, golden, 0);
  }

  /**
   * Megatron-LM {@code pretrain_gpt.py} arguments, one per line, for nodes of
   * {@code devicesPerNode} devices (the all-to-all part of a2a+p2p context parallelism is the
   * context-parallel ranks inside a node; 0 when unknown).
   */
  public static Emitted megatron(Candidate plan, TransformerSpec m, List<GoldenParameter> golden,
      int devicesPerNode) {
    List<String> a = new ArrayList<>();
    List<String> notes = new ArrayList<>();
    Layout l = plan.estimate().layout();
    PrecisionRecipe p = plan.workload().precision();
    architecture(a, notes, m);
    boolean layoutString = l.unevenStages() && l.virtualStages() > 1;
    stagesAndExperts(a, m, l, layoutString);
    if (m.gatedMlp()) {
      a.add("--swiglu");
      a.add("--normalization RMSNorm");
      a.add("--position-embedding-type rope");
      a.add("--disable-bias-linear");
    }
    if (!m.tiedEmbeddings()) {
      a.add("--untie-embeddings-and-output-weights");
    }
    a.add("--seq-length " + m.seqLen());
    a.add("--max-position-embeddings " + m.seqLen());
    parallelism(a, m, l, layoutString, devicesPerNode);
    a.add("--micro-batch-size " + l.microBatch());
    a.add("--global-batch-size " + plan.workload().globalBatchSize());
    if (plan.workload().trainingTokens() > 0) {
      long iters = (long) Math.ceil(plan.workload().trainingTokens()
          / ((double) plan.workload().globalBatchSize() * m.seqLen()));
      a.add("--train-iters " + iters);
    }
    // The planner resolves the kernel (the request's, or the accelerator's default).
    if (plan.workload().attention() == Attention.FLASH) {
      a.add("--use-flash-attn");
    }
    if (l.recompute() == Recompute.SELECTIVE
        && l.recomputeModules().equals(RecomputeModule.DEFAULT)) {
      a.add("--recompute-activations");
    } else if (l.recompute() == Recompute.SELECTIVE) {
      // Megatron-Core: --recompute-modules applies under selective granularity
      // (megatron/training/arguments.py at d98e8a64).
      a.add("--recompute-granularity selective");
      a.add("--recompute-modules " + String.join(" ", RecomputeModule.ids(l.recomputeModules())));
    } else if (l.recompute() == Recompute.FULL) {
      a.add("--recompute-granularity full");
      a.add("--recompute-method uniform");
      a.add("--recompute-num-layers 1");
    }
    shardingAndPrecision(a, notes, l, p);
    for (GoldenParameter g : golden) {
      if (g.name().equals("checkpointIntervalSeconds") && plan.estimate().stepSeconds() > 0) {
        long steps = Math.max(1, Math.round(((Number) g.value()).doubleValue()
            / plan.estimate().stepSeconds()));
        a.add("--save-interval " + steps);
      }
    }
    return new Emitted(String.join(" \\\n  ", a), notes);
  }

  /**
   * Megatron-Core's mixture-of-experts options for the model (option names as in Megatron-LM's
   * DeepSeek-V3 and gpt-oss examples at d98e8a64: {@code examples/megatron_fsdp/
   * sbatch_mfsdp_deepseek_v3.sh}, {@code examples/gptoss/02_train.sh}): experts, top-k, expert
   * size, grouped GEMM (the kernel the estimate times), shared experts, which layers are MoE
   * ({@code --moe-layer-freq} as a Python list expression when not every layer is), a capacity
   * factor when routing drops tokens, the plan's expert-parallel size and its token dispatcher
   * ({@link io.hyperframes.parallel.MoeDispatcher#megatronArgs}).
   */
  private static void moe(List<String> a, TransformerSpec m, int ep, int etp,
      io.hyperframes.parallel.MoeDispatcher dispatcher) {
    io.hyperframes.model.MoeSpec e = m.moe();
    a.add("--num-experts " + e.experts());
    a.add("--moe-router-topk " + e.topK());
    a.add("--moe-ffn-hidden-size " + e.expertFfnHidden());
    a.add("--moe-grouped-gemm");
    if (e.sharedExperts() > 0) {
      a.add("--moe-shared-expert-intermediate-size "
          + (long) e.sharedExperts() * e.sharedExpertFfnHidden());
    }
    if (e.firstDenseLayers() > 0 || e.layerInterval() > 1) {
      StringBuilder pattern = new StringBuilder("[");
      for (int i = 0; i < m.layers(); i++) {
        pattern.append(i == 0 ? "" : ",").append(e.isMoeLayer(i) ? 1 : 0);
      }
      a.add("--moe-layer-freq " + pattern.append(']'));
    }
    if (e.groups() > 1) {
      // Group-limited routing (DeepSeek-V3's n_group, topk_group): the estimate's DeepEP traffic
      // assumes it.
      a.add("--moe-router-num-groups " + e.groups());
      a.add("--moe-router-group-topk " + e.groupTopK());
    }
    if (e.capacityFactor() > 0) {
      // The estimate computes the capacity's padding, as Megatron-Core does with it padded.
      a.add("--moe-expert-capacity-factor " + e.capacityFactor());
      a.add("--moe-pad-expert-input-to-capacity");
    }
    a.add("--expert-model-parallel-size " + ep);
    // Written even at Megatron-LM's default (the tensor-parallel size): the plan's own value.
    a.add("--expert-tensor-parallel-size " + etp);
    // Written even for the all-to-all dispatcher: Megatron-Core's default is allgather, which
    // the estimate does not model.
    a.add(dispatcher.megatronArgs());
  }

  /** A DeepSpeed configuration JSON for the plan's data-parallel part. */
  public static Emitted deepspeed(Candidate plan, List<GoldenParameter> golden) {
    Layout l = plan.estimate().layout();
    PrecisionRecipe p = plan.workload().precision();
    List<String> notes = new ArrayList<>();
    ObjectNode c = JsonNodeFactory.instance.objectNode();
    int micro = plan.workload().globalBatchSize() / (l.dp() * l.microBatch());
    c.put("train_batch_size", plan.workload().globalBatchSize());
    c.put("train_micro_batch_size_per_gpu", l.microBatch());
    c.put("gradient_accumulation_steps", micro);
    c.put("gradient_clipping", 1.0);
    c.put("steps_per_print", 100);
    c.put("wall_clock_breakdown", false);
    ObjectNode zero = c.putObject("zero_optimization");
    zero.put("stage", l.zeroStage());
    double bucket = 5e8;
    for (GoldenParameter g : golden) {
      if (g.name().equals("gradientBucketBytes")) {
        bucket = ((Number) g.value()).doubleValue();
      }
    }
    // DeepSpeed bucket sizes count elements; the golden parameter is in bytes.
    long elements = (long) (bucket / p.gradientBytes());
    // Off only where the layout turns off an overlap the engine runs (layout.overlapGradReduce);
    // under a pipeline DeepSpeed reduces after the last backward whatever the option says.
    zero.put("overlap_comm", !l.gradReduceOverlapOff());
    zero.put("contiguous_gradients", true);
    zero.put("reduce_bucket_size", elements);
    if (l.zeroStage() <= 2) {
      zero.put("allgather_bucket_size", elements);
    } else {
      zero.put("stage3_prefetch_bucket_size", elements);
    }
    switch (p.compute()) {
      case BF16, FP8_E4M3, FP8_E5M2 -> c.putObject("bf16").put("enabled", true);
      case FP16 -> {
        ObjectNode fp16 = c.putObject("fp16");
        fp16.put("enabled", true);
        fp16.put("loss_scale", 0);
        fp16.put("initial_scale_power", 16);
        fp16.put("loss_scale_window", 2000);
        fp16.put("hysteresis", 1);
        fp16.put("min_loss_scale", 1);
      }
      default -> { }
    }
    if (p.compute().isFp8()) {
      notes.add("FP8 matmuls come from NVIDIA Transformer Engine in the model code, not from"
          + " the DeepSpeed config");
    }
    if (l.recompute() != Recompute.NONE) {
      ObjectNode ac = c.putObject("activation_checkpointing");
      ac.put("partition_activations", l.tp() > 1);
      ac.put("contiguous_memory_optimization", false);
      ac.put("cpu_checkpointing", false);
      notes.add("activation checkpointing must also be enabled in the model code"
          + (l.recompute() == Recompute.SELECTIVE ? " (selective: "
              + String.join(", ", RecomputeModule.ids(l.recomputeModules())) + ")" : ""));
    }
    if (l.tp() > 1 || l.pp() > 1) {
      notes.add(String.format(Locale.ROOT, "tensor (%d) and pipeline (%d) parallelism are set in"
          + " the model code (Megatron-DeepSpeed --tensor-model-parallel-size,"
          + " PipelineModule(num_stages=%d))", l.tp(), l.pp(), l.pp()));
    }
    return new Emitted(c.toPrettyString(), notes);
  }

  /** A torchrun launch line for {@code script}, run on every node. */
  public static Emitted torchrun(Candidate plan, int devicesPerNode, String script) {
    long devices = plan.estimate().devices();
    long nodes = Math.max(1, (devices + devicesPerNode - 1) / devicesPerNode);
    int perNode = (int) Math.min(devices, devicesPerNode);
    List<String> notes = new ArrayList<>();
    String env = TrainingJob.serialisesDeviceQueue(plan.estimate().layout())
        ? "CUDA_DEVICE_MAX_CONNECTIONS=1 " : "";
    if (!env.isEmpty()) {
      notes.add("CUDA_DEVICE_MAX_CONNECTIONS=1 keeps tensor-parallel communication ordered"
          + " (Megatron-LM requirement with sequence parallelism)");
    }
    String line = String.format(Locale.ROOT, "%storchrun --nnodes=%d --nproc-per-node=%d"
        + " --node-rank=$NODE_RANK --rdzv-backend=c10d --rdzv-endpoint=$MASTER_ADDR:29500"
        + " --rdzv-id=hyperframes %s", env, nodes, perNode, script);
    return new Emitted(line, notes);
  }

  /**
   * Megatron-Core's {@code --pipeline-model-parallel-layout} for an uneven split with virtual
   * stages ({@code PipelineParallelLayerLayout}, transformer/pipeline_parallel_layer_layout.py at
   * d98e8a64): pp·v stages in their virtual order (chunk j of every rank before chunk j + 1),
   * separated by "|"; "E" the embedding on the first, "t" a decoder layer, "m" a
   * multi-token-prediction layer and "L" the loss on the last. Each rank's layers
   * ({@link Layout#stageLayers}) go over its v chunks as evenly as they can, the first rank's
   * shorter chunks first (beside the embedding), the last rank's last (beside the loss).
   */
  static String pipelineLayout(TransformerSpec m, Layout l) {
    int pp = l.pp();
    int v = l.virtualStages();
    int[] split = l.stageLayers(m.layers());
    List<String> stages = new ArrayList<>();
    for (int j = 0; j < v; j++) {
      for (int r = 0; r < pp; r++) {
        int n = r == 0 ? split[0] : r == pp - 1 ? split[2] : split[1];
        int base = n / v;
        int extra = n % v;
        int count = base + (r == 0 ? (j >= v - extra ? 1 : 0) : (j < extra ? 1 : 0));
        StringBuilder stage = new StringBuilder();
        if (j == 0 && r == 0) {
          stage.append('E');
        }
        stage.append("t".repeat(count));
        if (j == v - 1 && r == pp - 1) {
          stage.append("m".repeat(m.mtpLayers())).append('L');
        }
        stages.add(stage.toString());
      }
    }
    return String.join("|", stages);
  }
}
