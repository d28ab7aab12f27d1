package io.hyperframes.launch;

import io.hyperframes.inference.InferencePlanner;
import io.hyperframes.inference.InferenceWorkload;
import io.hyperframes.inference.ServingPlans;
import io.hyperframes.inference.Speculative;
import io.hyperframes.model.TransformerSpec;
import io.hyperframes.precision.NumberFormat;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The launch line of a serving plan's best configuration for one replica, in each engine's own
 * vocabulary: {@code vllm serve}, SGLang's {@code python -m sglang.launch_server} and
 * TensorRT-LLM's {@code trtllm-serve}. Every option written is in the engine's option list at
 * the release docs/launch.md names (LaunchServingTest checks each against a copy of it).
 *
 * <p>What every line says, from the plan: the tensor-parallel size, expert parallelism when the
 * plan splits the experts, the batch limit (the most sequences a replica runs at once), the
 * context length (the model's sequence), FP8 weights and KV cache when the plan chose them,
 * prefix caching when the workload counts on it, and speculative decoding as the workload
 * states it.
 */
final class ServingCommands {

  static final int PORT = 8000;

  private ServingCommands() {}

  /**
   * {@code vllm serve} arguments after the model (vllm/engine/arg_utils.py; the port:
   * vllm/entrypoints/openai/cli_args.py).
   */
  static List<String> vllmArgs(ServingPlans.Result result, InferencePlanner.Config c,
      List<String> notes) {
    // With pipeline stages one scheduler caps the running requests of all the batches in
    // flight (max_num_running_reqs = max_num_seqs over one running list,
    // vllm/v1/core/sched/scheduler.py of vllm-project/vllm @ b4622cf9): pp batch limits.
    List<String> args = engineArgs(result, c.tp(), c.ep(), c.batchLimit() * c.pp(), c.weights(),
        c.kvCache(), true, notes);
    int group = c.replicasPerGroup();
    if (group > 1) {
      args.add("--data-parallel-size=" + group);
      if (groupNodes(result, c) > 1) {
        // Across nodes vLLM's guide runs the exchange on DeepEP's low-latency kernels
        // (docs/serving/expert_parallel_deployment.md of vllm-project/vllm @ 01702569,
        // "Example: 2-Node Deployment"); within a node its default backend.
        args.add("--all2all-backend=deepep_low_latency");
      }
      if (c.twoBatchOverlap()) {
        args.add("--enable-dbo");
      }
      args.addAll(vllmRedundantExperts(c.redundantExperts()));
    }
    if (c.pp() > 1) {
      // Pipeline stages over nodes run on vLLM's Ray executor, the one that runs stages on
      // several nodes and keeps one batch in flight a stage (RayDistributedExecutor:
      // supports_pp, max_concurrent_batches = pp; vllm/v1/executor/ray_executor.py @ ff583b3c).
      args.add("--pipeline-parallel-size=" + c.pp());
      args.add("--distributed-executor-backend=ray");
    }
    args.add("--port=" + PORT);
    return args;
  }

  /**
   * The nodes one expert-parallel group of {@code c} takes: 1 when its ep devices fit a node
   * (or its experts stay within a replica), else ep / devicesPerNode.
   */
  static int groupNodes(ServingPlans.Result result, InferencePlanner.Config c) {
    int perNode = result.request().cluster().devicesPerNode();
    int devices = c.tp() * c.replicasPerGroup();
    return devices <= perNode ? 1 : devices / perNode;
  }

  /**
   * vLLM engine arguments of a replica of {@code tp} devices, experts split when {@code ep} > 1,
   * at most {@code batchLimit} sequences, in these formats; the workload's speculative decoding
   * when {@code speculative} (vllm/engine/arg_utils.py).
   */
  static List<String> engineArgs(ServingPlans.Result result, int tp, int ep, int batchLimit,
      NumberFormat weights, NumberFormat kvCache, boolean speculative, List<String> notes) {
    TransformerSpec model = result.request().model();
    InferenceWorkload w = result.request().workload();
    List<String> args = new ArrayList<>();
    args.add("--tensor-parallel-size=" + tp);
    if (ep > 1) {
      // vLLM splits the experts over the tp ranks (FusedMoEParallelConfig.make: ep_size =
      // tp_size), the split the serving planner searches.
      args.add("--enable-expert-parallel");
    }
    args.add("--max-num-seqs=" + batchLimit);
    args.add("--max-model-len=" + model.seqLen());
    if (kvCache.isFp8()) {
      args.add("--kv-cache-dtype=fp8");
    }
    if (weights.isFp8()) {
      args.add("--quantization=fp8");
    }
    if (w.prefixCacheHitRate() > 0) {
      args.add("--enable-prefix-caching");
    }
    Speculative s = speculative ? w.speculative() : null;
    if (s != null) {
      // SpeculativeConfig (vllm/config/speculative.py): method, num_speculative_tokens, and
      // the draft's path for an EAGLE head or a draft model.
      String method = switch (s.method()) {
        case MTP -> "mtp";
        case EAGLE -> "eagle";
        case DRAFT -> "draft_model";
      };
      String json = "{\"method\": \"" + method + "\", \"num_speculative_tokens\": " + s.tokens()
          + (s.method() == Speculative.Method.MTP ? ""
              : ", \"model\": \"" + draftPath(s, model) + "\"") + "}";
      args.add("--speculative-config=" + json);
      draftNote(s, model, notes);
    }
    return args;
  }

  /**
   * The vLLM arguments that run {@code dataParallel} replicas of a pool as one engine whose
   * experts span them ({@link #engineArgs} gives tp, {@code --enable-expert-parallel} and
   * {@code --max-num-seqs}): attention data-parallel over the replicas, the experts over all
   * dp · tp ranks (docs/serving/data_parallel_deployment.md of vllm-project/vllm: each DP rank is
   * an engine core of its own, whose scheduler caps its running requests at
   * {@code max_num_seqs}, so the batch limit stays per replica), the exchange with DeepEP's
   * kernels as the plan computes it (high-throughput for prefill, low-latency for decode, as
   * ai-dynamo/dynamo recipes/deepseek-r1/vllm/disagg/deploy_hopper_prefill_dep16_decode_dep16.yaml
   * @ 954ff908 sets {@code --all2all-backend}), and vLLM's dual-batch overlap
   * ({@code --enable-dbo}) for a pool planned with two-batch overlap.
   */
  static List<String> vllmDataParallelArgs(int dataParallel, boolean twoBatchOverlap,
      boolean decode, int redundantExperts) {
    List<String> args = new ArrayList<>();
    args.add("--data-parallel-size=" + dataParallel);
    args.add("--all2all-backend=" + (decode ? "deepep_low_latency" : "deepep_high_throughput"));
    if (twoBatchOverlap) {
      args.add("--enable-dbo");
    }
    args.addAll(vllmRedundantExperts(redundantExperts));
    return args;
  }

  /**
   * vLLM's copies of routed experts: {@code --num-redundant-experts}, which vLLM takes only with
   * its expert load balancer ({@code --enable-eplb}, itself only with
   * {@code --enable-expert-parallel}: vllm/config/parallel.py, ParallelConfig's checks); nothing
   * for none.
   */
  static List<String> vllmRedundantExperts(int redundantExperts) {
    return redundantExperts == 0 ? List.of() : List.of("--enable-eplb",
        "--num-redundant-experts=" + redundantExperts);
  }

  /**
   * SGLang's copies of routed experts: {@code --ep-num-redundant-experts}, with its expert load
   * balancer ({@code --enable-eplb}) choosing which experts to copy (python/sglang/srt/
   * server_args.py); nothing for none.
   */
  static List<String> sglangRedundantExperts(int redundantExperts) {
    return redundantExperts == 0 ? List.of() : List.of("--enable-eplb",
        "--ep-num-redundant-experts " + redundantExperts);
  }

  /**
   * The SGLang arguments that run {@code dataParallel} replicas of a pool as one server whose
   * experts span them, beside {@link #sglangArgs} called with the server's devices as
   * {@code --tp-size} and the replicas' batch limits summed as {@code --max-running-requests}:
   * with {@code --enable-dp-attention}, {@code --tp-size} counts every device and
   * {@code --dp-size} the attention data-parallel ranks (attention tp = tp-size / dp-size;
   * sglang python/sglang/srt/layers/dp_attention.py), and the running requests are split over
   * the ranks (python/sglang/srt/mem_cache/kv_cache_configurator.py @ 003fca80,
   * {@code resolve_max_num_reqs}: max_running_requests // attn_dp_size). The exchange runs on
   * DeepEP, normal dispatch for prefill and low-latency for decode, with two-batch overlap where
   * planned, as Dynamo's wide-EP guide runs DeepSeek on H100 (ai-dynamo/dynamo
   * docs/backends/sglang/dsr1-wideep-h100.md @ 119290c3); {@code deepepMode} null leaves
   * SGLang's default (auto).
   */
  static List<String> sglangDataParallelArgs(int dataParallel, boolean twoBatchOverlap,
      String deepepMode, int redundantExperts) {
    List<String> args = new ArrayList<>();
    args.add("--dp-size " + dataParallel);
    args.add("--enable-dp-attention");
    args.add("--moe-a2a-backend deepep");
    if (deepepMode != null) {
      args.add("--deepep-mode " + deepepMode);
    }
    if (twoBatchOverlap) {
      args.add("--enable-two-batch-overlap");
    }
    args.addAll(sglangRedundantExperts(redundantExperts));
    return args;
  }

  /**
   * {@code vllm serve MODEL ...}: one replica, or where the experts span replicas one
   * expert-parallel group run as one engine with attention data-parallel over its replicas; a
   * group over several nodes is one command per node, the first serving requests and the others
   * headless, as vLLM's guide deploys one (docs/serving/expert_parallel_deployment.md @
   * 01702569, "Multi-Node Deployment"; the options in vllm/engine/arg_utils.py).
   */
  static LaunchConfigs.Emitted vllm(ServingPlans.Result result, InferencePlanner.Config c) {
    List<String> notes = new ArrayList<>();
    List<String> args = new ArrayList<>();
    args.add("vllm serve " + result.request().model().name());
    for (String a : vllmArgs(result, c, notes)) {
      args.add(quoted(a));
    }
    if (c.pp() > 1) {
      notes.add(0, String.format(Locale.ROOT, "each replica takes %d nodes, a pipeline stage"
          + " each: start a Ray cluster over them (ray start --head on the first, ray start"
          + " --address=HEAD_NODE_IP:6379 on the others) and run the line on the first",
          c.pp()));
      return new LaunchConfigs.Emitted(String.join(" \\\n  ", args) + "\n",
          common(result, c, "vllm serve", notes));
    }
    int nodes = groupNodes(result, c);
    if (nodes == 1) {
      return new LaunchConfigs.Emitted(String.join(" \\\n  ", args) + "\n",
          common(result, c, "vllm serve", notes));
    }
    int local = result.request().cluster().devicesPerNode() / c.tp();
    args.add("--data-parallel-size-local=" + local);
    args.add("--data-parallel-address=\"$HEAD_NODE_IP\"");
    args.add("--data-parallel-rpc-port=" + DATA_PARALLEL_RPC_PORT);
    List<String> others = new ArrayList<>(args);
    others.add("--data-parallel-start-rank=$((NODE_RANK * " + local + "))");
    others.add("--headless");
    String text = "# node 0 of each group of " + nodes + " nodes: serves the requests\n"
        + String.join(" \\\n  ", args) + "\n"
        + "# " + otherNodes(nodes) + " of the group (NODE_RANK), without an API server\n"
        + String.join(" \\\n  ", others) + "\n";
    notes.add(0, String.format(Locale.ROOT, "each expert-parallel group takes %d nodes: run"
        + " the first command on its first node and the second on %s with NODE_RANK %s,"
        + " HEAD_NODE_IP the first node's address on every one", nodes,
        nodes == 2 ? "the other" : "the others", nodes == 2 ? "1" : "1 to " + (nodes - 1)));
    return new LaunchConfigs.Emitted(text, common(result, c, "vllm serve", notes));
  }

  /** "node 1", or "nodes 1 to n-1": the nodes of a group after its first. */
  private static String otherNodes(int nodes) {
    return nodes == 2 ? "node 1" : "nodes 1 to " + (nodes - 1);
  }

  /** The port of vLLM's data-parallel coordination across nodes (its guide's example). */
  static final int DATA_PARALLEL_RPC_PORT = 13345;

  /** The port of SGLang's distributed initialisation across nodes. */
  static final int DIST_INIT_PORT = 5000;

  /**
   * {@code python -m sglang.launch_server ...} (python/sglang/srt/server_args.py): one replica.
   * The draft of speculative decoding runs as SGLang's EAGLE worker, which also drives a
   * multi-token-prediction module; a separate draft model is its STANDALONE algorithm.
   */
  static LaunchConfigs.Emitted sglang(ServingPlans.Result result, InferencePlanner.Config c) {
    InferenceWorkload w = result.request().workload();
    List<String> notes = new ArrayList<>();
    List<String> args = new ArrayList<>();
    args.add("python -m sglang.launch_server");
    int group = c.replicasPerGroup();
    if (group == 1) {
      args.addAll(sglangArgs(result, c.tp(), c.ep(), c.batchLimit(), c.weights(), c.kvCache(),
          true, notes));
    } else {
      // One server per expert-parallel group, attention data-parallel over its replicas
      // (sglangDataParallelArgs); DeepEP's mode left at its default, auto: normal dispatch for
      // prefill batches, low-latency for decode (server_args.py @ 001067ff, deepep_mode).
      args.addAll(sglangArgs(result, c.tp() * group, c.ep(), c.batchLimit() * group,
          c.weights(), c.kvCache(), true, notes));
      args.addAll(sglangDataParallelArgs(group, c.twoBatchOverlap(), null,
          c.redundantExperts()));
      int nodes = groupNodes(result, c);
      if (nodes > 1) {
        args.add("--nnodes " + nodes);
        args.add("--node-rank \"$NODE_RANK\"");
        args.add("--dist-init-addr \"$HEAD_NODE_IP:" + DIST_INIT_PORT + "\"");
        notes.add(0, String.format(Locale.ROOT, "each expert-parallel group takes %d nodes:"
            + " run the line on each with NODE_RANK 0 to %d, HEAD_NODE_IP the address of the"
            + " node of rank 0 (which serves the requests)", nodes, nodes - 1));
      }
    }
    if (w.prefixCacheHitRate() == 0) {
      // SGLang's radix cache is on by default; the plan counts on no prefix hits.
      notes.add(0, "the plan assumes no prefix-cache hits (workload.prefixCacheHitRate 0);"
          + " SGLang's radix cache stays on and can only help");
    }
    args.add("--port " + PORT);
    return new LaunchConfigs.Emitted(String.join(" \\\n  ", args) + "\n",
        common(result, c, "sglang.launch_server", notes));
  }

  /**
   * SGLang server arguments of a replica of {@code tp} devices, experts split over {@code ep},
   * at most {@code batchLimit} requests, in these formats, each "OPTION VALUE" or "OPTION"
   * (python/sglang/srt/server_args.py); the workload's speculative decoding when
   * {@code speculative}.
   */
  static List<String> sglangArgs(ServingPlans.Result result, int tp, int ep, int batchLimit,
      NumberFormat weights, NumberFormat kvCache, boolean speculative, List<String> notes) {
    TransformerSpec model = result.request().model();
    List<String> args = new ArrayList<>();
    args.add("--model-path " + model.name());
    args.add("--tp-size " + tp);
    if (ep > 1) {
      args.add("--ep-size " + ep);
    }
    args.add("--max-running-requests " + batchLimit);
    args.add("--context-length " + model.seqLen());
    if (kvCache.isFp8()) {
      args.add("--kv-cache-dtype fp8_e4m3");
    }
    if (weights.isFp8()) {
      args.add("--quantization fp8");
    }
    Speculative s = speculative ? result.request().workload().speculative() : null;
    if (s != null) {
      args.add("--speculative-algorithm " + (s.method() == Speculative.Method.DRAFT
          ? "STANDALONE" : "EAGLE"));
      args.add("--speculative-num-steps " + s.tokens());
      args.add("--speculative-eagle-topk 1");
      args.add("--speculative-num-draft-tokens " + (s.tokens() + 1));
      if (s.method() != Speculative.Method.MTP) {
        args.add("--speculative-draft-model-path " + draftPath(s, model));
      }
      draftNote(s, model, notes);
    }
    return args;
  }

  /**
   * {@code trtllm-serve MODEL ...} (tensorrt_llm/commands/serve.py, the PyTorch backend): one
   * replica. Prefix caching (block reuse) and speculative decoding are LLM API options
   * (tensorrt_llm/llmapi/llm_args.py: {@code kv_cache_config}, {@code speculative_config}),
   * which trtllm-serve reads from the YAML file of {@code --extra_llm_api_options}: the line
   * writes that file first. The KV-cache and weight formats are not options there: they come
   * with the checkpoint's quantisation, and the notes say so.
   */
  static LaunchConfigs.Emitted trtllm(ServingPlans.Result result, InferencePlanner.Config c) {
    TransformerSpec model = result.request().model();
    InferenceWorkload w = result.request().workload();
    List<String> notes = new ArrayList<>();
    List<String> yaml = new ArrayList<>();
    // Block reuse is on by default (KvCacheConfig.enable_block_reuse): state the plan's choice.
    yaml.add("kv_cache_config:");
    yaml.add("  enable_block_reuse: " + (w.prefixCacheHitRate() > 0));
    Speculative s = w.speculative();
    if (s != null) {
      yaml.add("speculative_config:");
      switch (s.method()) {
        case MTP -> {
          yaml.add("  decoding_type: MTP");
          yaml.add("  num_nextn_predict_layers: " + s.tokens());
        }
        case EAGLE, DRAFT -> {
          yaml.add("  decoding_type: " + (s.method() == Speculative.Method.EAGLE ? "Eagle"
              : "DraftTarget"));
          yaml.add("  max_draft_len: " + s.tokens());
          yaml.add("  speculative_model: " + draftPath(s, model));
        }
      }
      draftNote(s, model, notes);
    }
    if (c.weights().isFp8() || c.kvCache().isFp8()) {
      notes.add("FP8 " + (c.weights().isFp8() && c.kvCache().isFp8() ? "weights and KV cache"
          : c.weights().isFp8() ? "weights" : "KV cache") + ": not an option of trtllm-serve"
          + " or of the LLM API's KvCacheConfig at the pinned commits; serve a checkpoint"
          + " quantised to it");
    }
    List<String> args = new ArrayList<>();
    args.add("trtllm-serve " + model.name());
    args.add("--backend pytorch");
    args.add("--tp_size " + c.tp());
    if (c.ep() > 1) {
      args.add("--ep_size " + c.ep());
    }
    args.add("--max_batch_size " + c.batchLimit());
    args.add("--max_seq_len " + model.seqLen());
    args.add("--extra_llm_api_options extra-llm-api-options.yaml");
    args.add("--port " + PORT);
    String text = "cat > extra-llm-api-options.yaml <<'EOF'\n" + String.join("\n", yaml)
        + "\nEOF\n" + String.join(" \\\n  ", args) + "\n";
    return new LaunchConfigs.Emitted(text, common(result, c, "trtllm-serve", notes));
  }

  /**
   * The engine YAML of one pool of Dynamo's TensorRT-LLM workers ({@code python3 -m
   * dynamo.trtllm --extra-engine-args FILE}), in the LLM API of TensorRT-LLM 1.3, the release
   * Dynamo @ 2a6da14c pins (tensorrt-llm==1.3.0rc24; keys read from
   * tensorrt_llm/llmapi/llm_args.py @ 00043967, test resource trtllm-1.3-llm-api-keys.txt):
   * <ul>
   *   <li>the KV transfer between the pools, {@code cache_transceiver_config.backend: DEFAULT},
   *       and on a prefill worker {@code disable_overlap_scheduler: true}, as Dynamo's
   *       disaggregated engine configs set them (examples/backends/trtllm/engine_configs/qwen3/
   *       prefill.yaml and decode.yaml @ 2a6da14c: "Overlap scheduler not currently supported
   *       in prefill only workers");</li>
   *   <li>block reuse as the plan chose it, and the KV cache's format
   *       ({@code kv_cache_config.dtype} fp8 or nvfp4). The worker merges this
   *       {@code kv_cache_config} into its own one level deep, so its memory fraction stays;</li>
   *   <li>on a decode worker, the workload's speculative decoding: {@code MTP},
   *       {@code Eagle3} (the PyTorch backend runs an EAGLE head as EAGLE-3) or
   *       {@code Draft_Target}, with {@code max_draft_len} (MTP's layer count is read from the
   *       checkpoint at that release) and the draft's weights.</li>
   * </ul>
   */
  static String trtllmEngineYaml(ServingPlans.Result result, NumberFormat kvCache,
      boolean decode, List<String> notes) {
    TransformerSpec model = result.request().model();
    InferenceWorkload w = result.request().workload();
    List<String> y = new ArrayList<>();
    if (!decode) {
      y.add("disable_overlap_scheduler: true");
    }
    y.add("cache_transceiver_config:");
    y.add("  backend: DEFAULT");
    y.add("kv_cache_config:");
    y.add("  enable_block_reuse: " + (w.prefixCacheHitRate() > 0));
    if (kvCache.isFp8()) {
      y.add("  dtype: fp8");
    } else if (kvCache == NumberFormat.NVFP4) {
      y.add("  dtype: nvfp4");
    } else if (kvCache != NumberFormat.BF16 && kvCache != NumberFormat.FP16 && decode) {
      notes.add("KV cache in " + kvCache.id() + ": not a kv_cache_config dtype of TensorRT-LLM"
          + " 1.3 (auto, fp8, fp8_ds_mla, nvfp4 or a torch dtype); the workers keep the"
          + " model's own");
    }
    Speculative s = decode ? w.speculative() : null;
    if (s != null) {
      y.add("speculative_config:");
      y.add("  decoding_type: " + switch (s.method()) {
        case MTP -> "MTP";
        case EAGLE -> "Eagle3";
        case DRAFT -> "Draft_Target";
      });
      y.add("  max_draft_len: " + s.tokens());
      if (s.method() != Speculative.Method.MTP) {
        y.add("  speculative_model: " + draftPath(s, model));
      }
      draftNote(s, model, notes);
    }
    return String.join("\n", y) + "\n";
  }

  /**
   * Where the draft's weights are: the model's own checkpoint for MTP, the draft model's name,
   * or for an EAGLE head (which no request names) a marked name the notes tell the operator to
   * replace by the head's path.
   */
  private static String draftPath(Speculative s, TransformerSpec model) {
    return switch (s.method()) {
      case MTP -> model.name();
      case EAGLE -> "EAGLE_HEAD_OF_" + model.name();
      case DRAFT -> s.draft().name();
    };
  }

  private static void draftNote(Speculative s, TransformerSpec model, List<String> notes) {
    notes.add(String.format(Locale.ROOT, "speculative decoding (%s, %d draft tokens, acceptance"
        + " %.2f as the workload states it): %s", s.method().id(), s.tokens(), s.acceptance(),
        switch (s.method()) {
          case MTP -> "the model's own multi-token-prediction module; its checkpoint must hold"
              + " it";
          case EAGLE -> "replace EAGLE_HEAD_OF_" + model.name() + " by the path of an EAGLE"
              + " head trained for this model";
          case DRAFT -> "replace " + s.draft().name() + " by the draft model's Hugging Face id or"
              + " path";
        }));
  }

  /** Notes every line shares: the model name to replace and the replicas to start. */
  private static List<String> common(ServingPlans.Result result, InferencePlanner.Config c,
      String engine, List<String> notes) {
    List<String> out = new ArrayList<>();
    out.add(engine + " " + result.request().model().name() + ": replace the catalog name by the"
        + " model's Hugging Face id or checkpoint path");
    int group = c.replicasPerGroup();
    if (c.pp() > 1) {
      out.add(String.format(Locale.ROOT, "one replica of %d GPUs (tp %d × pp %d); the plan runs"
          + " %d replica%s (%d devices)%s, at most %d sequences in each of the %d batches a"
          + " replica keeps in flight", c.tp() * c.pp(), c.tp(), c.pp(), c.replicas(),
          c.replicas() == 1 ? "" : "s", c.devices(), c.replicas() == 1 ? ""
              : " behind a load balancer", c.batchLimit(), c.pp()));
    } else if (group == 1) {
      out.add(String.format(Locale.ROOT, "one replica of %d GPUs; the plan runs %d replica%s"
          + " (%d devices)%s, at most %d sequences each", c.tp(), c.replicas(),
          c.replicas() == 1 ? "" : "s", c.devices(), c.replicas() == 1 ? ""
              : " behind a load balancer", c.batchLimit()));
    } else {
      int groups = c.replicas() / group;
      out.add(String.format(Locale.ROOT, "one expert-parallel group of %d GPUs (ep %d: %d"
          + " replicas of tp %d, attention data-parallel, the experts over all %d); the plan"
          + " runs %d group%s (%d devices)%s, at most %d sequences per replica", c.tp() * group,
          c.ep(), group, c.tp(), c.ep(), groups, groups == 1 ? "" : "s", c.devices(),
          groups == 1 ? "" : " behind a load balancer", c.batchLimit()));
    }
    weightsNote(c, "", out);
    out.addAll(notes);
    return out;
  }

  /**
   * Adds to {@code notes}, for weights in a format other than FP8, FP16 or BF16 (which every
   * engine loads as they are), that the checkpoint must be quantised to it; {@code how} says
   * how the engine is told (empty for nothing more).
   */
  static void weightsNote(InferencePlanner.Config c, String how, List<String> notes) {
    if (c.weights() != NumberFormat.FP8_E4M3 && c.weights() != NumberFormat.FP8_E5M2
        && c.weights() != NumberFormat.FP16 && c.weights() != NumberFormat.BF16) {
      notes.add("weights in " + c.weights().id() + ": load a checkpoint quantised to it" + how);
    }
  }

  /** An argument as a shell word: single-quoted when it holds a space, a quote or a brace. */
  private static String quoted(String arg) {
    if (arg.matches("[A-Za-z0-9_./=:,+-]*")) {
      return arg;
    }
    return "'" + arg.replace("'", "'\\''") + "'";
  }
}
