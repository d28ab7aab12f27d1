package io.hyperframes.schedule;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Admission to a time replay: whether a job could start on the empty cluster at all (else it
 * would wait forever and is counted unschedulable). The empty cluster never changes, so answers
 * are kept by the shape of the members' requests.
 */
final class EmptyClusterFit {
  private final ClusterState empty;
  /** Answers of {@link #fitsEmpty} by the members' requests. */
  private final Map<List<Request>, Boolean> byShape = new HashMap<>();

  EmptyClusterFit(List<GpuNode> nodes) {
    this.empty = new ClusterState(nodes);
  }

  /** What a member asks for, without its name and times. */
  private record Request(long cpuMilli, long memoryMib, int gpus, int gpuMilli,
      Set<String> gpuModels) {}

  /** Whether {@code job} (an elastic one at its fewest GPUs) could start on the empty cluster. */
  boolean fits(GpuJob job) {
    List<GpuPod> pods = job.isElastic() ? job.shape(job.minGpus()) : job.members();
    if (sameWholeGpuMembers(pods)) {
      // Members of s whole GPUs and nothing else fit the empty cluster exactly when its nodes
      // have as many slots of s GPUs as there are members: ClusterState.mayFit's count.
      return empty.mayFit(pods);
    }
    List<Request> key = new ArrayList<>(pods.size());
    for (GpuPod p : pods) {
      key.add(new Request(p.cpuMilli(), p.memoryMib(), p.gpus(), p.gpuMilli(), p.gpuModels()));
    }
    return byShape.computeIfAbsent(key, k -> fitsEmpty(empty, job));
  }

  /** Whether every member asks for the same number of whole GPUs, of any model, only. */
  private static boolean sameWholeGpuMembers(List<GpuPod> pods) {
    int s = pods.get(0).gpus();
    for (int m = 0; m < pods.size(); m++) {
      GpuPod p = pods.get(m);
      if (p.gpus() != s || s == 0 || p.gpuMilli() != 1000 || p.cpuMilli() != 0
          || p.memoryMib() != 0 || !p.gpuModels().isEmpty()) {
        return false;
      }
    }
    return true;
  }

  /** Places the job member by member on the empty cluster, first fit, and takes it back. */
  private static boolean fitsEmpty(ClusterState empty, GpuJob job) {
    List<int[]> taken = new ArrayList<>();
    List<Integer> where = new ArrayList<>();
    boolean ok = true;
    List<GpuPod> pods = job.isElastic() ? job.shape(job.minGpus()) : job.members();
    for (GpuPod p : pods) {
      int n = -1;
      for (int i = 0; i < empty.nodes.length; i++) {
        if (empty.fits(i, p)) {
          n = i;
          break;
        }
      }
      if (n < 0) {
        ok = false;
        break;
      }
      int share = -1;
      if (p.gpus() == 1 && p.gpuMilli() < 1000) {
        for (int g = 0; g < empty.gpuLeft[n].length; g++) {
          if (empty.gpuLeft[n][g] >= p.gpuMilli()) {
            share = g;
            break;
          }
        }
      }
      taken.add(empty.place(n, p, share));
      where.add(n);
    }
    for (int m = taken.size() - 1; m >= 0; m--) {
      empty.release(where.get(m), pods.get(m), taken.get(m));
    }
    return ok;
  }
}
