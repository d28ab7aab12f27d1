package io.hyperframes.schedule;

import static com.google.common.base.Preconditions.checkArgument;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

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

  /**
   * The GPUs a rigid policy gives a job: what it asks for, or the whole cluster when it asks
   * for more and may run on fewer (an elastic job).
   */
  static int rigid(RoundPolicy.Demand d, int capacity) {
    return Math.max(d.minGpus(), Math.min(d.gpus(), capacity));
  }

  /** The previous allocations of the jobs still placeable, as mutable copies, in job order. */
  static Map<String, List<Integer>> kept(List<RoundPolicy.Demand> jobs,
      Map<String, List<Integer>> previous) {
    Map<String, List<Integer>> alloc = new LinkedHashMap<>();
    for (RoundPolicy.Demand d : jobs) {
      List<Integer> a = previous.get(d.name());
      if (a != null) {
        alloc.put(d.name(), new ArrayList<>(a));
      }
    }
    return alloc;
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
      int total = Arrays.stream(gpusPerNode).sum();
      for (Demand d : jobs) {
        String k = d.name();
        long since = now - lastCheck.getOrDefault(k, 0L);
        lastCheck.put(k, now);
        if (running.get(k)) {
          long ex = executed.getOrDefault(k, 0L) + since;
          executed.put(k, ex);
          // Demotion by attained service: GPUs x executed time (2D-LAS).
          if (ex * rigid(d, total) >= threshold && queue0.remove(k)) {
            queue1.add(k);
          }
        }
      }
      int left = total;
      for (List<String> q : List.of(queue0, queue1)) {
        for (String k : q) {
          int g = rigid(byName.get(k), total);
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
            alloc.put(k, mostFree(free, rigid(byName.get(k), total)));
          }
        }
      }
      return alloc;
    }
  }

  /**
   * A policy that keeps every allocation of the previous round and places jobs into what is left:
   * {@link #place} sees the kept allocations, the free GPUs per node and their sum.
   */
  private abstract static class Keeping implements RoundPolicy {
    private final String name;

    Keeping(String name) {
      this.name = name;
    }

    @Override
    public final String name() {
      return name;
    }

    @Override
    public final Map<String, List<Integer>> allocate(long now, List<Demand> jobs,
        int[] gpusPerNode, Map<String, List<Integer>> previous) {
      Map<String, List<Integer>> alloc = kept(jobs, previous);
      int[] free = free(gpusPerNode, alloc);
      place(jobs, gpusPerNode, alloc, free, Arrays.stream(free).sum());
      return alloc;
    }

    /** Adds to {@code alloc} from {@code free} ({@code left} GPUs in all), both updated. */
    abstract void place(List<Demand> jobs, int[] gpusPerNode, Map<String, List<Integer>> alloc,
        int[] free, int left);
  }

  /** See {@link RoundPolicy#fifo()}. */
  static final class StrictFifo extends Keeping {
    StrictFifo() {
      super("fifo");
    }

    @Override
    void place(List<Demand> jobs, int[] gpusPerNode, Map<String, List<Integer>> alloc,
        int[] free, int left) {
      int total = Arrays.stream(gpusPerNode).sum();
      for (Demand d : jobs) {
        if (alloc.containsKey(d.name())) {
          continue;
        }
        int g = rigid(d, total);
        if (g > left) {
          break;
        }
        alloc.put(d.name(), mostFree(free, g));
        left -= g;
      }
    }
  }

  /** See {@link RoundPolicy#elasticFifo()}. */
  static final class ElasticFifo extends Keeping {
    ElasticFifo() {
      super("elastic-fifo");
    }

    @Override
    void place(List<Demand> jobs, int[] gpusPerNode, Map<String, List<Integer>> alloc,
        int[] free, int left) {
      List<Demand> runningNewestFirst = new ArrayList<>();
      for (Demand d : jobs) {
        if (alloc.containsKey(d.name())) {
          runningNewestFirst.add(d);
        }
      }
      Collections.reverse(runningNewestFirst);
      for (Demand d : jobs) {
        if (alloc.containsKey(d.name())) {
          continue;
        }
        // Shrink running elastic jobs, the most recently started first, to make room.
        for (Demand r : runningNewestFirst) {
          if (left >= d.minGpus()) {
            break;
          }
          List<Integer> a = alloc.get(r.name());
          while (a.size() > r.minGpus() && left < d.minGpus()) {
            free[a.remove(a.size() - 1)]++;
            left++;
          }
        }
        if (left < d.minGpus()) {
          break;
        }
        alloc.put(d.name(), mostFree(free, d.minGpus()));
        left -= d.minGpus();
      }
      // Grow the running jobs toward their most, oldest first.
      for (Demand d : jobs) {
        List<Integer> a = alloc.get(d.name());
        if (a == null || left == 0) {
          continue;
        }
        int grow = Math.min(left, d.maxGpus() - a.size());
        if (grow > 0) {
          a.addAll(mostFree(free, grow));
          left -= grow;
        }
      }
    }
  }
}
