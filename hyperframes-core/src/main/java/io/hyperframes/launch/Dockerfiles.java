package io.hyperframes.launch;

import io.hyperframes.parallel.Engine;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * A training image in three layers, least to most often changed (the method's container
 * practice: system base, AI framework, business code, so that only the last layer is rebuilt
 * per change), each a named build stage: {@code base} (CUDA, cuDNN, NCCL and PyTorch built
 * against each other, from NVIDIA's NGC PyTorch container, with the run's environment fixed in
 * the image rather than patched in by mounts), {@code framework} (the engine at a release), and
 * {@code code} (the team's files and the launch command as entry point).
 *
 * <p>Bases and versions, each as its engine's own build uses it: Megatron-LM
 * {@code docker/.ngc_version.lts} ({@code NVIDIA/Megatron-LM} @ d98e8a64) names
 * {@code nvcr.io/nvidia/pytorch:25.09-py3}, its latest release tag is {@code core_v0.19.0}
 * (commit 5be96267); DeepSpeed {@code docker/gh-builder/Dockerfile.py311}
 * ({@code microsoft/DeepSpeed} @ 38327e07, {@code version.txt} 0.16.5) builds on
 * {@code nvcr.io/nvidia/pytorch:24.03-py3}; Megatron-DeepSpeed at f4157bea (its last commit,
 * 2024-12-24) carries the Megatron arguments for DeepSpeed's engine; FSDP is part of PyTorch,
 * so its image is the Megatron-LM base with the team's script.
 */
final class Dockerfiles {
  private Dockerfiles() {}

  static final String WORKDIR = "/workspace";
  static final String MEGATRON_DIR = "/opt/Megatron-LM";
  static final String MEGATRON_DEEPSPEED_DIR = "/opt/Megatron-DeepSpeed";
  static final String NGC_LTS = "nvcr.io/nvidia/pytorch:25.09-py3";
  static final String NGC_DEEPSPEED = "nvcr.io/nvidia/pytorch:24.03-py3";

  static LaunchConfigs.Emitted training(TrainingJob job) {
    List<String> notes = new ArrayList<>(job.notes());
    StringBuilder d = new StringBuilder();
    d.append("# syntax=docker/dockerfile:1\n");
    d.append(String.format(Locale.ROOT, "# Emitted by HyperFrames %s: %s on %d devices, engine %s"
        + " (tp %d, pp %d, dp %d).%n", version(), job.model().name(), job.devices(),
        job.engine().id(), job.plan().best().estimate().layout().tp(),
        job.plan().best().estimate().layout().pp(), job.plan().best().estimate().layout().dp()));
    d.append("# Three stages, least to most often changed: base, framework, code.\n\n");
    String base = job.engine() == Engine.DEEPSPEED ? NGC_DEEPSPEED : NGC_LTS;
    d.append("# 1. System base: CUDA, cuDNN, NCCL and PyTorch built against each other; the run's\n"
        + "#    environment is fixed here, not patched in by mounts.\n");
    d.append("FROM ").append(base).append(" AS base\n");
    d.append("ENV ");
    int i = 0;
    for (Map.Entry<String, String> e : job.env().entrySet()) {
      d.append(i++ == 0 ? "" : " \\\n    ").append(e.getKey()).append('=').append(e.getValue());
    }
    d.append("\n\n");
    d.append("# 2. Framework: the engine at a release, cached until the release changes.\n");
    d.append("FROM base AS framework\n");
    switch (job.engine()) {
      case MEGATRON -> d.append("ARG MEGATRON_LM_REF=core_v0.19.0\n")
          .append("RUN git clone --depth 1 --branch ${MEGATRON_LM_REF}"
              + " https://github.com/NVIDIA/Megatron-LM.git ").append(MEGATRON_DIR)
          .append(" \\\n && pip install --no-cache-dir --no-deps -e ").append(MEGATRON_DIR)
          .append('\n').append("ENV PYTHONPATH=").append(MEGATRON_DIR).append('\n');
      case DEEPSPEED -> d.append("ARG DEEPSPEED_VERSION=0.16.5\n")
          .append("ARG MEGATRON_DEEPSPEED_COMMIT=f4157bea69f3df8c6cb66f2ebcda66ba03d1288e\n")
          .append("RUN pip install --no-cache-dir deepspeed==${DEEPSPEED_VERSION} \\\n")
          .append(" && git clone https://github.com/microsoft/Megatron-DeepSpeed.git ")
          .append(MEGATRON_DEEPSPEED_DIR).append(" \\\n && git -C ")
          .append(MEGATRON_DEEPSPEED_DIR).append(" checkout ${MEGATRON_DEEPSPEED_COMMIT}\n")
          .append("ENV PYTHONPATH=").append(MEGATRON_DEEPSPEED_DIR).append('\n');
      case FSDP -> d.append("# PyTorch FSDP ships with PyTorch: nothing to add.\n");
      case MAXTEXT -> throw new IllegalArgumentException("--emit dockerfile: MaxText runs on"
          + " JAX, not in a PyTorch image");
    }
    d.append('\n');
    d.append("# 3. Code: the team's scripts and configuration, the only layer rebuilt per change.\n");
    d.append("FROM framework AS code\n");
    d.append("WORKDIR ").append(WORKDIR).append('\n');
    d.append("COPY . ").append(WORKDIR).append('\n');
    if (job.deepspeedConfig() != null) {
      notes.add("write the DeepSpeed configuration (--emit deepspeed) to ds_config.json beside"
          + " the Dockerfile: the code layer copies it to " + WORKDIR + "/ds_config.json");
    }
    d.append("ENTRYPOINT [\"torchrun\"]\n");
    d.append("CMD [");
    for (int k = 0; k < job.engineArgs().size(); k++) {
      d.append(k == 0 ? "" : ", ").append(jsonString(job.engineArgs().get(k)));
    }
    d.append("]\n");
    notes.add("torchrun takes the node count, rank and rendezvous from the environment"
        + " (PET_NNODES, PET_NPROC_PER_NODE, PET_NODE_RANK, PET_MASTER_ADDR, PET_MASTER_PORT, as"
        + " the training-operator sets them) or from flags before the script");
    notes.add("run with /dev/shm of " + job.shmQuantity() + " (docker run --shm-size="
        + job.shmQuantity().replace("Gi", "g") + "; the 64 MB default crashes the loaders)");
    return new LaunchConfigs.Emitted(d.toString(), notes);
  }

  /** {@code s} as a JSON string literal (the exec form of CMD is a JSON array). */
  static String jsonString(String s) {
    try {
      return io.hyperframes.json.Json.mapper().writeValueAsString(s);
    } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
      throw new IllegalStateException(e);
    }
  }

  /** The version in the jar's manifest (the same jar as {@code HyperFrames.version()}). */
  private static String version() {
    String v = Dockerfiles.class.getPackage().getImplementationVersion();
    return v == null ? "dev" : v;
  }
}
