package io.hyperframes.schedule;

import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;

/**
 * Which running jobs to stop so that a waiting job fits ({@link QueuePolicy.Queue
 * #tryStartPreempting}), planned on a copy of the cluster: member by member, the healthy node
 * where it fits after stopping the fewest candidates (then the fewest GPU thousandths), taking
 * the candidates of that node in the victim order.
 *
 * @param victims the runs to stop, in the order they were chosen
 * @param where the node of each member of the job
 * @param gpus the GPUs of each member on the plan's copy (whole GPUs may be other indices once
 *     placed for real)
 */
record PreemptionPlan(List<JobRun> victims, int[] where, int[][] gpus) {

  /**
   * The plan for {@code job} on {@code state}, stopping only {@code candidates} (in the victim
   * order); null when no such plan fits every member.
   */
  static PreemptionPlan find(ClusterState state, GpuJob job, List<JobRun> candidates,
      Placement placement, SplittableRandom rng) {
    List<List<JobRun>> onNode = new ArrayList<>();
    for (int n = 0; n < state.nodes.length; n++) {
      onNode.add(new ArrayList<>());
    }
    for (JobRun r : candidates) {
      for (int m = 0; m < r.nodes().length; m++) {
        List<JobRun> l = onNode.get(r.nodes()[m]);
        if (l.isEmpty() || l.get(l.size() - 1) != r) {
          l.add(r);
        }
      }
    }
    ClusterState sim = state.copy();
    ClusterState.View simView = sim.new View();
    Set<JobRun> chosen = Collections.newSetFromMap(new IdentityHashMap<>());
    List<JobRun> victims = new ArrayList<>();
    int k = job.members().size();
    int[] where = new int[k];
    int[][] gpus = new int[k][];
    for (int m = 0; m < k; m++) {
      GpuPod pod = job.members().get(m);
      int[] best = bestNode(sim, pod, onNode, chosen);
      if (best == null) {
        return null;
      }
      int node = best[0];
      if (best[1] > 0) {
        int stopped = 0;
        for (JobRun r : onNode.get(node)) {
          if (stopped == best[1]) {
            break;
          }
          if (chosen.add(r)) {
            victims.add(r);
            stopped++;
            List<GpuPod> vm = r.pods();
            for (int x = 0; x < vm.size(); x++) {
              sim.release(r.nodes()[x], vm.get(x), r.gpus()[x]);
            }
          }
        }
      }
      simView.n = node;
      int share = pod.gpus() == 1 && pod.gpuMilli() < 1000
          ? placement.shareGpu(simView, pod, rng) : -1;
      where[m] = node;
      gpus[m] = sim.place(node, pod, share);
    }
    return new PreemptionPlan(victims, where, gpus);
  }

  /**
   * {node, candidates to stop} of the healthy node where {@code pod} fits after stopping the
   * fewest of its not yet chosen candidates (then the fewest GPU thousandths, then the lowest
   * index); null when none.
   */
  private static int[] bestNode(ClusterState sim, GpuPod pod, List<List<JobRun>> onNode,
      Set<JobRun> chosen) {
    int best = -1;
    int bestCount = Integer.MAX_VALUE;
    long bestMilli = Long.MAX_VALUE;
    for (int n = 0; n < sim.nodes.length && bestCount > 0; n++) {
      if (sim.down[n]) {
        continue;
      }
      if (sim.fits(n, pod)) {
        return new int[] {n, 0};
      }
      // Stop this node's candidates in order until the member fits, on a scratch node.
      long cpu = sim.cpuLeft[n];
      long mem = sim.memLeft[n];
      int[] left = sim.gpuLeft[n].clone();
      int count = 0;
      long milli = 0;
      boolean fits = false;
      for (JobRun r : onNode.get(n)) {
        if (chosen.contains(r)) {
          continue;
        }
        List<GpuPod> vm = r.pods();
        for (int x = 0; x < vm.size(); x++) {
          if (r.nodes()[x] == n) {
            sim.release(n, vm.get(x), r.gpus()[x]);
            milli += vm.get(x).totalGpuMilli();
          }
        }
        count++;
        if (sim.fits(n, pod)) {
          fits = true;
          break;
        }
      }
      sim.allocatedMilli += milli;
      sim.restore(n, cpu, mem, left);
      if (fits && (count < bestCount || (count == bestCount && milli < bestMilli))) {
        best = n;
        bestCount = count;
        bestMilli = milli;
      }
    }
    return best < 0 ? null : new int[] {best, bestCount};
  }
}
