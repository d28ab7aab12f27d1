package io.hyperframes.schedule;

import java.util.random.RandomGenerator;

/**
 * A placement policy: among the nodes a task fits on, which one it goes to. The simulator
 * ({@link Schedule}) filters the feasible nodes (CPU, memory, GPU model, a GPU with enough left
 * for a shared task, enough fully free GPUs for whole ones), asks the policy to {@link #score}
 * each, and places the task on the highest score; ties go to a node order drawn once per run
 * from the seed (as the published simulator's random node-name prefixes do). A shared task's GPU
 * is {@link #shareGpu}; whole GPUs are the lowest-index free ones.
 *
 * <p>Built-ins follow {@code hkust-adsl/kubernetes-scheduler-simulator} @ 8f3d641 (Weng et al.,
 * "Beware of Fragmentation", USENIX ATC 2023): {@link #random}, {@link #bestFit},
 * {@link #fragmentationGradientDescent}. Implement this interface to try your own.
 */
public interface Placement {

  /** The policy's name. */
  String name();

  /**
   * The score of placing {@code pod} on {@code node}, higher is better. Called only for nodes
   * the task fits on.
   */
  int score(NodeView node, GpuPod pod, RandomGenerator rng);

  /**
   * The GPU a shared task ({@code gpus == 1}, {@code gpuMilli < 1000}) takes on the node it was
   * placed on: by default the best fit, the GPU with the least left that is enough (lowest index
   * on ties).
   */
  default int shareGpu(NodeView node, GpuPod pod, RandomGenerator rng) {
    int best = -1;
    for (int i = 0; i < node.node().gpus(); i++) {
      int left = node.gpuLeft(i);
      if (left >= pod.gpuMilli() && (best < 0 || left < node.gpuLeft(best))) {
        best = i;
      }
    }
    return best;
  }

  /**
   * Random-fit: a node drawn uniformly among the feasible ones, a shared task's GPU drawn
   * uniformly among those with enough left.
   */
  static Placement random() {
    return new Policies.RandomFit();
  }

  /**
   * Best-fit: the node with the least CPU and GPU left after the task,
   * {@code score = int((1 − (0.5·cpuLeft′/128 000 + 0.5·gpuLeft′/8 000))·100)} (thousandths; the
   * simulator's {@code best_fit_score.go}, its largest node 128 cores and 8 GPUs).
   */
  static Placement bestFit() {
    return new Policies.BestFit();
  }

  /**
   * Fragmentation gradient descent (Weng et al. 2023, §4): the node whose GPU fragmentation,
   * measured against the target workload's task types, grows least;
   * {@code score = int(sigmoid((F − F′)/1000)·100)}, a shared task's GPU the first reaching the
   * best score.
   */
  static Placement fragmentationGradientDescent(TargetWorkload target) {
    return new Policies.Fgd(target);
  }

  /**
   * The policy of that name: random, bestfit, or fgd (with {@code target}).
   *
   * @throws IllegalArgumentException naming the choices
   */
  static Placement named(String name, TargetWorkload target) {
    return switch (name == null ? "" : name.toLowerCase(java.util.Locale.ROOT)) {
      case "random" -> random();
      case "bestfit" -> bestFit();
      case "fgd" -> fragmentationGradientDescent(target);
      default -> throw new IllegalArgumentException("--policy: unknown placement '" + name
          + "' (expected random, bestfit or fgd)");
    };
  }
}
