package io.hyperframes.schedule;

import static com.google.common.base.Preconditions.checkArgument;

import java.util.ArrayList;
import java.util.List;

/**
 * An LLM inference service that shares a cluster with training: replicas of one {@link
 * ReplicaModel}, each a gang of whole GPUs it reserves for as long as it is up, scaled between
 * {@code minReplicas} and {@code maxReplicas} by the load of each window, with a latency target
 * its requests are scored against.
 *
 * <p><b>Autoscaling.</b> The work of a request is the replica-time it costs at the batch its
 * length allows: its prefill, and its output tokens at a decode step's per-sequence share
 * ({@code decodeFixed / B + decodePerSequence + decodePerContextToken · (prompt + output / 2)},
 * B = the batch limit or the sequences of its length that fit in the KV cache, whichever is
 * smaller). A window needs ⌈work of its arrivals / (window × {@code targetLoad})⌉ replicas, and
 * keeps those of the window before for one more (scale-down waits a window). The forecast is the
 * window's own load: a best case, the autoscaler of Kubernetes' HPA on request rate with a
 * perfect forecast. With {@code minReplicas == maxReplicas} the service is a fixed reservation.
 *
 * @param name service name (its replicas are jobs named {@code NAME-rI-S})
 * @param replica one replica
 * @param minReplicas fewest replicas, ≥ 0
 * @param maxReplicas most replicas, ≥ max(1, minReplicas)
 * @param windowSeconds autoscaling window, &gt; 0
 * @param targetLoad share of a replica's capacity the autoscaler plans for, in (0, 1]
 * @param ttftSloSeconds time-to-first-token target of each request, &gt; 0
 * @param tpotSloSeconds time-per-output-token target of each request, &gt; 0
 * @param tenant tenant of its replicas (quotas and fairness)
 * @param priority priority tier of its replicas (above training's 0 lets the priority policy
 *     preempt training for them)
 * @param drainSeconds how long a replica scaled down keeps running, taking no new requests, so
 *     that those it runs can finish (Kubernetes' termination grace period, 30 s by default:
 *     kubernetes.io/docs/concepts/workloads/pods/pod-lifecycle, "Termination of Pods"), ≥ 0
 */
public record InferenceService(String name, ReplicaModel replica, int minReplicas,
    int maxReplicas, double windowSeconds, double targetLoad, double ttftSloSeconds,
    double tpotSloSeconds, String tenant, int priority, double drainSeconds) {

  /** A service whose scaled-down replicas drain for Kubernetes' default 30 s. */
  public InferenceService(String name, ReplicaModel replica, int minReplicas, int maxReplicas,
      double windowSeconds, double targetLoad, double ttftSloSeconds, double tpotSloSeconds,
      String tenant, int priority) {
    this(name, replica, minReplicas, maxReplicas, windowSeconds, targetLoad, ttftSloSeconds,
        tpotSloSeconds, tenant, priority, 30);
  }

  public InferenceService {
    checkArgument(name != null && !name.isBlank(), "service.name: must be given");
    checkArgument(replica != null, "service %s.replica: must be given", name);
    checkArgument(minReplicas >= 0, "service %s.minReplicas: must be >= 0, got %s", name,
        minReplicas);
    checkArgument(maxReplicas >= Math.max(1, minReplicas), "service %s.maxReplicas: must be >="
        + " max(1, minReplicas = %s), got %s", name, minReplicas, maxReplicas);
    checkArgument(Double.isFinite(windowSeconds) && windowSeconds > 0,
        "service %s.windowSeconds: must be finite and > 0, got %s", name, windowSeconds);
    checkArgument(targetLoad > 0 && targetLoad <= 1, "service %s.targetLoad: must be in (0, 1],"
        + " got %s", name, targetLoad);
    checkArgument(Double.isFinite(ttftSloSeconds) && ttftSloSeconds > 0,
        "service %s.ttftSloSeconds: must be finite and > 0, got %s", name, ttftSloSeconds);
    checkArgument(Double.isFinite(tpotSloSeconds) && tpotSloSeconds > 0,
        "service %s.tpotSloSeconds: must be finite and > 0, got %s", name, tpotSloSeconds);
    tenant = tenant == null ? "" : tenant;
    checkArgument(Double.isFinite(drainSeconds) && drainSeconds >= 0,
        "service %s.drainSeconds: must be finite and >= 0, got %s", name, drainSeconds);
  }

  /** Replica-seconds one request costs at the batch its length allows (see the class comment). */
  double workSeconds(LlmRequest q) {
    ReplicaModel m = replica;
    long length = (long) q.promptTokens() + q.outputTokens();
    double batch = Math.max(1, Math.min(m.maxBatch(), m.kvTokens() / (double) length));
    double prefill = m.prefillSeconds(q.promptTokens(), (double) q.promptTokens()
        * q.promptTokens());
    double step = m.decodeFixed() / batch + m.decodePerSequence()
        + m.decodePerContextToken() * (q.promptTokens() + q.outputTokens() / 2.0);
    return prefill + (q.outputTokens() - 1) * step;
  }

  /**
   * Replicas up in each window of the trace, from window 0 at time 0 to the one after the last
   * arrival (which drains it).
   */
  public int[] replicasPerWindow(List<LlmRequest> requests) {
    checkArgument(requests != null && !requests.isEmpty(), "service %s: at least one request",
        name);
    double last = 0;
    for (LlmRequest q : requests) {
      last = Math.max(last, q.arrivalSeconds());
    }
    int windows = (int) Math.floor(last / windowSeconds) + 2;
    checkArgument(windows <= 10_000_000, "service %s.windowSeconds: %s s makes %s windows over"
        + " the trace", name, windowSeconds, windows);
    double[] work = new double[windows];
    for (LlmRequest q : requests) {
      work[(int) Math.floor(q.arrivalSeconds() / windowSeconds)] += workSeconds(q);
    }
    int[] needed = new int[windows];
    for (int w = 0; w < windows; w++) {
      double n = Math.ceil(work[w] / (windowSeconds * targetLoad) - 1e-9);
      needed[w] = (int) Math.max(minReplicas, Math.min(maxReplicas, n));
    }
    int[] up = new int[windows];
    for (int w = 0; w < windows; w++) {
      up[w] = Math.max(needed[w], w > 0 ? needed[w - 1] : 0);
    }
    // The drain window keeps the last window's replicas.
    up[windows - 1] = Math.max(up[windows - 1], up[windows - 2]);
    return up;
  }

  /**
   * The replicas as gangs of whole GPUs ({@link GpuJob#wholeGpus}) of this service's tenant and
   * tier: replica I is one job per stretch of consecutive windows in which at least I + 1 are
   * up, submitted at the stretch's start and running for its length plus the drain time.
   */
  public List<GpuJob> replicaJobs(List<LlmRequest> requests, int gpusPerNode) {
    checkArgument(gpusPerNode >= 1, "gpusPerNode: must be >= 1, got %s", gpusPerNode);
    int[] up = replicasPerWindow(requests);
    List<GpuJob> out = new ArrayList<>();
    int most = 0;
    for (int u : up) {
      most = Math.max(most, u);
    }
    for (int i = 0; i < most; i++) {
      int segment = 0;
      for (int w = 0; w < up.length; ) {
        if (up[w] <= i) {
          w++;
          continue;
        }
        int end = w;
        while (end < up.length && up[end] > i) {
          end++;
        }
        String job = name + "-r" + i + "-" + segment++;
        double length = (end - w) * windowSeconds + drainSeconds;
        if (replica.gpuMilli() < 1000) {
          out.add(new GpuJob(job, w * windowSeconds, length,
              List.of(new GpuPod(job + "-0", 0, 0, 1, replica.gpuMilli(), java.util.Set.of(),
                  w * windowSeconds, length)), tenant, priority));
        } else {
          out.add(GpuJob.wholeGpus(job, w * windowSeconds, length, replica.gpus(), gpusPerNode,
              tenant, priority));
        }
        w = end;
      }
    }
    out.sort(QueuePolicy.ARRIVAL);
    return out;
  }
}
