package io.hyperframes.schedule;

import java.util.Comparator;
import java.util.PriorityQueue;
import java.util.SplittableRandom;

/**
 * The failures of a time replay ({@link Replay.Disruptions}): when each node fails and is
 * repaired, whether a job's run fails and where in it, and the GPUs that are down. Its draws come
 * from a stream of their own, so that failures do not shift the placement's draws; for a seed the
 * same events come in the same order.
 */
final class Failures {
  private final Replay.Disruptions disruptions;
  private final SplittableRandom rng;
  /** Node events: time, node, +1 failure / -1 repair. */
  private final PriorityQueue<double[]> nodeEvents = new PriorityQueue<>(
      Comparator.comparingDouble((double[] e) -> e[0]).thenComparingDouble(e -> e[1]));
  private long downMilli;
  private int downNodes;

  /** The first failure of each of {@code nodes} nodes, drawn in node order. */
  Failures(Replay.Disruptions disruptions, long seed, int nodes) {
    this.disruptions = disruptions;
    this.rng = new SplittableRandom(seed ^ 0x9E3779B97F4A7C15L);
    if (Double.isFinite(disruptions.nodeMtbfSeconds())) {
      for (int i = 0; i < nodes; i++) {
        nodeEvents.add(new double[] {exponential(disruptions.nodeMtbfSeconds()), i, 1});
      }
    }
  }

  private double exponential(double mean) {
    return -mean * Math.log(1 - rng.nextDouble());
  }

  /** When the next node fails or is repaired; +∞ when never. */
  double nextNodeEvent() {
    return nodeEvents.isEmpty() ? Double.POSITIVE_INFINITY : nodeEvents.peek()[0];
  }

  /**
   * The next node event due by {@code now}, removed, with its follower scheduled: {+node} for a
   * failure, {-node - 1} for a repair; {@code Integer.MIN_VALUE} when none is due.
   */
  int pollDue(double now, ClusterState state) {
    if (nodeEvents.isEmpty() || nodeEvents.peek()[0] > now) {
      return Integer.MIN_VALUE;
    }
    double[] e = nodeEvents.poll();
    int node = (int) e[1];
    long milli = 1000L * state.nodes[node].gpus();
    if (e[2] > 0) {
      downMilli += milli;
      downNodes++;
      nodeEvents.add(new double[] {now + disruptions.repairSeconds(), node, -1});
      return node;
    }
    downMilli -= milli;
    downNodes--;
    nodeEvents.add(new double[] {now + exponential(disruptions.nodeMtbfSeconds()), node, 1});
    return -node - 1;
  }

  /** Whether some node is down now. */
  boolean anyDown() {
    return downNodes > 0;
  }

  /** GPU thousandths on nodes that are down. */
  long downMilli() {
    return downMilli;
  }

  /**
   * When a run starting at {@code now}, with {@code remaining} seconds of work at {@code speed},
   * ends if it fails for reasons of its own (a uniform point of it); NaN when it does not fail.
   */
  double jobFailure(double now, double remaining, double speed) {
    if (disruptions.jobFailureProbability() > 0
        && rng.nextDouble() < disruptions.jobFailureProbability()) {
      return now + rng.nextDouble() * remaining / speed;
    }
    return Double.NaN;
  }
}
