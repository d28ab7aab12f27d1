package io.hyperframes.schedule;

import static com.google.common.base.Preconditions.checkArgument;

import com.google.common.collect.ImmutableList;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The task types a cluster is expected to host, with their shares: what fragmentation is
 * measured against (Weng et al. 2023, §3.2, "target workload"). Built from a trace as the
 * published simulator does ({@code pkg/utils/frag.go}, "typical pods"): tasks keyed by (CPU, GPU
 * thousandths per GPU, GPUs, GPU models), the most frequent keys taken until they cover
 * {@code coverage} of the tasks (ties: the larger key first), shares renormalised over those.
 *
 * @param types the task types, most frequent first
 */
public record TargetWorkload(List<Type> types) {

  /**
   * One task type and its share.
   *
   * @param cpuMilli CPU
   * @param gpuMilli thousandths of each GPU (0: a CPU task)
   * @param gpus GPUs
   * @param models GPU models allowed, {@code |}-joined (empty: any)
   * @param share share of the target workload, in (0, 1]
   */
  public record Type(long cpuMilli, int gpuMilli, int gpus, String models, double share) {}

  public TargetWorkload {
    checkArgument(types != null && !types.isEmpty(), "target workload: at least one task type");
    types = ImmutableList.copyOf(types);
  }

  /** The target workload of {@code pods}, covering 95 % of them. */
  public static TargetWorkload of(List<GpuPod> pods) {
    return of(pods, 0.95);
  }

  /**
   * The target workload of {@code pods}: their most frequent types until {@code coverage} of
   * the tasks.
   *
   * @throws IllegalArgumentException when there are no pods or coverage is not in (0, 1]
   */
  public static TargetWorkload of(List<GpuPod> pods, double coverage) {
    checkArgument(pods != null && !pods.isEmpty(), "target workload: no tasks");
    checkArgument(coverage > 0 && coverage <= 1, "coverage: must be in (0, 1], got %s",
        coverage);
    Map<Key, Integer> counts = new HashMap<>();
    for (GpuPod p : pods) {
      counts.merge(key(p), 1, Integer::sum);
    }
    List<Map.Entry<Key, Integer>> sorted = new ArrayList<>(counts.entrySet());
    Comparator<Map.Entry<Key, Integer>> byCount = Map.Entry.comparingByValue();
    sorted.sort(byCount.thenComparing(Map.Entry::getKey, KEY_ORDER).reversed());
    List<Map.Entry<Key, Integer>> kept = new ArrayList<>();
    int covered = 0;
    for (Map.Entry<Key, Integer> e : sorted) {
      kept.add(e);
      covered += e.getValue();
      if (covered >= coverage * pods.size()) {
        break;
      }
    }
    List<Type> types = new ArrayList<>();
    for (Map.Entry<Key, Integer> e : kept) {
      Key k = e.getKey();
      types.add(new Type(k.cpuMilli(), k.gpuMilli(), k.gpus(), k.models(),
          (double) e.getValue() / covered));
    }
    return new TargetWorkload(types);
  }

  /** A task's type: what it asks for. */
  private record Key(long cpuMilli, int gpuMilli, int gpus, String models) {}

  private static final Comparator<Key> KEY_ORDER = Comparator.comparingLong(Key::cpuMilli)
      .thenComparingInt(Key::gpuMilli).thenComparingInt(Key::gpus)
      .thenComparing(Key::models);

  private static Key key(GpuPod p) {
    return new Key(p.cpuMilli(), p.gpuMilli(), p.gpus(), p.gpuModels().isEmpty() ? ""
        : String.join("|", p.gpuModels()));
  }
}
