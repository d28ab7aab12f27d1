package io.hyperframes.cli;

import io.hyperframes.launch.Launch;
import io.hyperframes.launch.LaunchConfigs;
import io.hyperframes.launch.LaunchOptions;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * How an emitted launch is named, scheduled and written, as a picocli mixin of the commands with
 * {@code --emit} ({@code plan}, {@code serve-plan}): {@code --name}, {@code --image},
 * {@code --namespace}, {@code --gang}, {@code --queue}, {@code --backend} and {@code --out}.
 */
final class LaunchOption {

  @Spec(Spec.Target.MIXEE) CommandSpec command;

  @Option(names = "--name", paramLabel = "NAME",
      description = "Job name for --emit kubernetes|jobset (DNS-1123 label; default"
          + " hyperframes-train, hyperframes-serve for a serving plan).")
  String name;

  @Option(names = "--image", defaultValue = "hyperframes-train:latest",
      description = "Image the pods run: the one built from --emit dockerfile.")
  String image;

  @Option(names = "--namespace", defaultValue = "default", description = "Kubernetes namespace.")
  String namespace;

  @Option(names = "--gang", defaultValue = "volcano",
      description = "Gang scheduling: volcano (default), kueue or none.")
  String gang;

  @Option(names = "--queue", defaultValue = "default", description = "Volcano or Kueue queue.")
  String queue;

  @Option(names = "--backend", paramLabel = "ENGINE",
      description = "With --emit dynamo: the engine of the prefill and decode workers, vllm"
          + " (default, python3 -m dynamo.vllm), sglang (python3 -m dynamo.sglang) or trtllm"
          + " (python3 -m dynamo.trtllm, with a ConfigMap of the pools' engine YAML).")
  String backend;

  @Option(names = "--out", paramLabel = "DIR",
      description = "With --emit dockerfile|kubernetes|jobset: write the files (Dockerfile,"
          + " .dockerignore, ds_config.json; NAME.yaml) into DIR instead of printing.")
  Path outDir;

  /** The options, named {@code defaultName} unless {@code --name} was given. */
  LaunchOptions options(String defaultName, String script) {
    return new LaunchOptions(name != null ? name : defaultName, image, namespace, gang, queue,
        script);
  }

  /** The engine of {@code --backend} (vLLM when it is not given). */
  io.hyperframes.launch.Target backend() {
    return backend == null ? io.hyperframes.launch.Target.VLLM
        : io.hyperframes.launch.Target.fromId("--backend", backend);
  }

  /**
   * Refuses {@code --backend} for a training launch.
   *
   * @throws IllegalArgumentException naming {@code --backend} and {@code emit} when it is given
   */
  void noBackend(String emit) {
    if (backend != null) {
      throw new IllegalArgumentException("--backend: only with --emit dynamo (the engine of its"
          + " workers), not with --emit " + emit);
    }
  }

  /** The folder of {@code --out}, or null. */
  Path out() {
    return outDir;
  }

  /**
   * Prints {@code e} or, with {@code --out}, writes it ({@code kind} "dockerfile": Dockerfile
   * and .dockerignore; "yaml": NAME.yaml; "text" cannot be written); notes go to stderr.
   *
   * @return the exit status, 0
   */
  int write(LaunchConfigs.Emitted e, String kind, LaunchOptions options) {
    var err = command.commandLine().getErr();
    if (outDir != null) {
      if (kind.equals("text")) {
        throw new IllegalArgumentException("--out: only with --emit dockerfile, kubernetes or"
            + " jobset (the other targets print one text)");
      }
      try {
        Files.createDirectories(outDir);
        if (kind.equals("dockerfile")) {
          Files.writeString(outDir.resolve("Dockerfile"), e.text());
          Files.writeString(outDir.resolve(".dockerignore"), Launch.dockerignore());
          err.println("wrote " + outDir.resolve("Dockerfile") + " and .dockerignore");
        } else {
          Path file = outDir.resolve(options.name() + ".yaml");
          Files.writeString(file, e.text());
          err.println("wrote " + file + " (kubectl apply -f " + file + ")");
        }
      } catch (IOException x) {
        throw new UncheckedIOException("--out: cannot write " + outDir, x);
      }
    } else {
      var o = command.commandLine().getOut();
      o.print(e.text().endsWith("\n") ? e.text() : e.text() + "\n");
      o.flush();
    }
    e.notes().forEach(n -> err.println("note: " + n));
    return 0;
  }
}
