package io.hyperframes.launch;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import com.fasterxml.jackson.dataformat.yaml.YAMLGenerator;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import io.hyperframes.inference.InferencePlanner;
import io.hyperframes.inference.ServingPlans;
import io.hyperframes.model.TransformerSpec;
import io.hyperframes.precision.NumberFormat;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Kubernetes manifests of a plan, as YAML documents.
 *
 * <p>Training: one pod per node with the node's GPUs ({@code nvidia.com/gpu}, the NVIDIA device
 * plugin's resource), RDMA when the nodes are joined by InfiniBand or RoCE (the
 * {@code rdma/rdma_shared_device_a} resource of the NVIDIA network operator's shared RDMA device
 * plugin, with {@code IPC_LOCK} to pin memory), {@code /dev/shm} as a memory-backed
 * {@code emptyDir} of the golden {@code sharedMemoryBytesPerNode}, the CPUs its loader workers
 * need, the NCCL and framework environment, and gang scheduling: Volcano's
 * {@code schedulerName: volcano} with the job's {@code minAvailable} = every pod, or Kueue's
 * {@code kueue.x-k8s.io/queue-name} label (Kueue admits a job whole). A {@code PyTorchJob}
 * (kubeflow.org/v1, training-operator v1.9) runs pod 0 as {@code Master} and the rest as
 * {@code Worker}; the operator sets torchrun's rendezvous in the environment
 * ({@code nprocPerNode}). A {@code JobSet} (jobset.x-k8s.io/v1alpha2) runs one indexed Job of
 * all pods; torchrun's node rank is the Job's completion index and its master the first pod's
 * DNS name ({@code <jobset>-node-0-0.<jobset>}, JobSet's headless service).
 *
 * <p>Serving: a {@code Deployment} (apps/v1) of the vLLM OpenAI server with the plan's replicas,
 * tensor parallelism, batch limit and KV-cache format, the shared memory vLLM's tensor-parallel
 * workers use, and the health probes of vLLM's Kubernetes guide
 * ({@code vllm-project/vllm docs/deployment/k8s.md}).
 */
final class Manifests {
  private Manifests() {}

  static final String GPU = "nvidia.com/gpu";
  static final String RDMA = "rdma/rdma_shared_device_a";
  static final String VLLM_IMAGE = "vllm/vllm-openai:latest";

  private static final YAMLMapper YAML = new YAMLMapper(YAMLFactory.builder()
      .disable(YAMLGenerator.Feature.WRITE_DOC_START_MARKER).build());
  /** As {@link #YAML}, multi-line strings (a file a ConfigMap carries) as literal blocks. */
  private static final YAMLMapper YAML_FILES = new YAMLMapper(YAMLFactory.builder()
      .disable(YAMLGenerator.Feature.WRITE_DOC_START_MARKER)
      .enable(YAMLGenerator.Feature.LITERAL_BLOCK_STYLE).build());
  private static final JsonNodeFactory F = JsonNodeFactory.instance;

  static String yaml(List<ObjectNode> docs) {
    return yaml(docs, YAML);
  }

  private static String yaml(List<ObjectNode> docs, YAMLMapper mapper) {
    StringBuilder b = new StringBuilder();
    for (ObjectNode d : docs) {
      try {
        b.append("---\n").append(mapper.writeValueAsString(d));
      } catch (JsonProcessingException e) {
        throw new IllegalStateException(e);
      }
    }
    return b.toString();
  }

  static LaunchConfigs.Emitted pytorchJob(TrainingJob job) {
    List<ObjectNode> docs = new ArrayList<>();
    List<String> notes = new ArrayList<>(job.notes());
    ObjectNode configMap = deepspeedConfigMap(job);
    if (configMap != null) {
      docs.add(configMap);
    }
    ObjectNode j = F.objectNode();
    j.put("apiVersion", "kubeflow.org/v1");
    j.put("kind", "PyTorchJob");
    j.set("metadata", metadata(job.options(), job.options().name(), true));
    ObjectNode spec = j.putObject("spec");
    spec.put("nprocPerNode", Integer.toString(job.gpusPerPod()));
    ObjectNode run = spec.putObject("runPolicy");
    run.put("cleanPodPolicy", "None");
    run.put("backoffLimit", 3);
    if (job.options().gang().equals("volcano")) {
      run.putObject("schedulingPolicy").put("minAvailable", job.pods())
          .put("queue", job.options().queue());
    }
    ObjectNode replicas = spec.putObject("pytorchReplicaSpecs");
    replicas.set("Master", replicaSpec(job, 1));
    if (job.pods() > 1) {
      replicas.set("Worker", replicaSpec(job, job.pods() - 1));
    }
    docs.add(j);
    notes.add(String.format(Locale.ROOT, "%d pods x %d GPUs = %d devices; gang: %s", job.pods(),
        job.gpusPerPod(), job.devices(), gangNote(job.options(), job.pods())));
    return new LaunchConfigs.Emitted(yaml(docs), notes);
  }

  static LaunchConfigs.Emitted jobSet(TrainingJob job) {
    List<ObjectNode> docs = new ArrayList<>();
    List<String> notes = new ArrayList<>(job.notes());
    ObjectNode configMap = deepspeedConfigMap(job);
    if (configMap != null) {
      docs.add(configMap);
    }
    String name = job.options().name();
    ObjectNode s = F.objectNode();
    s.put("apiVersion", "jobset.x-k8s.io/v1alpha2");
    s.put("kind", "JobSet");
    s.set("metadata", metadata(job.options(), name, true));
    ObjectNode spec = s.putObject("spec");
    spec.putObject("network").put("enableDNSHostnames", true);
    spec.putObject("failurePolicy").put("maxRestarts", 3);
    ObjectNode rj = spec.putArray("replicatedJobs").addObject();
    rj.put("name", "node");
    rj.put("replicas", 1);
    ObjectNode jobSpec = rj.putObject("template").putObject("spec");
    jobSpec.put("parallelism", job.pods());
    jobSpec.put("completions", job.pods());
    jobSpec.put("backoffLimit", 0);
    jobSpec.put("completionMode", "Indexed");
    ObjectNode template = jobSpec.putObject("template");
    ObjectNode podMeta = template.putObject("metadata");
    podMeta.putObject("labels").put("app.kubernetes.io/name", name);
    List<String> torchrun = new ArrayList<>(List.of(
        "--nnodes=" + job.pods(), "--nproc-per-node=" + job.gpusPerPod(),
        "--node-rank=$(JOB_COMPLETION_INDEX)",
        "--master-addr=" + name + "-node-0-0." + name,
        "--master-port=" + TrainingJob.MASTER_PORT));
    torchrun.addAll(job.engineArgs());
    ObjectNode pod = podSpec(job, torchrun, true);
    pod.put("restartPolicy", "Never");
    template.set("spec", pod);
    docs.add(s);
    notes.add(String.format(Locale.ROOT, "%d pods x %d GPUs = %d devices; gang: %s", job.pods(),
        job.gpusPerPod(), job.devices(), job.options().gang().equals("volcano")
            ? "schedulerName volcano (a JobSet has no minAvailable field: give Volcano a PodGroup"
                + " of " + job.pods() + " or use Kueue)" : gangNote(job.options(), job.pods())));
    return new LaunchConfigs.Emitted(yaml(docs), notes);
  }

  static LaunchConfigs.Emitted deployment(ServingPlans.Result result, InferencePlanner.Config c,
      LaunchOptions options, List<String> notesIn) {
    List<String> notes = new ArrayList<>(notesIn);
    TransformerSpec model = result.request().model();
    String name = options.name();
    ObjectNode d = F.objectNode();
    d.put("apiVersion", "apps/v1");
    d.put("kind", "Deployment");
    d.set("metadata", metadata(options, name, false));
    ObjectNode spec = d.putObject("spec");
    // A pod runs one replica, or where the experts span replicas one expert-parallel group
    // (vllmArgs: attention data-parallel over its replicas).
    int group = c.replicasPerGroup();
    int gpus = c.tp() * group;
    spec.put("replicas", c.replicas() / group);
    spec.putObject("selector").putObject("matchLabels").put("app.kubernetes.io/name", name);
    ObjectNode template = spec.putObject("template");
    template.putObject("metadata").putObject("labels").put("app.kubernetes.io/name", name);
    ObjectNode pod = template.putObject("spec");
    ObjectNode container = pod.putArray("containers").addObject();
    container.put("name", "vllm");
    String image = options.image().equals(LaunchOptions.defaults().image()) ? VLLM_IMAGE
        : options.image();
    container.put("image", image);
    container.putArray("command").add("vllm").add("serve");
    ArrayNode args = container.putArray("args");
    args.add(model.name());
    ServingCommands.vllmArgs(result, c, notes).forEach(args::add);
    container.putArray("ports").addObject().put("containerPort", ServingCommands.PORT)
        .put("name", "http");
    ObjectNode res = container.putObject("resources");
    res.putObject("limits").put(GPU, Integer.toString(gpus));
    res.putObject("requests").put(GPU, Integer.toString(gpus));
    for (String probe : List.of("readinessProbe", "livenessProbe")) {
      ObjectNode p = container.putObject(probe);
      p.putObject("httpGet").put("path", "/health").put("port", ServingCommands.PORT);
      p.put("initialDelaySeconds", 60);
      p.put("periodSeconds", probe.equals("readinessProbe") ? 5 : 10);
    }
    container.putArray("volumeMounts").addObject().put("name", "dshm")
        .put("mountPath", "/dev/shm");
    pod.putArray("volumes").addObject().put("name", "dshm").putObject("emptyDir")
        .put("medium", "Memory").put("sizeLimit", "2Gi");
    notes.add("vllm serve " + model.name() + ": replace the catalog name by the model's"
        + " Hugging Face id or checkpoint path");
    if (image.equals(VLLM_IMAGE)) {
      notes.add("image " + VLLM_IMAGE + " as vLLM's Kubernetes guide uses it: pin a release tag"
          + " for production");
    }
    notes.add(group == 1 ? String.format(Locale.ROOT, "%d replicas x %d GPUs = %d devices, at"
        + " most %d sequences per replica", c.replicas(), c.tp(), c.devices(), c.batchLimit())
        : String.format(Locale.ROOT, "%d pods x %d GPUs = %d devices, each an expert-parallel"
            + " group of %d replicas of tp %d, at most %d sequences per replica",
            c.replicas() / group, gpus, c.devices(), group, c.tp(), c.batchLimit()));
    return new LaunchConfigs.Emitted(yaml(List.of(d)), notes);
  }

  /**
   * The image of Dynamo's vLLM runtime as the repository's own example writes it
   * (examples/backends/vllm/deploy/disagg.yaml of ai-dynamo/dynamo @ 10c61c5e), whose tag
   * "my-tag" stands for the release run: the note asks for it ({@code --image}).
   */
  static final String DYNAMO_IMAGE = "nvcr.io/nvidia/ai-dynamo/vllm-runtime:my-tag";

  /**
   * The image of Dynamo's SGLang runtime: the NGC repository Dynamo's README names
   * ({@code nvcr.io/nvidia/ai-dynamo/sglang-runtime:1.4.0} in README.md of ai-dynamo/dynamo @
   * 2a6da14c), with the placeholder tag of the examples: the note asks for the release run.
   */
  static final String DYNAMO_SGLANG_IMAGE = "nvcr.io/nvidia/ai-dynamo/sglang-runtime:my-tag";

  /**
   * The image of Dynamo's TensorRT-LLM runtime: the NGC repository Dynamo's README names
   * ({@code tensorrtllm-runtime:1.4.0} in README.md of ai-dynamo/dynamo @ 2a6da14c, under
   * nvcr.io/nvidia/ai-dynamo as the other runtimes), with the placeholder tag of the examples.
   */
  static final String DYNAMO_TRTLLM_IMAGE =
      "nvcr.io/nvidia/ai-dynamo/tensorrtllm-runtime:my-tag";

  /**
   * Where a Dynamo TensorRT-LLM worker reads its engine YAML: the ConfigMap of the deployment
   * mounted as a directory of its own, so that nothing of the image's /workspace is masked.
   */
  static final String ENGINE_DIR = "/etc/hyperframes/engine";

  /**
   * The SGLang bootstrap port of Dynamo's disaggregated SGLang example
   * (examples/backends/sglang/deploy/disagg.yaml @ 10c61c5e): where a decode worker reaches a
   * prefill worker to pair their KV transfer.
   */
  static final int SGLANG_BOOTSTRAP_PORT = 12345;

  /** The vLLM KV connector of Dynamo's disaggregated example: NIXL, both roles. */
  static final String KV_TRANSFER = "{\"kv_connector\":\"NixlConnector\",\"kv_role\":\"kv_both\"}";

  /**
   * A {@code DynamoGraphDeployment} (nvidia.com/v1beta1) of the disaggregated configuration
   * {@code d}, in the shape of Dynamo's disaggregated examples: a frontend, and prefill and decode
   * workers, each worker a replica of its pool, or, where a pool's experts span ep/tp replicas,
   * one expert-parallel group of ep devices (multi-node where it exceeds a node; the engines'
   * data-parallel arguments of {@link ServingCommands#vllmDataParallelArgs} and
   * {@link ServingCommands#sglangDataParallelArgs}). The workers' engine is {@code backend}:
   * <ul>
   *   <li>{@link Target#VLLM}: {@code python3 -m dynamo.vllm --disaggregation-mode
   *       prefill|decode} with the NIXL connector (examples/backends/vllm/deploy/disagg.yaml @
   *       10c61c5e; components/src/dynamo/vllm/backend_args.py and args.py @ fadde840), with
   *       the vLLM engine arguments of {@link ServingCommands#engineArgs};</li>
   *   <li>{@link Target#SGLANG}: {@code python3 -m dynamo.sglang --disaggregation-mode
   *       prefill|decode} over NIXL (examples/backends/sglang/deploy/disagg.yaml @ 10c61c5e),
   *       with the SGLang server arguments of {@link ServingCommands#sglangArgs};</li>
   *   <li>{@link Target#TRTLLM}: {@code python3 -m dynamo.trtllm --disaggregation-mode
   *       prefill|decode} with the worker's own options (components/src/dynamo/trtllm/
   *       backend_args.py @ 5c950bf9) and an engine YAML per pool
   *       ({@link ServingCommands#trtllmEngineYaml}) in a ConfigMap written before the
   *       deployment and mounted at {@link #ENGINE_DIR}, as examples/backends/trtllm/deploy/
   *       agg-with-config.yaml mounts one.</li>
   * </ul>
   */
  static LaunchConfigs.Emitted dynamo(ServingPlans.Result result,
      InferencePlanner.DisaggregatedConfig d, LaunchOptions options, Target backend) {
    List<String> notes = new ArrayList<>();
    TransformerSpec model = result.request().model();
    String exampleImage = switch (backend) {
      case SGLANG -> DYNAMO_SGLANG_IMAGE;
      case TRTLLM -> DYNAMO_TRTLLM_IMAGE;
      default -> DYNAMO_IMAGE;
    };
    String image = options.image().equals(LaunchOptions.defaults().image()) ? exampleImage
        : options.image();
    List<ObjectNode> docs = new ArrayList<>();
    String engineConfig = options.name() + "-engine";
    if (backend == Target.TRTLLM) {
      ObjectNode cm = F.objectNode();
      cm.put("apiVersion", "v1");
      cm.put("kind", "ConfigMap");
      cm.set("metadata", metadata(options, engineConfig, false));
      ObjectNode data = cm.putObject("data");
      data.put("prefill.yaml", ServingCommands.trtllmEngineYaml(result, d.kvCache(), false,
          notes));
      data.put("decode.yaml", ServingCommands.trtllmEngineYaml(result, d.kvCache(), true,
          notes));
      docs.add(cm);
    }
    ObjectNode g = F.objectNode();
    g.put("apiVersion", "nvidia.com/v1beta1");
    g.put("kind", "DynamoGraphDeployment");
    g.set("metadata", metadata(options, options.name(), false));
    ObjectNode spec = g.putObject("spec");
    spec.put("backendFramework", backend.id());
    ArrayNode components = spec.putArray("components");
    ObjectNode frontend = components.addObject();
    frontend.put("name", "Frontend");
    frontend.put("type", "frontend");
    frontend.put("replicas", 1);
    frontend.putObject("podTemplate").putObject("spec").putArray("containers").addObject()
        .put("name", "main").put("image", image);
    String prefix = switch (backend) {
      case SGLANG -> "Sglang";
      case TRTLLM -> "Trtllm";
      default -> "Vllm";
    };
    Worker workers = new Worker(result, d, image, backend, engineConfig, notes);
    workers.add(components, prefix + "PrefillWorker", "prefill", d.prefill(), false);
    workers.add(components, prefix + "DecodeWorker", "decode", d.decode(), true);
    docs.add(g);
    notes.add((backend == Target.SGLANG ? "--model-path " : "--model ") + model.name()
        + ": replace the catalog name by the model's Hugging Face id or checkpoint path");
    if (image.equals(exampleImage)) {
      notes.add("image " + exampleImage + (backend == Target.VLLM
          ? " as Dynamo's example writes it" : " (Dynamo's " + (backend == Target.SGLANG
              ? "SGLang" : "TensorRT-LLM") + " runtime, a placeholder tag as in Dynamo's"
              + " examples)") + ": give --image with the tag of the Dynamo release you run");
    }
    if (backend == Target.TRTLLM && !d.weights().equals(NumberFormat.BF16)
        && !d.weights().equals(NumberFormat.FP16)) {
      notes.add("weights in " + d.weights().id() + ": TensorRT-LLM takes the weight format"
          + " from the checkpoint's quantisation, not from an option: give --model a"
          + " checkpoint quantised to it");
    }
    notes.add("the workers read the Hugging Face token from the secret hf-token-secret, as"
        + " Dynamo's examples do: create it in namespace " + options.namespace());
    notes.add(String.format(Locale.ROOT, "prefill: %s, at most %d prompts a batch; decode: %s,"
        + " at most %d sequences; %d devices", workers(d.prefill()), d.prefill().batchLimit(),
        workers(d.decode()), d.decode().batchLimit(), d.devices()));
    if (d.prefill().replicasPerGroup() > 1 || d.decode().replicasPerGroup() > 1) {
      notes.add("the experts span replicas: the exchange is planned and launched with DeepEP's"
          + " kernels, which the image must include; the batch limits are per replica"
          + " (attention data-parallel rank)");
    }
    return new LaunchConfigs.Emitted(yaml(docs, YAML_FILES), notes);
  }

  /**
   * A pool's workers for the notes: "4 workers x 2 GPUs", or, where the experts span replicas,
   * "1 worker x 16 GPUs (2 nodes; 8 replicas of tp 2, ep 16)".
   */
  private static String workers(InferencePlanner.PoolConfig p) {
    int group = p.replicasPerGroup();
    if (group == 1) {
      return String.format(Locale.ROOT, "%d workers x %d GPUs", p.replicas(), p.tp());
    }
    return String.format(Locale.ROOT, "%d workers x %d GPUs (%d replicas of tp %d each, ep %d)",
        p.replicas() / group, p.ep(), group, p.tp(), p.ep());
  }

  /** The prefill and decode components of a Dynamo deployment, in one engine's vocabulary. */
  private record Worker(ServingPlans.Result result, InferencePlanner.DisaggregatedConfig d,
      String image, Target backend, String engineConfig, List<String> notes) {

    void add(ArrayNode components, String name, String type, InferencePlanner.PoolConfig pool,
        boolean decode) {
      // A pool whose experts span ep/tp replicas runs each group as one worker of ep devices,
      // attention data-parallel over the replicas; a group wider than a node is a multi-node
      // worker, whose ranks and rendezvous Dynamo's operator adds (multinode.nodeCount).
      int group = pool.replicasPerGroup();
      int gpus = pool.tp() * group;
      int perNode = result.request().cluster().devicesPerNode();
      ObjectNode w = components.addObject();
      w.put("name", name);
      w.put("type", type);
      w.put("replicas", pool.replicas() / group);
      if (gpus > perNode) {
        w.putObject("multinode").put("nodeCount", gpus / perNode);
      }
      ObjectNode podSpec = w.putObject("podTemplate").putObject("spec");
      ObjectNode container = podSpec.putArray("containers").addObject();
      container.put("name", "main");
      container.put("image", image);
      container.putArray("command").add("python3").add("-m").add("dynamo." + backend.id());
      ArrayNode args = container.putArray("args");
      TransformerSpec model = result.request().model();
      switch (backend) {
        case SGLANG -> {
          // Dynamo's SGLang worker passes what it does not parse itself to SGLang's ServerArgs
          // (components/src/dynamo/sglang/args.py @ 26aaf1e9); the disaggregation options are
          // SGLang's, set as Dynamo's disaggregated SGLang example sets them, and the Frontend
          // tokenizes (--skip-tokenizer-init, as in that example).
          List<String> server = new ArrayList<>(ServingCommands.sglangArgs(result, gpus,
              pool.ep(), pool.batchLimit() * group, d.weights(), d.kvCache(), decode, notes));
          if (group > 1) {
            server.addAll(ServingCommands.sglangDataParallelArgs(group, pool.twoBatchOverlap(),
                decode ? "low_latency" : "normal", pool.redundantExperts()));
          }
          for (String a : server) {
            String[] kv = a.split(" ", 2);
            args.add(kv[0]);
            if (kv.length > 1) {
              args.add(kv[1]);
            }
          }
          args.add("--skip-tokenizer-init");
          args.add("--disaggregation-mode").add(type);
          args.add("--disaggregation-transfer-backend").add("nixl");
          args.add("--disaggregation-bootstrap-port")
              .add(Integer.toString(SGLANG_BOOTSTRAP_PORT));
        }
        case TRTLLM -> {
          // The worker's own options (backend_args.py @ 5c950bf9): it parses them strictly,
          // and what it lacks is in the pool's engine YAML.
          args.add("--model").add(model.name());
          args.add("--served-model-name").add(model.name());
          args.add("--tensor-parallel-size").add(Integer.toString(pool.tp()));
          if (pool.ep() > 1) {
            args.add("--expert-parallel-size").add(Integer.toString(pool.ep()));
          }
          args.add("--max-batch-size").add(Integer.toString(pool.batchLimit()));
          args.add("--max-seq-len").add(Integer.toString(model.seqLen()));
          args.add("--extra-engine-args").add(ENGINE_DIR + "/" + type + ".yaml");
          args.add("--disaggregation-mode").add(type);
          container.putArray("volumeMounts").addObject().put("name", "engine-config")
              .put("mountPath", ENGINE_DIR).put("readOnly", true);
          podSpec.putArray("volumes").addObject().put("name", "engine-config")
              .putObject("configMap").put("name", engineConfig);
        }
        default -> {
          args.add("--model").add(model.name());
          args.add("--disaggregation-mode").add(type);
          args.add("--kv-transfer-config").add(KV_TRANSFER);
          // Speculative decoding drafts tokens where they are generated: the decode workers.
          ServingCommands.engineArgs(result, pool.tp(), pool.ep(), pool.batchLimit(),
              d.weights(), d.kvCache(), decode, notes).forEach(args::add);
          if (group > 1) {
            ServingCommands.vllmDataParallelArgs(group, pool.twoBatchOverlap(), decode,
                pool.redundantExperts()).forEach(args::add);
          }
        }
      }
      container.putArray("envFrom").addObject().putObject("secretRef")
          .put("name", "hf-token-secret");
      container.putObject("resources").putObject("limits")
          .put(GPU, Integer.toString(Math.min(gpus, perNode)));
    }
  }

  private static ObjectNode metadata(LaunchOptions o, String name, boolean gangLabel) {
    ObjectNode m = F.objectNode();
    m.put("name", name);
    m.put("namespace", o.namespace());
    ObjectNode labels = m.putObject("labels");
    labels.put("app.kubernetes.io/name", name);
    labels.put("app.kubernetes.io/managed-by", "hyperframes");
    if (gangLabel && o.gang().equals("kueue")) {
      labels.put("kueue.x-k8s.io/queue-name", o.queue());
    }
    return m;
  }

  private static String gangNote(LaunchOptions o, int pods) {
    return switch (o.gang()) {
      case "volcano" -> "Volcano, minAvailable " + pods + " of " + pods + " pods, queue "
          + o.queue() + " (the training-operator must run with --gang-scheduler-name=volcano)";
      case "kueue" -> "Kueue, local queue " + o.queue() + " (admits all " + pods
          + " pods at once)";
      default -> "none: a half-placed job can hold GPUs while it waits for the rest";
    };
  }

  private static ObjectNode replicaSpec(TrainingJob job, int replicas) {
    ObjectNode r = F.objectNode();
    r.put("replicas", replicas);
    r.put("restartPolicy", "OnFailure");
    ObjectNode template = r.putObject("template");
    template.putObject("metadata").putObject("labels").put("app.kubernetes.io/name",
        job.options().name());
    template.set("spec", podSpec(job, job.engineArgs(), false));
    return r;
  }

  private static ObjectNode podSpec(TrainingJob job, List<String> torchrunArgs,
      boolean jobSet) {
    ObjectNode pod = F.objectNode();
    if (job.options().gang().equals("volcano")) {
      pod.put("schedulerName", "volcano");
    }
    ObjectNode c = pod.putArray("containers").addObject();
    // The training-operator finds the container it configures by this name.
    c.put("name", "pytorch");
    c.put("image", job.options().image());
    c.putArray("command").add("torchrun");
    ArrayNode args = c.putArray("args");
    torchrunArgs.forEach(args::add);
    ArrayNode env = c.putArray("env");
    for (Map.Entry<String, String> e : job.env().entrySet()) {
      env.addObject().put("name", e.getKey()).put("value", e.getValue());
    }
    if (jobSet) {
      env.addObject().put("name", "JOB_COMPLETION_INDEX").putObject("valueFrom")
          .putObject("fieldRef").put("fieldPath",
              "metadata.annotations['batch.kubernetes.io/job-completion-index']");
    }
    ObjectNode res = c.putObject("resources");
    ObjectNode limits = res.putObject("limits");
    ObjectNode requests = res.putObject("requests");
    for (ObjectNode q : List.of(limits, requests)) {
      q.put(GPU, Integer.toString(job.gpusPerPod()));
      if (job.rdma()) {
        q.put(RDMA, "1");
      }
    }
    requests.put("cpu", Integer.toString(job.cpusPerPod()));
    if (job.rdma()) {
      c.putObject("securityContext").putObject("capabilities").putArray("add").add("IPC_LOCK");
    }
    ArrayNode mounts = c.putArray("volumeMounts");
    mounts.addObject().put("name", "dshm").put("mountPath", "/dev/shm");
    ArrayNode volumes = pod.putArray("volumes");
    volumes.addObject().put("name", "dshm").putObject("emptyDir").put("medium", "Memory")
        .put("sizeLimit", job.shmQuantity());
    if (job.deepspeedConfig() != null) {
      mounts.addObject().put("name", "deepspeed-config")
          .put("mountPath", Dockerfiles.WORKDIR + "/ds_config.json")
          .put("subPath", "ds_config.json");
      volumes.addObject().put("name", "deepspeed-config").putObject("configMap")
          .put("name", job.options().name() + "-deepspeed");
    }
    return pod;
  }

  private static ObjectNode deepspeedConfigMap(TrainingJob job) {
    if (job.deepspeedConfig() == null) {
      return null;
    }
    ObjectNode m = F.objectNode();
    m.put("apiVersion", "v1");
    m.put("kind", "ConfigMap");
    m.set("metadata", metadata(job.options(), job.options().name() + "-deepspeed", false));
    m.putObject("data").put("ds_config.json", job.deepspeedConfig());
    return m;
  }
}
