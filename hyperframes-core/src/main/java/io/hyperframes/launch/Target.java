package io.hyperframes.launch;

import io.hyperframes.json.Ids;
import java.util.Arrays;
import java.util.Locale;
import java.util.stream.Collectors;

/** What a plan is emitted as ({@link Launch}, {@code hyperframes plan --emit ID}). */
public enum Target {
  /** Megatron-LM {@code pretrain_gpt.py} arguments. */
  MEGATRON,
  /** A DeepSpeed configuration JSON. */
  DEEPSPEED,
  /** A torchrun launch line with the Megatron-LM arguments. */
  TORCHRUN,
  /** A layered Dockerfile: system base, AI framework, code. */
  DOCKERFILE,
  /**
   * Kubernetes manifests: a Kubeflow {@code PyTorchJob} (training-operator v1) for training, a
   * {@code Deployment} of vLLM for serving.
   */
  KUBERNETES,
  /** A Kubernetes {@code JobSet} (jobset.x-k8s.io/v1alpha2) for training. */
  JOBSET,
  /** A {@code vllm serve} line for one replica of a serving plan. */
  VLLM,
  /** An SGLang {@code python -m sglang.launch_server} line for one replica of a serving plan. */
  SGLANG,
  /** A TensorRT-LLM {@code trtllm-serve} line for one replica of a serving plan. */
  TRTLLM,
  /**
   * An NVIDIA Dynamo {@code DynamoGraphDeployment} (nvidia.com/v1beta1) of a serving plan's
   * disaggregated configuration: a frontend, a pool of vLLM prefill workers and a pool of vLLM
   * decode workers.
   */
  DYNAMO;

  private final String id = Ids.lowerCase(this);

  /**
   * Whether the target launches a serving plan (vllm, sglang, trtllm, dynamo; kubernetes does
   * both).
   */
  public boolean serves() {
    return this == VLLM || this == SGLANG || this == TRTLLM || this == DYNAMO
        || this == KUBERNETES;
  }

  /** The command-line id ("kubernetes"). */
  public String id() {
    return id;
  }

  /**
   * The target of that id.
   *
   * @throws IllegalArgumentException naming {@code field}, the value and the choices
   */
  public static Target fromId(String field, String id) {
    for (Target t : values()) {
      if (t.id.equals(id == null ? null : id.toLowerCase(Locale.ROOT))) {
        return t;
      }
    }
    throw new IllegalArgumentException(field + ": unknown target '" + id + "' (expected "
        + Arrays.stream(values()).map(Target::id).collect(Collectors.joining(", ")) + ")");
  }
}
