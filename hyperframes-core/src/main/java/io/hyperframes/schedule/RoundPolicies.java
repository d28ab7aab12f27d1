package io.hyperframes.schedule;

import static com.google.common.base.Preconditions.checkArgument;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/** The built-in {@link RoundPolicy} implementations. */
final class RoundPolicies {
  private RoundPolicies() {}

  /**
   * Takes {@code gpus} GPUs node by node, each time from the node with the most free GPUs (the
   * lowest index on ties), as the artifact's {@code Counter.most_common(1)} does; updates
   * {@code free}.
   */
  static List<Integer> mostFree(int[] free, int gpus) {
    List<Integer> out = new ArrayList<>(gpus);
    while (out.size() < gpus) {
      int best = 0;
      for (int n = 1; n < free.length; n++) {
        if (free[n] > free[best]) {
          best = n;
        }
      }
      int take = Math.min(free[best], gpus - out.size());
      checkArgument(take > 0, "no free GPU left for a gang of %s", gpus);
      for (int i = 0; i < take; i++) {
        out.add(best);
      }
      free[best] -= take;
    }
    return out;
  }

  /** Free GPUs per node once {@code kept} allocations are held. */
  static int[] free(int[] gpusPerNode, Map<String, List<Integer>> kept) {
    int[] free = gpusPerNode.clone();
    for (List<Integer> a : kept.values()) {
      for (int n : a) {
        free[n]--;
      }
    }
    return free;
  }

  /** See {@link RoundPolicy#tiresias()}. */
  static final class Tiresias implements RoundPolicy {
    private final long threshold;
    private final List<String> queue0 = new ArrayList<>();
    private final List<String> queue1 = new ArrayList<>();
    private final Map<String, Boolean> running = new HashMap<>();
    private final Map<String, Long> lastCheck = new HashMap<>();
    private final Map<String, Long> executed = new HashMap<>();

    Tiresias(long thresholdGpuSeconds) {
      checkArgument(thresholdGpuSeconds > 0, "tiresias.thresholdGpuSeconds: must be > 0, got %s",
          thresholdGpuSeconds);
      this.threshold = thresholdGpuSeconds;
    }

    @Override
    public String name() {
      return "tiresias";
    }

    @Override
    public Map<String, List<Integer>> allocate(long now, List<Demand> jobs, int[] gpusPerNode,
        Map<String, List<Integer>> previous) {
      Map<String, Demand> byName = new LinkedHashMap<>();
      for (Demand d : jobs) {
        byName.put(d.name(), d);
      }
      queue0.removeIf(k -> !byName.containsKey(k));
      queue1.removeIf(k -> !byName.containsKey(k));
      running.keySet().removeIf(k -> !byName.containsKey(k));
      Map<String, List<Integer>> alloc = new LinkedHashMap<>();
      previous.forEach((k, v) -> {
        if (byName.containsKey(k)) {
          alloc.put(k, v);
        }
      });
      for (Demand d : jobs) {
        if (!running.containsKey(d.name())) {
          running.put(d.name(), false);
          queue0.add(d.name());
        }
      }
      for (Demand d : jobs) {
        String k = d.name();
        long since = now - lastCheck.getOrDefault(k, 0L);
        lastCheck.put(k, now);
        if (running.get(k)) {
          long ex = executed.getOrDefault(k, 0L) + since;
          executed.put(k, ex);
          // Demotion by attained service: GPUs x executed time (2D-LAS).
          if (ex * d.gpus() >= threshold && queue0.remove(k)) {
            queue1.add(k);
          }
        }
      }
      int total = 0;
      for (int g : gpusPerNode) {
        total += g;
      }
      int left = total;
      for (List<String> q : List.of(queue0, queue1)) {
        for (String k : q) {
          int g = byName.get(k).gpus();
          if (g <= left) {
            running.put(k, true);
            left -= g;
          } else {
            running.put(k, false);
            alloc.remove(k);
          }
        }
      }
      int[] free = free(gpusPerNode, alloc);
      for (List<String> q : List.of(queue0, queue1)) {
        for (String k : q) {
          if (running.get(k) && !alloc.containsKey(k)) {
            alloc.put(k, mostFree(free, byName.get(k).gpus()));
          }
        }
      }
      return alloc;
    }
  }

  /** See {@link RoundPolicy#fifo()}. */
  static final class StrictFifo implements RoundPolicy {
    @Override
    public String name() {
      return "fifo";
    }

    @Override
    public Map<String, List<Integer>> allocate(long now, List<Demand> jobs, int[] gpusPerNode,
        Map<String, List<Integer>> previous) {
      Map<String, List<Integer>> alloc = new LinkedHashMap<>();
      Set<String> active = new HashSet<>();
      for (Demand d : jobs) {
        active.add(d.name());
      }
      previous.forEach((k, v) -> {
        if (active.contains(k)) {
          alloc.put(k, v);
        }
      });
      int[] free = free(gpusPerNode, alloc);
      int left = 0;
      for (int f : free) {
        left += f;
      }
      for (Demand d : jobs) {
        if (alloc.containsKey(d.name())) {
          continue;
        }
        if (d.gpus() > left) {
          break;
        }
        alloc.put(d.name(), mostFree(free, d.gpus()));
        left -= d.gpus();
      }
      return alloc;
    }
  }
}
