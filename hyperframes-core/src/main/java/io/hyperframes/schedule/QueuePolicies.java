package io.hyperframes.schedule;

import static com.google.common.base.Preconditions.checkArgument;

import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/** The built-in {@link QueuePolicy} implementations. */
final class QueuePolicies {
  private QueuePolicies() {}

  /**
   * A queue whose head blocks the rest, ordered by {@code key} (smaller first) then arrival,
   * or by arrival alone when {@code key} is null.
   */
  record Strict(String name, java.util.function.ToDoubleFunction<GpuJob> key)
      implements QueuePolicy {
    @Override
    public Comparator<GpuJob> order() {
      return key == null ? ARRIVAL : Comparator.comparingDouble(key).thenComparing(ARRIVAL);
    }

    @Override
    public void schedule(Queue q) {
      for (GpuJob j : q.waiting()) {
        if (!q.tryStart(j)) {
          return;
        }
      }
    }
  }

  /** See {@link QueuePolicy#easyBackfill()}. */
  static final class EasyBackfill implements QueuePolicy {
    @Override
    public String name() {
      return "easy-backfill";
    }

    @Override
    public Comparator<GpuJob> order() {
      return ARRIVAL;
    }

    @Override
    public void schedule(Queue q) {
      GpuJob head = null;
      double shadow = Double.POSITIVE_INFINITY;
      long extra = 0;
      for (GpuJob j : q.waiting()) {
        if (head == null) {
          if (q.tryStart(j)) {
            continue;
          }
          head = j;
          // The head's reservation: when the running jobs' finishes free enough GPUs.
          Reservation at = q.reservation(head.gpuMilli());
          shadow = at.atSeconds();
          extra = at.spareGpuMilli();
          continue;
        }
        if (q.freeGpuMilli() == 0) {
          return;
        }
        long need = j.gpuMilli();
        if (need > q.freeGpuMilli()) {
          continue;
        }
        boolean endsFirst = q.now() + q.remainingSeconds(j) <= shadow;
        if ((endsFirst || need <= extra) && q.tryStart(j) && !endsFirst) {
          extra -= need;
        }
      }
    }
  }

  /** See {@link QueuePolicy#elastic()}. */
  static final class Elastic implements QueuePolicy {
    @Override
    public String name() {
      return "elastic";
    }

    @Override
    public boolean growsRunningJobs() {
      return true;
    }

    @Override
    public Comparator<GpuJob> order() {
      return ARRIVAL;
    }

    @Override
    public void schedule(Queue q) {
      GpuJob head = null;
      for (GpuJob j : q.waiting()) {
        if (!start(q, j)) {
          head = j;
          break;
        }
      }
      if (head != null) {
        shrinkFor(q, head);
        return;
      }
      grow(q);
    }

    /** Starts {@code j} on its own count or, elastic, on the most GPUs below it that fit. */
    private static boolean start(Queue q, GpuJob j) {
      if (j.gpuMilli() <= q.freeGpuMilli() && q.tryStart(j)) {
        return true;
      }
      if (!j.isElastic()) {
        return false;
      }
      int most = (int) Math.min(j.wholeGpus() - 1, q.freeGpuMilli() / 1000);
      for (int g = most; g >= j.minGpus(); g--) {
        if (q.tryStart(j, g)) {
          return true;
        }
      }
      return false;
    }

    /** Elastic jobs give back GPUs, most recently started first, until {@code head} starts. */
    private static void shrinkFor(Queue q, GpuJob head) {
      long need = 1000L * (head.isElastic() ? head.minGpus() : head.wholeGpus());
      List<RunningJob> donors = new ArrayList<>();
      long give = 0;
      for (RunningJob r : q.running()) {
        if (r.job().isElastic() && r.gpus() > r.job().minGpus()) {
          donors.add(r);
          give += 1000L * (r.gpus() - r.job().minGpus());
        }
      }
      if (donors.isEmpty() || q.freeGpuMilli() + give < need) {
        return;
      }
      donors.sort(Comparator.comparingDouble(RunningJob::startSeconds).reversed());
      int[] width = new int[donors.size()];
      for (int d = 0; d < width.length; d++) {
        width[d] = donors.get(d).gpus();
      }
      // Two passes: down to their own count, then down to their fewest.
      for (int pass = 0; pass < 2; pass++) {
        for (int d = 0; d < width.length; d++) {
          RunningJob r = donors.get(d);
          int floor = pass == 0 ? Math.max(r.job().minGpus(), Math.min(r.gpus(),
              r.job().wholeGpus())) : r.job().minGpus();
          if (width[d] <= floor || r.startSeconds() >= q.now()) {
            continue;
          }
          if (q.resize(r.job(), floor)) {
            width[d] = floor;
          }
          if (start(q, head)) {
            return;
          }
        }
      }
    }

    /** With nothing waiting, elastic jobs grow into the idle GPUs, earliest started first. */
    private static void grow(Queue q) {
      for (RunningJob r : q.running().stream()
          .sorted(Comparator.comparingDouble(RunningJob::startSeconds)).toList()) {
        long free = q.freeGpuMilli() / 1000;
        if (free == 0) {
          return;
        }
        // A job started (or resumed) at this instant grows at a later event.
        if (!r.job().isElastic() || r.gpus() >= r.job().maxGpus()
            || r.startSeconds() >= q.now()) {
          continue;
        }
        int target = (int) Math.min(r.job().maxGpus(), r.gpus() + free);
        // Restarting for less than one more member's worth is not worth its cost: grow only
        // by whole GPUs that fit, largest first.
        for (int g = target; g > r.gpus(); g--) {
          if (q.resize(r.job(), g)) {
            break;
          }
        }
      }
    }

  }

  /** See {@link QueuePolicy#priority()}. */
  static final class Priority implements QueuePolicy {
    @Override
    public String name() {
      return "priority";
    }

    @Override
    public Comparator<GpuJob> order() {
      return Comparator.comparingInt((GpuJob j) -> -j.priority()).thenComparing(ARRIVAL);
    }

    /** Victims first: lowest tier, then the most recently started. */
    static final Comparator<RunningJob> VICTIMS = Comparator.comparingInt((RunningJob r) ->
        r.job().priority()).thenComparing(Comparator.comparingDouble(RunningJob::startSeconds)
        .reversed());

    @Override
    public void schedule(Queue q) {
      int lowest = Integer.MAX_VALUE;
      for (RunningJob r : q.running()) {
        lowest = Math.min(lowest, r.job().priority());
      }
      for (GpuJob j : q.waiting()) {
        if (j.gpuMilli() <= q.freeGpuMilli() && q.tryStart(j)) {
          continue;
        }
        if (lowest < j.priority()) {
          int tier = j.priority();
          q.tryStartPreempting(j, r -> r.job().priority() < tier, VICTIMS);
        }
      }
    }
  }

  /** See {@link QueuePolicy#quotas(Map, boolean)}. */
  static final class Quotas implements QueuePolicy {
    private final Map<String, Long> quotaMilli = new HashMap<>();
    private final boolean borrowing;
    private final Set<GpuJob> borrowers = Collections.newSetFromMap(new IdentityHashMap<>());

    Quotas(Map<String, Integer> quotaGpus, boolean borrowing) {
      checkArgument(quotaGpus != null && !quotaGpus.isEmpty(), "quotas: at least one tenant");
      quotaGpus.forEach((t, g) -> {
        checkArgument(t != null && g != null && g >= 0, "quotas[%s]: must be >= 0 GPUs, got %s",
            t, g);
        quotaMilli.put(t, 1000L * g);
      });
      this.borrowing = borrowing;
    }

    @Override
    public String name() {
      return borrowing ? "quotas-borrowing" : "quotas";
    }

    @Override
    public Comparator<GpuJob> order() {
      return ARRIVAL;
    }

    @Override
    public void schedule(Queue q) {
      if (q.freeGpuMilli() == 0 && borrowers.isEmpty()) {
        // Nothing fits and nothing lent can be reclaimed.
        return;
      }
      List<RunningJob> running = new ArrayList<>(q.running());
      Set<GpuJob> alive = Collections.newSetFromMap(new IdentityHashMap<>());
      Map<String, Long> used = new HashMap<>();
      for (RunningJob r : running) {
        alive.add(r.job());
        used.merge(r.job().tenant(), r.job().gpuMilli(), Long::sum);
      }
      borrowers.retainAll(alive);
      for (GpuJob j : q.waiting()) {
        if (q.freeGpuMilli() == 0 && borrowers.isEmpty()) {
          return;
        }
        long quota = quotaMilli.getOrDefault(j.tenant(), 0L);
        long mine = used.getOrDefault(j.tenant(), 0L);
        boolean within = mine + j.gpuMilli() <= quota;
        if (within) {
          if (!(j.gpuMilli() <= q.freeGpuMilli() && q.tryStart(j))) {
            if (!reclaim(q, j, running, used)) {
              continue;
            }
          }
          used.merge(j.tenant(), j.gpuMilli(), Long::sum);
        } else if (borrowing && j.gpuMilli() <= q.freeGpuMilli() && q.tryStart(j)) {
          borrowers.add(j);
          used.merge(j.tenant(), j.gpuMilli(), Long::sum);
        }
      }
    }

    /**
     * Starts {@code j} by preempting borrowers where that makes room (most recent first on
     * each node); whether it started.
     */
    private boolean reclaim(Queue q, GpuJob j, List<RunningJob> running,
        Map<String, Long> used) {
      if (borrowers.isEmpty()) {
        return false;
      }
      List<GpuJob> stopped = q.tryStartPreempting(j, r -> borrowers.contains(r.job()),
          Comparator.comparingDouble(RunningJob::startSeconds).reversed());
      if (stopped == null) {
        return false;
      }
      for (GpuJob v : stopped) {
        borrowers.remove(v);
        running.removeIf(r -> r.job() == v);
        used.merge(v.tenant(), -v.gpuMilli(), Long::sum);
      }
      return true;
    }
  }
}
