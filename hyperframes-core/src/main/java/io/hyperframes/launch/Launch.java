package io.hyperframes.launch;

import static com.google.common.base.Preconditions.checkArgument;

import io.hyperframes.inference.InferencePlanner;
import io.hyperframes.inference.ServingPlans;
import io.hyperframes.model.TransformerSpec;
import io.hyperframes.parallel.Engine;
import io.hyperframes.plan.Plan;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

/**
 * A plan as what a team launches (docs/launch.md): the engine's arguments or configuration
 * ({@link LaunchConfigs}), a Dockerfile built in layers (system base, AI framework, code), and
 * Kubernetes manifests — a Kubeflow {@code PyTorchJob} or a {@code JobSet} for training, a vLLM
 * {@code Deployment} for serving — with the resources, the {@code /dev/shm} size, the NCCL and
 * framework environment and the gang scheduling the plan and its golden parameters call for.
 * Every manifest validates against the published schemas (Kubernetes 1.36 core, training-operator
 * v1.9.0, JobSet v0.9.1; {@code LaunchTest}).
 */
public final class Launch {
  private Launch() {}

  /**
   * The plan as text a team launches: engine arguments or configuration, a layered Dockerfile,
   * or Kubernetes manifests (docs/launch.md), with the default options
   * ({@link LaunchOptions#defaults}).
   *
   * @throws IllegalArgumentException when the target cannot express this plan (a dense stack,
   *     a MaxText layout), naming why
   */
  public static String emit(Plan plan, Target target) {
    return training(plan, target, LaunchOptions.defaults()).text();
  }

  /**
   * A training plan as {@code target}.
   *
   * @throws IllegalArgumentException when an argument is missing, or the target cannot express
   *     the plan (a dense stack has no Megatron-LM arguments; MaxText is configured by its own
   *     YAML), naming why
   */
  public static LaunchConfigs.Emitted training(Plan plan, Target target, LaunchOptions options) {
    checkArgument(plan != null && plan.best() != null, "plan: must be given, with a best"
        + " candidate");
    checkArgument(target != null, "target: must be given");
    checkArgument(options != null, "options: must be given");
    checkArgument(plan.request() != null, "plan.request: the plan carries no request");
    if (!(plan.request().model() instanceof TransformerSpec model)) {
      throw new IllegalArgumentException("--emit: launch configurations are written for"
          + " transformer training (Megatron-LM, DeepSpeed, FSDP), not for a dense stack");
    }
    if (target == Target.VLLM || target == Target.SGLANG || target == Target.TRTLLM
        || target == Target.DYNAMO) {
      throw new IllegalArgumentException("--emit: " + target.id() + " launches a serving plan"
          + " (a request with \"workload\": {\"type\": \"inference\"}), not a training plan;"
          + " emit megatron, deepspeed, torchrun, dockerfile, kubernetes or jobset");
    }
    Engine engine = plan.best().estimate().layout().engine();
    if (engine == Engine.MAXTEXT) {
      throw new IllegalArgumentException("--emit: " + target.id() + " launches a PyTorch"
          + " engine, but layout.engine is maxtext (MaxText is configured by its own YAML; plan"
          + " for layout.engine megatron, deepspeed or fsdp)");
    }
    String mismatch = switch (target) {
      case MEGATRON -> engine == Engine.MEGATRON ? null : "Megatron-LM's pretrain_gpt.py";
      case DEEPSPEED -> engine == Engine.DEEPSPEED ? null : "a DeepSpeed configuration";
      case TORCHRUN -> engine == Engine.MEGATRON || engine == Engine.FSDP ? null
          : "torchrun with Megatron-LM's pretrain_gpt.py or an FSDP script";
      case DOCKERFILE, KUBERNETES, JOBSET -> null;
      case VLLM, SGLANG, TRTLLM, DYNAMO -> throw new AssertionError(target);
    };
    if (mismatch != null) {
      throw new IllegalArgumentException("--emit: " + target.id() + " writes " + mismatch
          + ", but the best plan runs on " + engine.id() + " (layout.engine, "
          + plan.engineChoice() + "); emit " + (engine == Engine.DEEPSPEED ? "deepspeed"
              : engine == Engine.FSDP ? "torchrun" : "megatron") + ", kubernetes or jobset for"
          + " this plan, or fix \"layout\": {\"engine\": \"" + (target == Target.DEEPSPEED
              ? "deepspeed" : "megatron") + "\"} in the request to plan for that engine");
    }
    TrainingJob job = TrainingJob.of(plan, model, options);
    return switch (target) {
      case MEGATRON -> LaunchConfigs.megatron(plan.best(), model, plan.goldenParameters(),
          job.nvlinkDomain());
      case DEEPSPEED -> LaunchConfigs.deepspeed(plan.best(), plan.goldenParameters());
      case TORCHRUN -> {
        if (engine == Engine.FSDP) {
          LaunchConfigs.Emitted line = LaunchConfigs.torchrun(plan.best(), job.gpusPerPod(),
              options.script());
          yield new LaunchConfigs.Emitted(line.text(), Stream.concat(line.notes().stream(),
              job.notes().stream()).toList());
        }
        LaunchConfigs.Emitted args = LaunchConfigs.megatron(plan.best(), model,
            plan.goldenParameters(), job.nvlinkDomain());
        LaunchConfigs.Emitted line = LaunchConfigs.torchrun(plan.best(), job.gpusPerPod(),
            "pretrain_gpt.py \\\n  " + args.text());
        yield new LaunchConfigs.Emitted(line.text(), Stream.concat(line.notes().stream(),
            args.notes().stream()).toList());
      }
      case DOCKERFILE -> Dockerfiles.training(job);
      case KUBERNETES -> Manifests.pytorchJob(job);
      case JOBSET -> Manifests.jobSet(job);
      case VLLM, SGLANG, TRTLLM, DYNAMO -> throw new AssertionError(target);
    };
  }

  /**
   * A serving plan as {@code target}: {@link Target#VLLM}, {@link Target#SGLANG} or
   * {@link Target#TRTLLM} (one replica's launch line in that engine's options),
   * {@link Target#KUBERNETES} (a vLLM {@code Deployment}; the published vLLM image needs no
   * Dockerfile) — each of the best aggregated configuration — or {@link Target#DYNAMO} (a
   * Dynamo {@code DynamoGraphDeployment} of the best disaggregated configuration).
   *
   * @throws IllegalArgumentException when the plan has no configuration meeting the SLO, or the
   *     target is a training one
   */
  public static LaunchConfigs.Emitted serving(ServingPlans.Result result, Target target,
      LaunchOptions options) {
    return serving(result, target, options, Target.VLLM);
  }

  /**
   * As {@link #serving(ServingPlans.Result, Target, LaunchOptions)}, with the engine of the
   * Dynamo workers when {@code target} is {@link Target#DYNAMO}: {@link Target#VLLM}
   * ({@code python3 -m dynamo.vllm}), {@link Target#SGLANG} ({@code python3 -m dynamo.sglang})
   * or {@link Target#TRTLLM} ({@code python3 -m dynamo.trtllm}, with a ConfigMap of the pools'
   * engine YAML before the deployment).
   *
   * @throws IllegalArgumentException as the other, or naming {@code --backend} when the workers'
   *     engine is another, or is given for a target other than dynamo
   */
  public static LaunchConfigs.Emitted serving(ServingPlans.Result result, Target target,
      LaunchOptions options, Target backend) {
    checkArgument(result != null && target != null && options != null && backend != null,
        "result, target, options and backend: must be given");
    checkArgument(backend == Target.VLLM || backend == Target.SGLANG
        || backend == Target.TRTLLM, "--backend: Dynamo workers are emitted for vllm, sglang"
        + " or trtllm, not %s", backend.id());
    checkArgument(target == Target.DYNAMO || backend == Target.VLLM, "--backend: only with"
        + " --emit dynamo (the engine of its workers), not with --emit %s", target.id());
    InferencePlanner.Config best = result.plan().best();
    InferencePlanner.DisaggregatedConfig apart = result.plan().disaggregated();
    checkArgument(target.serves(), "--emit: a serving plan is emitted as vllm, sglang, trtllm"
        + " (one replica's launch line), kubernetes (a vLLM Deployment) or dynamo (a Dynamo"
        + " disaggregated deployment), not %s", target.id());
    if (target == Target.DYNAMO) {
      checkArgument(apart != null, "--emit dynamo: no disaggregated configuration meets the"
          + " SLO, nothing to launch");
      int perNode = result.request().cluster().devicesPerNode();
      emittable("prefill", apart.prefill(), backend, perNode);
      emittable("decode", apart.decode(), backend, perNode);
      LaunchConfigs.Emitted emitted = Manifests.dynamo(result, apart, options, backend);
      if (!"aggregated".equals(result.plan().choice())) {
        return emitted;
      }
      return withNote(emitted, String.format(java.util.Locale.ROOT, "the aggregated"
          + " configuration needs %d devices against the %d of this disaggregated one (--emit"
          + " vllm, sglang, trtllm or kubernetes launches it)", best.devices(),
          apart.devices()));
    }
    checkArgument(best != null || apart == null, "--emit: only a disaggregated configuration"
        + " meets the SLO: --emit dynamo launches it");
    checkArgument(best != null, "--emit: no configuration meets the SLO, nothing to launch");
    spanningEmittable(best, target, result.request().cluster().devicesPerNode());
    checkArgument(best.pp() == 1 || target == Target.VLLM, "--emit %s: the plan's replicas"
        + " span %s nodes by pipeline stages (tp %s, pp %s), which only --emit vllm writes (on"
        + " a Ray cluster over the nodes)", target.id(), best.pp(), best.tp(), best.pp());
    LaunchConfigs.Emitted emitted = emitServing(result, best, target, options);
    if (!"disaggregated".equals(result.plan().choice())) {
      return emitted;
    }
    return withNote(emitted, String.format(java.util.Locale.ROOT, "disaggregated prefill and"
        + " decode need %d devices against the %d of this aggregated configuration (--emit"
        + " dynamo launches them)", apart.devices(), best.devices()));
  }

  /**
   * Refuses a pool whose experts span replicas (ep &gt; tp) where its workers cannot be written:
   * with TensorRT-LLM workers (attention data-parallel is not among the pinned LLM API keys), or
   * a group wider than a node that does not fill whole nodes.
   */
  private static void emittable(String name, InferencePlanner.PoolConfig pool, Target backend,
      int perNode) {
    if (pool.replicasPerGroup() == 1) {
      return;
    }
    checkArgument(backend != Target.TRTLLM, "--emit dynamo --backend trtllm: the plan's %s pool"
        + " spreads the experts over %s replicas (tp %s, ep %s: attention data-parallel),"
        + " which TensorRT-LLM workers are not emitted with; use --backend vllm or sglang",
        name, pool.replicasPerGroup(), pool.tp(), pool.ep());
    checkArgument(pool.ep() <= perNode || pool.ep() % perNode == 0, "--emit dynamo: the plan's"
        + " %s pool's workers of %s devices (ep %s) do not fill whole nodes of %s", name,
        pool.ep(), pool.ep(), perNode);
  }

  /**
   * Refuses an aggregated configuration whose experts span replicas (ep &gt; tp) where its launch
   * cannot be written: TensorRT-LLM (attention data-parallel is not among the pinned LLM API
   * keys), a Kubernetes Deployment whose group is wider than a node (a pod is on one node), or a
   * group wider than a node that does not fill whole nodes.
   */
  private static void spanningEmittable(InferencePlanner.Config c, Target target, int perNode) {
    int group = c.replicasPerGroup();
    if (group == 1) {
      return;
    }
    int devices = c.tp() * group;
    checkArgument(target != Target.TRTLLM, "--emit trtllm: the plan spreads the experts over %s"
        + " replicas (tp %s, ep %s: attention data-parallel), which TensorRT-LLM lines are not"
        + " emitted with; use --emit vllm or sglang", group, c.tp(), c.ep());
    checkArgument(devices <= perNode || devices % perNode == 0, "--emit %s: the plan's"
        + " expert-parallel groups of %s devices (ep %s) do not fill whole nodes of %s",
        target.id(), devices, c.ep(), perNode);
    checkArgument(target != Target.KUBERNETES || devices <= perNode, "--emit kubernetes: the"
        + " plan's expert-parallel groups of %s devices (ep %s) span %s nodes, and a"
        + " Deployment's pod runs on one; use --emit vllm or sglang (one command per node)",
        devices, c.ep(), devices / perNode);
  }

  private static LaunchConfigs.Emitted withNote(LaunchConfigs.Emitted e, String note) {
    List<String> notes = new ArrayList<>(e.notes());
    notes.add(note);
    return new LaunchConfigs.Emitted(e.text(), notes);
  }

  private static LaunchConfigs.Emitted emitServing(ServingPlans.Result result,
      InferencePlanner.Config best, Target target, LaunchOptions options) {
    return switch (target) {
      case VLLM -> ServingCommands.vllm(result, best);
      case SGLANG -> ServingCommands.sglang(result, best);
      case TRTLLM -> ServingCommands.trtllm(result, best);
      default -> {
        List<String> notes = new ArrayList<>();
        ServingCommands.weightsNote(best,
            " (vLLM --quantization for the method of your checkpoint)", notes);
        yield Manifests.deployment(result, best, options, notes);
      }
    };
  }

  /**
   * The {@code .dockerignore} beside an emitted Dockerfile: what must stay out of the code layer's
   * build context (version control, caches, checkpoints and datasets, which the job mounts).
   */
  public static String dockerignore() {
    return String.join("\n", ".git", ".gitignore", "**/__pycache__", "**/*.pyc", ".venv",
        "checkpoints/", "data/", "*.pt", "*.safetensors", "wandb/", "logs/", "") ;
  }
}
