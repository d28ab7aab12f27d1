package io.hyperframes.launch;

import io.hyperframes.hardware.Cluster;
import io.hyperframes.model.TransformerSpec;
import io.hyperframes.parallel.Engine;
import io.hyperframes.parallel.Layout;
import io.hyperframes.plan.Plan;
import io.hyperframes.plan.GoldenParameter;
import io.hyperframes.plan.GoldenParameters;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What every emitted training artefact agrees on: pods and devices per pod from the plan's
 * layout, the golden parameters the manifests and the image carry, the engine's entry point and
 * arguments, the environment.
 */
record TrainingJob(Plan plan, TransformerSpec model, LaunchOptions options, Engine engine,
    int devices, int pods, int gpusPerPod, double shmBytes, int cpusPerPod, boolean rdma,
    Map<String, String> env,
    List<String> engineArgs, String deepspeedConfig, List<String> notes) {

  /** Devices of a job of {@code devices} that share the intra-node fabric (a node, not a host). */
  static int nvlinkDomain(Cluster cluster, int devices) {
    return Math.min(devices, cluster.devicesPerNode());
  }

  /** Devices of this job that share the intra-node fabric. */
  int nvlinkDomain() {
    return nvlinkDomain(plan.request().cluster(), devices);
  }

  /** Port of the torch.distributed rendezvous (torchrun's default master port). */
  static final int MASTER_PORT = 29500;

  static TrainingJob of(Plan plan, TransformerSpec model, LaunchOptions options) {
    Layout l = plan.best().estimate().layout();
    Cluster cluster = plan.request().cluster();
    int devices = (int) plan.best().estimate().devices();
    // One pod per host: a GB200 NVL72 rack is 18 hosts of 4 GPUs in one NVLink domain.
    int perNode = Math.min(devices, cluster.devicesPerHost());
    int pods = (devices + perNode - 1) / perNode;
    int workers = intGolden(plan, "dataLoaderWorkers", 2);
    int prefetch = intGolden(plan, "prefetchDepth", Math.max(2, 2 * workers));
    // The golden table has it whenever the plan has a step time; else the same rule here.
    double shm = doubleGolden(plan, "sharedMemoryBytesPerNode",
        GoldenParameters.sharedMemoryBytes(GoldenParameters.loaderSharedMemoryBytes(perNode,
            workers, prefetch, l.microBatch(), GoldenParameters.loaderSampleBytes(model))));
    int hostCores = cluster.hostCoresPerHost() > 0 ? cluster.hostCoresPerHost() : 8 * perNode;
    // One core per rank for the training process and one per loader worker, at most the node's.
    int cpus = Math.min(hostCores, perNode * (workers + 1));
    String fabric = cluster.interNode().id();
    boolean rdma = pods > 1 && (fabric.startsWith("ib-") || fabric.startsWith("roce-"));
    List<String> notes = new ArrayList<>();
    Map<String, String> env = new LinkedHashMap<>();
    // A collective that fails raises instead of hanging the job (PyTorch ProcessGroupNCCL).
    env.put("TORCH_NCCL_ASYNC_ERROR_HANDLING", "1");
    env.put("NCCL_DEBUG", "WARN");
    // torchrun sets OMP_NUM_THREADS=1 when unset; the rank gets the cores its loaders leave.
    env.put("OMP_NUM_THREADS", Integer.toString(Math.max(1, hostCores / perNode - workers)));
    Engine engine = l.engine() == null ? Engine.MEGATRON : l.engine();
    List<String> args = new ArrayList<>();
    String ds = null;
    if (engine == Engine.FSDP) {
      args.add(options.script());
      notes.add(fsdpLayoutNote(l, plan.best().workload().globalBatchSize(), options.script()));
    } else {
      LaunchConfigs.Emitted m = LaunchConfigs.megatron(plan.best(), model,
          plan.goldenParameters(), nvlinkDomain(cluster, devices));
      notes.addAll(m.notes());
      args.add(engine == Engine.DEEPSPEED ? Dockerfiles.MEGATRON_DEEPSPEED_DIR + "/pretrain_gpt.py"
          : Dockerfiles.MEGATRON_DIR + "/pretrain_gpt.py");
      for (String option : m.text().split(" \\\\\n  ")) {
        int space = option.indexOf(' ');
        if (space < 0) {
          args.add(option);
        } else {
          args.add(option.substring(0, space));
          String value = option.substring(space + 1);
          // A value the shell text quotes (a pipeline layout's "|") goes to exec form bare.
          args.add(value.length() > 1 && value.startsWith("'") && value.endsWith("'")
              ? value.substring(1, value.length() - 1) : value);
        }
      }
      if (engine == Engine.DEEPSPEED) {
        LaunchConfigs.Emitted d = LaunchConfigs.deepspeed(plan.best(), plan.goldenParameters());
        notes.addAll(d.notes());
        ds = d.text();
        args.add("--deepspeed");
        args.add("--deepspeed_config");
        args.add(Dockerfiles.WORKDIR + "/ds_config.json");
      }
      if (serialisesDeviceQueue(l)) {
        // Megatron-LM orders tensor-parallel communication with one hardware queue.
        env.put("CUDA_DEVICE_MAX_CONNECTIONS", "1");
      }
    }
    return new TrainingJob(plan, model, options, engine, devices, pods, perNode, shm, cpus,
        rdma, env, List.copyOf(args), ds, notes);
  }

  /**
   * Whether the launch sets {@code CUDA_DEVICE_MAX_CONNECTIONS=1}: Megatron-LM with tensor
   * parallelism orders its communication on one hardware queue, except under Megatron-FSDP
   * (ZeRO 2/3), which asserts the variable is unset or above 1 (arguments.py).
   */
  static boolean serialisesDeviceQueue(Layout l) {
    return l.tp() > 1 && l.engine() != Engine.FSDP
        && !(l.engine() == Engine.MEGATRON && l.zeroStage() >= 2);
  }

  /**
   * The whole layout an FSDP script must set (PyTorch FSDP takes it from the training code, not
   * from a launcher option): {@code FSDP layout: tp=… pp=… dp=… ...}, one {@code key=value} per
   * field, in the order of {@link Layout}; with expert parallelism also {@code ep=…} (torchtitan's
   * {@code expert_parallel_degree}, experts whole) and {@code moeDispatcher=…}.
   */
  static String fsdpLayoutNote(Layout l, int globalBatch, String script) {
    String strategy = switch (l.zeroStage()) {
      case 0 -> "NO_SHARD";
      case 2 -> "SHARD_GRAD_OP";
      default -> l.shardGroupSize() > 0 && l.shardGroupSize() < l.dp() ? "HYBRID_SHARD"
          : "FULL_SHARD";
    };
    String experts = l.ep() > 1 ? String.format(java.util.Locale.ROOT, " ep=%d moeDispatcher=%s"
        + " (torchtitan expert_parallel_degree, experts whole)", l.ep(), l.moeDispatcher().id())
        : "";
    return String.format(java.util.Locale.ROOT, "FSDP layout: tp=%d pp=%d dp=%d microBatch=%d"
        + " globalBatch=%d sequenceParallel=%s recompute=%s zeroStage=%d shardGroupSize=%d"
        + " reshardAfterForward=%s%s (ShardingStrategy.%s); set it in %s"
        + " (torch.distributed.fsdp), which the code layer copies in", l.tp(), l.pp(), l.dp(),
        l.microBatch(), globalBatch, l.sequenceParallel(), l.recompute().id(), l.zeroStage(),
        l.shardGroupSize(), l.reshardAfterForward(), experts, strategy, script);
  }

  private static double doubleGolden(Plan plan, String name, double otherwise) {
    for (GoldenParameter g : plan.goldenParameters()) {
      if (g.name().equals(name) && g.value() instanceof Number n) {
        return n.doubleValue();
      }
    }
    return otherwise;
  }

  private static int intGolden(Plan plan, String name, int otherwise) {
    return (int) Math.round(doubleGolden(plan, name, otherwise));
  }

  /** {@code /dev/shm} as a Kubernetes quantity, whole GiB. */
  String shmQuantity() {
    return Math.max(1, (long) Math.ceil(shmBytes / (1L << 30))) + "Gi";
  }
}
