package io.hyperframes.schedule;

import static com.google.common.base.Preconditions.checkArgument;

import io.hyperframes.stat.Quantile;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.PriorityQueue;

/**
 * Inference replicas on a shared cluster, and how well they serve their requests.
 *
 * <p>{@link #colocate} replays training jobs and the replicas of {@link InferenceService}s
 * together ({@link Replay}: the replicas are gangs that reserve whole GPUs, queued, placed and
 * preempted by the same policy), then replays each service's requests on the stretches its
 * replicas actually ran ({@link #simulate}). A replica that starts late because training holds
 * the GPUs, or is stopped by a failure, shows up as requests that miss their latency target.
 *
 * <p>{@link #simulate}: every replica is a continuous-batching server (iteration-level
 * scheduling, Yu et al., "Orca", OSDI 2022, §3; prefill before decode, as vLLM's default
 * scheduler, Kwon et al., SOSP 2023, §4.5). A request goes, on arrival, to the replica up with
 * the fewest requests queued or running (join the shortest queue; ties to the earliest), or
 * waits for one when none is up. Between iterations a replica admits its queue in order while
 * the batch limit, the KV capacity (a request reserves its prompt and its output on admission)
 * and the prefill budget allow, and prefills them in one iteration; otherwise it decodes one
 * token of every running sequence. A replica scaled down drains: from its stretch's end it takes
 * no new requests (those it has queued go elsewhere) and finishes what it runs for the
 * service's drain time. When a replica goes down its queued and running requests start again
 * elsewhere from their prompt; their first token stays the first one they got. A request
 * longer than the KV capacity is rejected.
 */
public final class ServingReplay {
  private ServingReplay() {}

  /** A service and the requests it receives. */
  public record Load(InferenceService service, List<LlmRequest> requests) {
    public Load {
      checkArgument(service != null, "load.service: must be given");
      checkArgument(requests != null && !requests.isEmpty(), "load %s.requests: at least one",
          service.name());
      requests = List.copyOf(requests);
    }

    /**
     * This load with every request {@code seconds} later (to lay a one-hour inference trace
     * over a busy stretch of a training trace).
     */
    public Load startingAt(double seconds) {
      checkArgument(Double.isFinite(seconds) && seconds >= 0, "load %s.startSeconds: must be"
          + " finite and >= 0, got %s", service.name(), seconds);
      return new Load(service, requests.stream().map(q -> new LlmRequest(q.arrivalSeconds()
          + seconds, q.promptTokens(), q.outputTokens())).toList());
    }
  }

  /**
   * A stretch during which one replica is up.
   *
   * @param beginSeconds when it came up
   * @param endSeconds when it went down, ≥ begin
   * @param acceptUntilSeconds when it stopped taking new requests (a replica scaled down
   *     drains: it finishes what it runs until {@code endSeconds}), in [begin, end]
   */
  public record Availability(double beginSeconds, double endSeconds,
      double acceptUntilSeconds) {
    public Availability {
      checkArgument(Double.isFinite(beginSeconds) && beginSeconds >= 0
          && endSeconds >= beginSeconds, "availability: need 0 <= begin <= end, got [%s, %s]",
          beginSeconds, endSeconds);
      checkArgument(acceptUntilSeconds >= beginSeconds && acceptUntilSeconds <= endSeconds,
          "availability: acceptUntil must be in [%s, %s], got %s", beginSeconds, endSeconds,
          acceptUntilSeconds);
    }

    /** A stretch that takes requests until it goes down (no drain). */
    public Availability(double beginSeconds, double endSeconds) {
      this(beginSeconds, endSeconds, endSeconds);
    }
  }

  /**
   * How a service did.
   *
   * @param service its name
   * @param requests requests received
   * @param finished requests that got their last token
   * @param rejected requests longer than a replica's KV capacity
   * @param unfinished requests not finished when the last replica went down
   * @param restarted requests started again because their replica went down
   * @param sloAttainment share of all requests that finished within both targets (time to first
   *     token and time per output token)
   * @param ttftP50Seconds median time to first token of the finished requests
   * @param ttftP99Seconds 99th percentile of it
   * @param tpotP50Seconds median time per output token (after the first) of the finished
   *     requests of more than one token
   * @param tpotP99Seconds 99th percentile of it
   * @param replicaGpuHours GPU-hours the replicas held (stretches of unbounded length left out)
   * @param meanReplicas replicas up, averaged from the first arrival to the last
   */
  public record Result(String service, int requests, int finished, int rejected, int unfinished,
      int restarted, double sloAttainment, double ttftP50Seconds, double ttftP99Seconds,
      double tpotP50Seconds, double tpotP99Seconds, double replicaGpuHours,
      double meanReplicas) {}

  /**
   * Training and services replayed together.
   *
   * @param cluster the replay of every job, replicas included
   * @param training the training jobs alone (JCTs, fairness), with the cluster's makespan and
   *     utilisation
   * @param services each service's result, in the order given
   */
  public record Colocated(Replay.Result cluster, Replay.Result training,
      List<Result> services) {
    public Colocated {
      services = List.copyOf(services);
    }
  }

  /**
   * Replays {@code training} and the replicas of {@code services} on {@code nodes} under
   * {@code policy} (replicas: {@link InferenceService#replicaJobs}, whole GPUs split by the
   * nodes' largest GPU count), then each service's requests on its replicas' runs.
   *
   * @throws IllegalArgumentException on missing arguments, or as {@link Replay#run}
   */
  public static Colocated colocate(List<GpuNode> nodes, List<GpuJob> training, List<Load> services,
      Placement placement, QueuePolicy policy, Replay.Disruptions disruptions, long seed,
      ReplayMonitor monitor) {
    checkArgument(nodes != null && !nodes.isEmpty(), "nodes: at least one node");
    checkArgument(training != null, "training: must be given (may be empty)");
    checkArgument(services != null && !services.isEmpty(), "services: at least one");
    int perNode = nodes.stream().mapToInt(GpuNode::gpus).max().orElse(1);
    Map<GpuJob, Integer> serviceOf = new IdentityHashMap<>();
    List<GpuJob> all = new ArrayList<>(training);
    for (int s = 0; s < services.size(); s++) {
      for (GpuJob j : services.get(s).service().replicaJobs(services.get(s).requests(),
          Math.max(1, perNode))) {
        serviceOf.put(j, s);
        all.add(j);
      }
    }
    Replay.Result r = Replay.run(nodes, all, placement, policy, disruptions, seed, monitor);
    List<List<Availability>> ups = new ArrayList<>();
    for (int s = 0; s < services.size(); s++) {
      ups.add(new ArrayList<>());
    }
    for (Replay.Result.Run run : r.runs()) {
      Replay.JobRecord rec = r.jobs().get(run.job());
      Integer s = serviceOf.get(rec.job());
      if (s != null) {
        // A run that ended with its job drains; one stopped by a failure or a preemption
        // took requests to the end.
        double drain = services.get(s).service().drainSeconds();
        double accept = run.endSeconds() == rec.finishSeconds()
            ? Math.max(run.beginSeconds(), run.endSeconds() - drain) : run.endSeconds();
        ups.get(s).add(new Availability(run.beginSeconds(), run.endSeconds(), accept));
      }
    }
    List<Result> out = new ArrayList<>();
    for (int s = 0; s < services.size(); s++) {
      out.add(simulate(services.get(s).service(), services.get(s).requests(), ups.get(s)));
    }
    int[] index = new int[r.jobs().size()];
    List<Replay.JobRecord> kept = new ArrayList<>();
    int unschedulableReplicas = 0;
    for (int i = 0; i < r.jobs().size(); i++) {
      Replay.JobRecord j = r.jobs().get(i);
      if (serviceOf.containsKey(j.job())) {
        index[i] = -1;
        if (Double.isNaN(j.finishSeconds())) {
          unschedulableReplicas++;
        }
      } else {
        index[i] = kept.size();
        kept.add(j);
      }
    }
    List<Replay.Result.Run> runs = new ArrayList<>();
    for (Replay.Result.Run run : r.runs()) {
      if (index[run.job()] >= 0) {
        runs.add(new Replay.Result.Run(index[run.job()], run.beginSeconds(), run.endSeconds(),
            run.gpuMilli()));
      }
    }
    // Every job that did not finish was found unschedulable.
    Replay.Result t = new Replay.Result(kept, r.unschedulable() - unschedulableReplicas,
        r.makespanSeconds(), r.utilisation(), runs, r.fragmentation());
    return new Colocated(r, t, out);
  }

  /**
   * Replays {@code requests} to {@code service} on replicas up during {@code replicas} (one
   * entry per stretch of one replica; see the class comment).
   */
  public static Result simulate(InferenceService service, List<LlmRequest> requests,
      List<Availability> replicas) {
    checkArgument(service != null, "service: must be given");
    checkArgument(requests != null && !requests.isEmpty(), "requests: at least one");
    checkArgument(replicas != null, "replicas: must be given (may be empty)");
    return new Server(service, requests, replicas).run();
  }

  /** One iteration ending: replica, its generation when it started. */
  private record Tick(double time, int replica, long generation) {}

  /** The replay of one service's requests. */
  private static final class Server {
    final InferenceService service;
    final ReplicaModel m;
    final LlmRequest[] q;
    final double[] first;
    final double[] done;
    final int[] generated;
    final Replica[] replicas;
    final PriorityQueue<Integer> central;
    final PriorityQueue<Tick> ticks = new PriorityQueue<>(Comparator.comparingDouble(Tick::time)
        .thenComparingInt(Tick::replica));
    final PriorityQueue<Integer> downs;
    final PriorityQueue<Integer> closings;
    int restarted;
    int rejected;

    Server(InferenceService service, List<LlmRequest> requests, List<Availability> ups) {
      this.service = service;
      this.m = service.replica();
      q = requests.toArray(new LlmRequest[0]);
      Arrays.sort(q, Comparator.comparingDouble(LlmRequest::arrivalSeconds));
      first = new double[q.length];
      done = new double[q.length];
      generated = new int[q.length];
      Arrays.fill(first, Double.NaN);
      Arrays.fill(done, Double.NaN);
      List<Availability> sorted = new ArrayList<>(ups);
      sorted.sort(Comparator.comparingDouble(Availability::beginSeconds)
          .thenComparingDouble(Availability::endSeconds));
      replicas = new Replica[sorted.size()];
      for (int i = 0; i < replicas.length; i++) {
        replicas[i] = new Replica(sorted.get(i), m.maxBatch());
      }
      central = new PriorityQueue<>();
      closings = new PriorityQueue<>(Comparator.comparingDouble((Integer r) ->
          replicas[r].span.acceptUntilSeconds()).thenComparingInt(r -> r));
      downs = new PriorityQueue<>(Comparator.comparingDouble((Integer r) ->
          replicas[r].span.endSeconds()).thenComparingInt(r -> r));
    }

    Result run() {
      int nextArrival = 0;
      int nextUp = 0;
      while (true) {
        double tA = nextArrival < q.length ? q[nextArrival].arrivalSeconds()
            : Double.POSITIVE_INFINITY;
        double tU = nextUp < replicas.length ? replicas[nextUp].span.beginSeconds()
            : Double.POSITIVE_INFINITY;
        double tT = ticks.isEmpty() ? Double.POSITIVE_INFINITY : ticks.peek().time();
        double tD = downs.isEmpty() ? Double.POSITIVE_INFINITY
            : replicas[downs.peek()].span.endSeconds();
        double tC = closings.isEmpty() ? Double.POSITIVE_INFINITY
            : replicas[closings.peek()].span.acceptUntilSeconds();
        double t = Math.min(Math.min(Math.min(tA, tU), Math.min(tT, tD)), tC);
        if (t == Double.POSITIVE_INFINITY) {
          break;
        }
        if (tT == t) {
          Tick k = ticks.poll();
          Replica r = replicas[k.replica()];
          if (r.generation == k.generation() && r.up) {
            finishIteration(r, t);
            startIteration(k.replica(), t);
          }
        } else if (tD == t) {
          int i = downs.poll();
          takeDown(i);
          dispatchCentral(t);
        } else if (tC == t) {
          // Draining: what it runs finishes here, what it has not admitted goes elsewhere.
          Replica r = replicas[closings.poll()];
          r.accepting = false;
          central.addAll(r.queue);
          r.queue.clear();
          dispatchCentral(t);
        } else if (tU == t) {
          int i = nextUp++;
          Replica r = replicas[i];
          if (r.span.endSeconds() > r.span.beginSeconds()) {
            r.up = true;
            r.accepting = r.span.acceptUntilSeconds() > t;
            downs.add(i);
            if (r.accepting && r.span.acceptUntilSeconds() < r.span.endSeconds()) {
              closings.add(i);
            }
            dispatchCentral(t);
          }
        } else {
          int i = nextArrival++;
          long length = (long) q[i].promptTokens() + q[i].outputTokens();
          if (length > m.kvTokens()) {
            rejected++;
          } else {
            central.add(i);
            dispatchCentral(t);
          }
        }
      }
      return summary();
    }

    /** Sends every request waiting for a replica to the up replica with the least work. */
    private void dispatchCentral(double now) {
      while (!central.isEmpty()) {
        int best = -1;
        int load = Integer.MAX_VALUE;
        for (int i = 0; i < replicas.length; i++) {
          Replica r = replicas[i];
          if (r.up && r.accepting && r.load() < load) {
            best = i;
            load = r.load();
          }
        }
        if (best < 0) {
          return;
        }
        replicas[best].queue.add(central.poll());
        if (!replicas[best].busy) {
          startIteration(best, now);
        }
      }
    }

    private void takeDown(int i) {
      Replica r = replicas[i];
      r.up = false;
      r.accepting = false;
      r.busy = false;
      r.generation++;
      for (int k = 0; k < r.running; k++) {
        requeue(r.batch[k]);
      }
      for (int k = 0; k < r.admitted; k++) {
        requeue(r.prefilling[k]);
      }
      for (int id : r.queue) {
        central.add(id);
      }
      r.queue.clear();
      r.running = 0;
      r.admitted = 0;
      r.kvUsed = 0;
      r.context = 0;
    }

    private void requeue(int id) {
      generated[id] = 0;
      restarted++;
      central.add(id);
    }

    private void startIteration(int i, double now) {
      Replica r = replicas[i];
      r.admitted = 0;
      long tokens = 0;
      double squares = 0;
      while (!r.queue.isEmpty() && r.running + r.admitted < m.maxBatch()) {
        LlmRequest x = q[r.queue.peekFirst()];
        long length = (long) x.promptTokens() + x.outputTokens();
        if (r.kvUsed + length > m.kvTokens()
            || (r.admitted > 0 && tokens + x.promptTokens() > m.prefillTokenBudget())) {
          break;
        }
        int id = r.queue.pollFirst();
        r.prefilling[r.admitted++] = id;
        r.kvUsed += length;
        tokens += x.promptTokens();
        squares += (double) x.promptTokens() * x.promptTokens();
      }
      double d;
      if (r.admitted > 0) {
        d = m.prefillSeconds(tokens, squares);
      } else if (r.running > 0) {
        d = m.decodeSeconds(r.running, r.context);
      } else {
        r.busy = false;
        return;
      }
      r.busy = true;
      ticks.add(new Tick(now + d, i, r.generation));
    }

    private void finishIteration(Replica r, double now) {
      if (r.admitted > 0) {
        for (int k = 0; k < r.admitted; k++) {
          int id = r.prefilling[k];
          if (Double.isNaN(first[id])) {
            first[id] = now;
          }
          generated[id] = 1;
          if (q[id].outputTokens() == 1) {
            complete(r, id, now);
          } else {
            r.batch[r.running++] = id;
            r.context += q[id].promptTokens() + 1;
          }
        }
        r.admitted = 0;
        return;
      }
      int kept = 0;
      for (int k = 0; k < r.running; k++) {
        int id = r.batch[k];
        generated[id]++;
        r.context++;
        if (generated[id] >= q[id].outputTokens()) {
          r.context -= q[id].promptTokens() + generated[id];
          complete(r, id, now);
        } else {
          r.batch[kept++] = id;
        }
      }
      r.running = kept;
    }

    private void complete(Replica r, int id, double now) {
      done[id] = now;
      r.kvUsed -= (long) q[id].promptTokens() + q[id].outputTokens();
    }

    private Result summary() {
      int finished = 0;
      int met = 0;
      double[] ttft = new double[q.length];
      double[] tpot = new double[q.length];
      int nt = 0;
      int np = 0;
      for (int i = 0; i < q.length; i++) {
        if (Double.isNaN(done[i])) {
          continue;
        }
        finished++;
        double a = first[i] - q[i].arrivalSeconds() + m.requestSeconds();
        ttft[nt++] = a;
        boolean ok = a <= service.ttftSloSeconds();
        if (q[i].outputTokens() > 1) {
          double b = (done[i] - first[i]) / (q[i].outputTokens() - 1);
          tpot[np++] = b;
          ok &= b <= service.tpotSloSeconds();
        }
        if (ok) {
          met++;
        }
      }
      ttft = Arrays.copyOf(ttft, nt);
      tpot = Arrays.copyOf(tpot, np);
      Arrays.sort(ttft);
      Arrays.sort(tpot);
      double gpuSeconds = 0;
      double from = q[0].arrivalSeconds();
      double to = q[q.length - 1].arrivalSeconds();
      double upSeconds = 0;
      for (Replica r : replicas) {
        double length = r.span.endSeconds() - r.span.beginSeconds();
        gpuSeconds += Double.isFinite(length) ? length * m.gpus() * m.gpuMilli() / 1000.0 : 0;
        upSeconds += Math.max(0, Math.min(to, r.span.endSeconds())
            - Math.max(from, r.span.beginSeconds()));
      }
      double horizon = to - from;
      return new Result(service.name(), q.length, finished, rejected,
          q.length - finished - rejected, restarted, (double) met / q.length,
          percentile(ttft, 0.5), percentile(ttft, 0.99), percentile(tpot, 0.5),
          percentile(tpot, 0.99), gpuSeconds / 3600, horizon > 0 ? upSeconds / horizon : 0);
    }

    /** Linear between order statistics, as the serving estimate it is checked against. */
    private static double percentile(double[] sorted, double p) {
      return sorted.length == 0 ? Double.NaN
          : Quantile.ofSorted(sorted, p, Quantile.Definition.LINEAR);
    }
  }

  /** One replica's stretch and its server state. */
  private static final class Replica {
    final Availability span;
    final ArrayDeque<Integer> queue = new ArrayDeque<>();
    final int[] batch;
    final int[] prefilling;
    int running;
    int admitted;
    long kvUsed;
    long context;
    boolean up;
    boolean accepting;
    boolean busy;
    long generation;

    Replica(Availability span, int maxBatch) {
      this.span = span;
      batch = new int[maxBatch];
      prefilling = new int[maxBatch];
    }

    int load() {
      return queue.size() + running + admitted;
    }
  }
}
