package io.hyperframes.schedule;

import java.util.Set;
import java.util.random.RandomGenerator;

/** The built-in placement policies ({@link Placement}). */
final class Policies {
  private Policies() {}

  /** Largest node of the simulator's clusters: 128 cores, 8 GPUs (its {@code const.go}). */
  static final double MAX_CPU_MILLI = 128_000;
  static final double MAX_GPU_MILLI = 8_000;

  static final class RandomFit implements Placement {
    @Override
    public String name() {
      return "random";
    }

    @Override
    public int score(NodeView node, GpuPod pod, RandomGenerator rng) {
      // Independent uniform scores make the argmax a uniform draw among the feasible nodes.
      return rng.nextInt(Integer.MAX_VALUE);
    }

    @Override
    public int shareGpu(NodeView node, GpuPod pod, RandomGenerator rng) {
      int chosen = -1;
      int candidates = 0;
      for (int i = 0; i < node.node().gpus(); i++) {
        if (node.gpuLeft(i) >= pod.gpuMilli() && rng.nextInt(++candidates) == 0) {
          chosen = i;
        }
      }
      return chosen;
    }
  }

  static final class BestFit implements Placement {
    @Override
    public String name() {
      return "bestfit";
    }

    @Override
    public int score(NodeView node, GpuPod pod, RandomGenerator rng) {
      double s = 0.5 * (node.cpuLeft() - pod.cpuMilli()) / MAX_CPU_MILLI
          + 0.5 * (node.gpuLeftTotal() - pod.totalGpuMilli()) / MAX_GPU_MILLI;
      return (int) ((1 - s) * 100);
    }
  }

  /**
   * Fragmentation of a node against a target workload (Weng et al. 2023, §3.2; the simulator's
   * {@code NodeGpuShareFragAmountScore}): for each task type, its share times the GPU
   * thousandths the node could not give it — all the node's idle GPU when the type is a CPU
   * task, not allowed on the node's model, does not find enough GPUs, or does not find the CPU;
   * else only the idle GPUs too small for it.
   */
  static double fragmentation(TargetWorkload target, long cpuLeft, int[] gpuLeft, String model) {
    long total = 0;
    for (int g : gpuLeft) {
      total += g;
    }
    double frag = 0;
    for (TargetWorkload.Type t : target.types()) {
      if (t.gpuMilli() == 0 || !allowed(t.models(), model)) {
        frag += t.share() * total;
        continue;
      }
      int enough = 0;
      long small = 0;
      for (int g : gpuLeft) {
        if (g >= t.gpuMilli()) {
          enough++;
        } else {
          small += g;
        }
      }
      if (enough >= t.gpus() && cpuLeft >= t.cpuMilli()) {
        frag += t.share() * small;
      } else {
        frag += t.share() * total;
      }
    }
    return frag;
  }

  private static boolean allowed(String models, String model) {
    return models.isEmpty() || Set.of(models.split("\\|")).contains(model);
  }

  static int sigmoidScore(double fragBefore, double fragAfter) {
    double x = (fragBefore - fragAfter) / 1000;
    return (int) (100 / (1 + Math.exp(-x)));
  }

  static final class Fgd implements Placement {
    private final TargetWorkload target;

    Fgd(TargetWorkload target) {
      if (target == null) {
        throw new IllegalArgumentException("fgd: a target workload is needed");
      }
      this.target = target;
    }

    @Override
    public String name() {
      return "fgd";
    }

    private int[] left(NodeView node) {
      int[] g = new int[node.node().gpus()];
      for (int i = 0; i < g.length; i++) {
        g[i] = node.gpuLeft(i);
      }
      return g;
    }

    @Override
    public int score(NodeView node, GpuPod pod, RandomGenerator rng) {
      if (pod.gpus() == 1 && pod.gpuMilli() < 1000) {
        return bestShare(node, pod)[1];
      }
      int[] g = left(node);
      double before = fragmentation(target, node.cpuLeft(), g, node.node().model());
      ClusterState.takeWhole(g, pod.gpus());
      return sigmoidScore(before, fragmentation(target, node.cpuLeft() - pod.cpuMilli(), g,
          node.node().model()));
    }

    @Override
    public int shareGpu(NodeView node, GpuPod pod, RandomGenerator rng) {
      return bestShare(node, pod)[0];
    }

    /**
     * For a shared task: the first GPU whose use grows fragmentation least, and that score
     * ({-1, MIN_VALUE} when none has room).
     */
    private int[] bestShare(NodeView node, GpuPod pod) {
      int[] g = left(node);
      double before = fragmentation(target, node.cpuLeft(), g, node.node().model());
      int bestGpu = -1;
      int best = Integer.MIN_VALUE;
      for (int i = 0; i < g.length; i++) {
        if (g[i] >= pod.gpuMilli()) {
          g[i] -= pod.gpuMilli();
          int s = sigmoidScore(before, fragmentation(target, node.cpuLeft() - pod.cpuMilli(), g,
              node.node().model()));
          g[i] += pod.gpuMilli();
          if (s > best) {
            best = s;
            bestGpu = i;
          }
        }
      }
      return new int[] {bestGpu, best};
    }
  }
}
