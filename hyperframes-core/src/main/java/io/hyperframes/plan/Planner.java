package io.hyperframes.plan;

import static com.google.common.base.Preconditions.checkArgument;

import com.google.common.collect.ImmutableList;
import io.hyperframes.plan.TrainingFindings;
import io.hyperframes.hardware.Cluster;
import io.hyperframes.model.DenseStackSpec;
import io.hyperframes.model.ModelSpec;
import io.hyperframes.model.TransformerSpec;
import io.hyperframes.parallel.MoeDispatcher;
import io.hyperframes.parallel.Engine;
import io.hyperframes.parallel.Layout;
import io.hyperframes.parallel.ModelStates;
import io.hyperframes.parallel.PartialLayout;
import io.hyperframes.parallel.Recompute;
import io.hyperframes.precision.PrecisionRecipe;
import io.hyperframes.plan.GoldenParameters;
import io.hyperframes.workload.TrainingWorkload;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CancellationException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Searches training layouts for the best plan under constraints.
 *
 * <p>Instances are immutable and thread-safe; a search runs on the common fork-join pool.
 */
public final class Planner {

  /*
   * Search space, per device count N: tp (divisors of N up to a node that divide the heads),
   * pp (divisors of N/tp up to the layers), dp = N/(tp·pp), ZeRO 0-3, micro-batch 1-32
   * (LayoutSpace.MICRO_BATCHES), the global batch, virtual stages (divisors of the stage's
   * layers up to 8 when the micro-batch count is a multiple of pp), sequence parallelism,
   * recomputation and the allowed precisions.
   *
   * Pruning, each exact (the jqwik property PlannerProperties checks pruned = exhaustive):
   * 1. Model states do not depend on micro-batch, batch, interleaving, SP or recomputation, and
   *    memory is never below them: a (tp, pp, dp, ZeRO, precision) whose model states exceed the
   *    usable memory is skipped whole.
   * 2. With an open global batch, for fixed everything else, activation memory depends on the
   *    micro-batch count m only through min(p, m) (in-flight micro-batches, 1F1B), and time per
   *    token falls as m grows (the bubble and the per-step communication are amortised). So for
   *    m ≥ p only the largest m, and the largest multiple of p (which admits interleaving), can be
   *    best; every m < p is still evaluated.
   * 3. A search task has one device count, and every objective ranks the feasible plans of one
   *    device count as their tokens per second do. So once a task's top list is full of feasible
   *    plans, a layout whose step-time lower bound (compute alone,
   *    TrainingEstimator#slowestRankComputeSeconds) already gives fewer tokens per second than
   *    the last of them ranks after all of them, and after its device count's best: it is not
   *    evaluated, nor are its DeepEP and overlap alternatives when their bound does the same.
   */

  /**
   * Expert tensor-parallel degrees tried per expert-parallel one
   * ({@link PlanDimensions#expertTensorParallel}).
   */
  private static final int MAX_EXPERT_TENSOR_PARALLEL_CHOICES = 2;

  private final TrainingEstimator estimator;

  private Planner(TrainingEstimator estimator) {
    this.estimator = estimator;
  }

  /** A planner over the analytical models. */
  public static Planner analytical() {
    return new Planner(TrainingEstimator.analytical());
  }

  /** A planner over the given estimator (calibrated models). */
  public static Planner of(TrainingEstimator estimator) {
    checkArgument(estimator != null, "estimator: must be given");
    return new Planner(estimator);
  }

  /** Plans without progress reporting. */
  public Plan plan(PlanRequest request) {
    return plan(request, PlanListener.NONE);
  }

  /**
   * Searches the layouts of {@code request} and returns the best plan, alternatives, the Pareto
   * front of time against cost, golden parameters and findings. An infeasible request gives a
   * plan with {@code feasible = false} and the reasons.
   *
   * @throws IllegalArgumentException when fixed fields contradict the model or the device range
   * @throws CancellationException when the listener cancels
   */
  public Plan plan(PlanRequest request, PlanListener listener) {
    checkArgument(request != null, "request: must be given");
    checkArgument(listener != null, "listener: must be given");
    long start = System.nanoTime();
    List<Task> tasks = tasks(request);
    checkArgument(!tasks.isEmpty(), "layout: no (tp, pp, dp) satisfies the fixed fields on %s-%s"
        + " devices", request.minDevices(), request.maxDevices());
    AtomicLong evaluated = new AtomicLong();
    AtomicInteger done = new AtomicInteger();
    Comparator<Candidate> order = order(request);
    Accumulator total = tasks.parallelStream()
        .map(t -> {
          if (listener.cancelled()) {
            throw new CancellationException("plan search cancelled");
          }
          Accumulator a = search(request, t, order, listener);
          evaluated.addAndGet(a.evaluated);
          listener.progress((double) done.incrementAndGet() / tasks.size(), evaluated.get());
          return a;
        })
        .reduce(new Accumulator(request.alternatives() + 1, order),
            (a, b) -> a.merge(b, order), (a, b) -> a.merge(b, order));
    double seconds = (System.nanoTime() - start) / 1e9;
    return result(request, total, order, seconds);
  }

  // ---------------------------------------------------------------------------------------------

  private record Task(int devices, int tp, int pp, Engine engine, int cp) {}

  private List<Task> tasks(PlanRequest r) {
    ModelSpec m = r.model();
    PartialLayout p = r.layout();
    if (m instanceof DenseStackSpec) {
      LayoutSpace.checkDenseLayout(p);
    }
    int perNode = r.cluster().devicesPerNode();
    List<Integer> counts = new ArrayList<>();
    for (long n = r.minDevices(); n <= r.maxDevices(); n++) {
      if (n <= perNode || n % perNode == 0) {
        counts.add((int) n);
        checkArgument(counts.size() <= PlanRequest.MAX_DEVICE_COUNTS,
            "cluster.devices: the range %s-%s holds more than %s device counts",
            r.minDevices(), r.maxDevices(), PlanRequest.MAX_DEVICE_COUNTS);
      }
    }
    checkArgument(!counts.isEmpty(), "cluster.devices: no count in %s-%s is a whole number of"
        + " nodes of %s", r.minDevices(), r.maxDevices(), perNode);
    if (p.tp() != null) {
      checkArgument(PlanDimensions.heads(m) % p.tp() == 0,
          "layout.tp: %s does not divide model.heads %s", p.tp(), PlanDimensions.heads(m));
    }
    if (p.pp() != null) {
      checkArgument(p.pp() <= PlanDimensions.layers(m),
          "layout.pp: %s is larger than model.layers %s", p.pp(), PlanDimensions.layers(m));
    }
    LayoutSpace.checkExpertTensorParallel(p, m);
    checkArgument(!Boolean.TRUE.equals(p.overlapMoeComm())
        || m instanceof TransformerSpec tm && tm.isMoe(),
        "layout.overlapMoeComm: needs a mixture of experts (model.moe)");
    if (p.moeDispatcher() == io.hyperframes.parallel.MoeDispatcher.DEEPEP) {
      checkArgument(m instanceof TransformerSpec t && t.isMoe(), "layout.moeDispatcher: %s"
          + " needs a mixture of experts (model.moe)", p.moeDispatcher().id());
      LayoutSpace.checkMoeDispatcher((TransformerSpec) m, p.moeDispatcher());
    }
    List<Task> out = new ArrayList<>();
    for (int n : counts) {
      for (int tp = 1; tp <= Math.min(n, perNode); tp++) {
        if (n % tp != 0 || PlanDimensions.heads(m) % tp != 0 || (p.tp() != null && p.tp() != tp)) {
          continue;
        }
        for (Engine e : r.engines()) {
          for (int cp : PlanDimensions.contextParallel(p, m, n / tp, e)) {
            if (!PlanDimensions.ulyssesSplitsHeads(p, m, tp, cp, perNode)) {
              continue;
            }
            int rest = n / tp / cp;
            for (int pp = 1; pp <= Math.min(rest, PlanDimensions.layers(m)); pp++) {
              if (rest % pp != 0 || (p.pp() != null && p.pp() != pp)) {
                continue;
              }
              int dp = rest / pp;
              if (p.dp() != null && p.dp() != dp) {
                continue;
              }
              out.add(new Task(n, tp, pp, e, cp));
            }
          }
        }
      }
    }
    return out;
  }

  /** Everything evaluated under one (N, tp, pp). */
  private Accumulator search(PlanRequest r, Task t, Comparator<Candidate> order,
      PlanListener listener) {
    Accumulator acc = new Accumulator(r.alternatives() + 1, order);
    Cluster cluster = r.clusterFor(t.engine()).withDevices(t.devices());
    ModelSpec m = r.model();
    PartialLayout p = r.layout();
    int dp = t.devices() / t.tp() / t.cp() / t.pp();
    double usable = cluster.accelerator().memoryBytes() * (1 - r.memoryHeadroom());
    int perStage = (PlanDimensions.layers(m) + t.pp() - 1) / t.pp();
    List<Integer> zeros = LayoutSpace.zeroStages(p, t.engine(), dp, t.pp(),
        r.workload().gradientCompression() != null);
    List<Boolean> sps = p.sequenceParallel() != null ? List.of(p.sequenceParallel())
        : t.tp() > 1 ? List.of(false, true) : List.of(false);
    List<Recompute> recomputes = p.recompute() != null ? List.of(p.recompute())
        : m instanceof DenseStackSpec ? List.of(Recompute.NONE)
            : List.of(Recompute.NONE, Recompute.SELECTIVE, Recompute.FULL);
    for (PrecisionRecipe precision : r.precisions()) {
      if (!cluster.accelerator().supports(precision.compute())) {
        continue;
      }
      for (int zero : zeros) {
        TrainingWorkload probe = workload(r, precision, Math.max(1, dp), t.engine());
        // Expert parallelism spans the data- and context-parallel ranks (ep divides dp·cp).
        List<Integer> eps = PlanDimensions.expertParallel(p, m, t.tp(), dp * t.cp(), t.engine());
        if (eps.isEmpty()) {
          continue;
        }
        // Model states shrink with ep: the largest ep is the group's smallest footprint.
        // (The expert-parallel overlap changes no state: it is left off here, where one virtual
        // stage could not run it.)
        Layout statesLayout = PlanDimensions.layout(p.withoutOverlapMoeComm(), t.engine(),
            t.tp(), t.pp(), dp, 1, 1, false, Recompute.NONE, zero, eps.get(eps.size() - 1),
            t.cp());
        if (statesLayout == null) {
          continue;
        }
        if (!r.exhaustive()
            && estimator.modelStates(m, statesLayout, probe).totalBytes() > usable) {
          // Nothing in this group fits; keep its smallest member so that an infeasible request
          // still shows the closest layout.
          smallest(r, t, cluster, precision, zero, dp, usable, acc, order);
          continue;
        }
        Group g = new Group(r, t, cluster, dp, zero, usable, sps, recomputes, eps, order,
            listener, acc, new ModelStates[MAX_EXPERT_TENSOR_PARALLEL_CHOICES * eps.size()],
            new Bounds(sps.size() * recomputes.size() * eps.size()
                * MAX_EXPERT_TENSOR_PARALLEL_CHOICES));
        for (int mb : PlanDimensions.microBatches(p, m)) {
          for (int batch : PlanDimensions.batches(r, dp, mb, t.pp())) {
            searchBatch(g, precision, mb, batch, perStage);
          }
        }
      }
    }
    return acc;
  }

  /**
   * What the loops under one (task, precision, ZeRO stage) share. The loops are split into
   * methods called many times each (rather than one long method), so that the JIT compiles
   * small methods once instead of recompiling one large loop nest on the stack.
   */
  private record Group(PlanRequest r, Task t, Cluster cluster, int dp, int zero, double usable,
      List<Boolean> sps, List<Recompute> recomputes, List<Integer> eps,
      Comparator<Candidate> order, PlanListener listener, Accumulator acc,
      ModelStates[] states, Bounds bounds) {

    /**
     * The model states of {@code l}, the {@code etpIndex}-th expert tensor-parallel degree of the
     * {@code epIndex}-th expert-parallel one, computed once per group: in a group they depend on
     * nothing else (rule 1; {@link io.hyperframes.parallel.ParallelismModel#modelStates}).
     */
    ModelStates statesOf(TrainingEstimator estimator, int epIndex, int etpIndex, Layout l,
        TrainingWorkload w) {
      int i = MAX_EXPERT_TENSOR_PARALLEL_CHOICES * epIndex + etpIndex;
      if (states[i] == null) {
        states[i] = estimator.modelStates(r.model(), l, w);
      }
      return states[i];
    }
  }

  /**
   * Rule 3's compute of one micro-batch on the slowest pipeline rank
   * ({@link TrainingEstimator#slowestRankComputeSeconds}), per layout of a group at its current
   * micro-batch size, on the layout's dispatcher and on DeepEP (infinite where the layout has no
   * DeepEP alternative): it depends on neither the global batch nor the virtual stages, which the
   * loops under a micro-batch size vary. NaN until computed; a group's loops run on one thread.
   */
  private static final class Bounds {
    private final double[] seconds;
    private int microBatch = -1;

    Bounds(int slots) {
      seconds = new double[2 * slots];
    }

    /** The bounds of micro-batch size {@code mb}: two a slot, the layout's and its DeepEP's. */
    double[] of(int mb) {
      if (mb != microBatch) {
        java.util.Arrays.fill(seconds, Double.NaN);
        microBatch = mb;
      }
      return seconds;
    }
  }

  /** Every layout of one group at micro-batch {@code mb} and global batch {@code batch}. */
  private void searchBatch(Group g, PrecisionRecipe precision, int mb, int batch, int perStage) {
    PlanRequest r = g.r();
    Task t = g.t();
    PartialLayout p = r.layout();
    ModelSpec m = r.model();
    Accumulator acc = g.acc();
    TrainingWorkload w = workload(r, precision, batch, t.engine());
    int micro = batch / (g.dp() * mb);
    for (int v : PlanDimensions.virtualStages(p, t.pp(), perStage, micro)) {
      for (int s = 0; s < g.sps().size(); s++) {
        boolean sp = g.sps().get(s);
        for (int k = 0; k < g.recomputes().size(); k++) {
          Recompute rc = g.recomputes().get(k);
          for (int i = 0; i < g.eps().size(); i++) {
            int ep = g.eps().get(i);
            List<Integer> etps = PlanDimensions.expertTensorParallel(p, m, t.tp(), ep, t.engine());
            for (int j = 0; j < etps.size(); j++) {
              Layout l = PlanDimensions.layout(p, t.engine(), t.tp(), t.pp(), g.dp(), v, mb,
                  sp, rc, g.zero(), ep, t.cp(), etps.get(j));
              if (l == null) {
                continue;
              }
              int slot = ((s * g.recomputes().size() + k) * g.eps().size() + i)
                  * MAX_EXPERT_TENSOR_PARALLEL_CHOICES + j;
              consider(g, w, l, g.statesOf(estimator, i, j, l, w), slot);
              if ((++acc.evaluated & 4095) == 0 && g.listener().cancelled()) {
                throw new CancellationException("plan search cancelled");
              }
            }
          }
        }
      }
    }
  }

  /** Evaluates and offers one layout, with its DeepEP and overlap alternatives. */
  private void consider(Group g, TrainingWorkload w, Layout l, ModelStates states, int slot) {
    PlanRequest r = g.r();
    ModelSpec m = r.model();
    Accumulator acc = g.acc();
    if (outranked(g, w, l, slot)) {
      acc.bounded++;
      return;
    }
    // Once this device count has a feasible best and the top list is full of feasible plans, a
    // layout that cannot fit ranks after all of them: its step time is not needed (the result
    // is the same).
    MemoryBreakdown memory = null;
    if (m instanceof TransformerSpec ts && acc.settled(l.devices())) {
      memory = estimator.memory(ts, g.cluster(), w, l, states);
      if (memory.totalBytes() > g.usable()) {
        acc.skipped++;
        return;
      }
    }
    PartialLayout p = r.layout();
    Comparator<Candidate> order = g.order();
    TrainingEstimate e = memory != null
        ? estimator.evaluate((TransformerSpec) m, g.cluster(), w, l, states, memory)
        : estimator.evaluate(m, g.cluster(), w, l, states);
    acc.offer(candidate(r, e, w, g.usable()), order);
    Layout deepEp = deepEpAlternative(p, m, g.cluster(), l, e);
    if (deepEp != null) {
      TrainingEstimate d = estimator.evaluate(m, g.cluster(), w, deepEp, states);
      acc.offer(candidate(r, d, w, g.usable()), order);
      acc.evaluated++;
      offerOverlapped(r, p, m, g.cluster(), w, deepEp, d, states, g.usable(), acc, order);
    }
    offerOverlapped(r, p, m, g.cluster(), w, l, e, states, g.usable(), acc, order);
  }

  /**
   * Rule 3: whether {@code l} and the alternatives {@link #consider} would offer beside it
   * ({@link #deepEpAlternative}, whose dispatcher changes the layer's compute, and the overlap of
   * either, which changes none) all rank after the last plan of this task's full, feasible top
   * list by their step-time lower bound. At one device count every objective ranks feasible
   * plans by tokens per second at each one's own batch: time by training days or seconds per
   * token, cost by dollars (device-hours at that count, or dollars per token), throughput by
   * tokens per second, devices by the deadline met and then cost, each falling as it rises. A
   * margin of 1e-9 keeps rounding from deciding.
   */
  private boolean outranked(Group g, TrainingWorkload w, Layout l, int slot) {
    PlanRequest r = g.r();
    Accumulator acc = g.acc();
    if (r.exhaustive() || !(r.model() instanceof TransformerSpec m)
        || !acc.settled(l.devices())) {
      return false;
    }
    // Tokens a step below the floor times the bound: fewer tokens per second than the floor.
    double floor = acc.top.get(acc.top.size() - 1).estimate().tokensPerSecond()
        * (1 - BOUND_MARGIN) * TrainingEstimator.lowerBoundMicroBatches(w, l);
    double tokensPerStep = (double) w.globalBatchSize() * m.seqLen();
    double[] bounds = g.bounds().of(l.microBatch());
    if (Double.isNaN(bounds[2 * slot])) {
      bounds[2 * slot] = estimator.slowestRankComputeSeconds(m, g.cluster(), w, l);
    }
    if (!(tokensPerStep < floor * bounds[2 * slot])) {
      return false;
    }
    if (Double.isNaN(bounds[2 * slot + 1])) {
      // Without a DeepEP alternative nothing else can rank: an infinite bound.
      Layout deepEp = deepEpLayout(r.layout(), m, g.cluster(), l);
      bounds[2 * slot + 1] = deepEp == null ? Double.POSITIVE_INFINITY
          : estimator.slowestRankComputeSeconds(m, g.cluster(), w, deepEp);
    }
    return tokensPerStep < floor * bounds[2 * slot + 1];
  }

  /** Relative margin of rule 3's comparison, far above rounding, far below any model effect. */
  private static final double BOUND_MARGIN = 1e-9;

  /** The least-memory member of a group: micro-batch 1, fewest micro-batches, SP, full recompute. */
  private void smallest(PlanRequest r, Task t, Cluster cluster, PrecisionRecipe precision,
      int zero, int dp, double usable, Accumulator acc, Comparator<Candidate> order) {
    PartialLayout p = r.layout();
    for (int mb : PlanDimensions.microBatches(p, r.model())) {
      List<Integer> batches = PlanDimensions.batches(r, dp, mb, t.pp());
      if (batches.isEmpty()) {
        continue;
      }
      int batch = batches.get(0);
      boolean sp = p.sequenceParallel() != null ? p.sequenceParallel() : t.tp() > 1;
      Recompute rc = p.recompute() != null ? p.recompute()
          : r.model() instanceof DenseStackSpec ? Recompute.NONE : Recompute.FULL;
      int v = p.virtualStages() != null ? p.virtualStages() : 1;
      int perStage = (PlanDimensions.layers(r.model()) + t.pp() - 1) / t.pp();
      if (v > 1 && (t.pp() == 1 || perStage % v != 0)) {
        continue;
      }
      TrainingWorkload w = workload(r, precision, batch, t.engine());
      List<Integer> eps = PlanDimensions.expertParallel(p, r.model(), t.tp(), dp * t.cp(),
          t.engine());
      if (eps.isEmpty()) {
        return;
      }
      Layout l = PlanDimensions.layout(p, t.engine(), t.tp(), t.pp(), dp, v, mb, sp, rc, zero,
          eps.get(eps.size() - 1), t.cp());
      if (l == null) {
        continue;
      }
      acc.offer(candidate(r, estimator.evaluate(r.model(), cluster, w, l), w, usable), order);
      acc.evaluated++;
      return;
    }
  }

  private static TrainingWorkload workload(PlanRequest r, PrecisionRecipe precision, int batch,
      Engine engine) {
    PrecisionRecipe recipe = precision;
    if (r.workload().precision().name().equals(precision.name())) {
      recipe = r.workload().precision();
    }
    return new TrainingWorkload(recipe, r.workload().optimizer(), batch,
        r.workload().trainingTokens(), r.workload().attentionOn(r.cluster().accelerator(),
            engine), r.workload().kernels(),
        r.workload().gradientCompression(), r.workload().moeLoadImbalance());
  }

  /**
   * Share of the step above which an expert-parallel exchange across nodes is worth trying on
   * DeepEP too (a search bound, not a model constant: below it the dispatcher cannot change the
   * step by more than this share).
   */
  static final double DEEPEP_TRY_SHARE = 0.05;

  /**
   * The same layout on DeepEP, where the request leaves the dispatcher open and the layout's
   * expert-parallel group crosses nodes with an exchange worth over {@link #DEEPEP_TRY_SHARE}
   * of the step: DeepEP sends a token across the network once per destination node, not once
   * per routed expert (docs/model-reference.md, "Token dispatch"), so that is where the two
   * dispatchers differ; inside a node they move the same bytes. Null otherwise, and for routing
   * with a capacity factor, which DeepEP does not pad to.
   */
  static Layout deepEpAlternative(PartialLayout p, ModelSpec m, Cluster cluster, Layout l,
      TrainingEstimate e) {
    return e.time().allToAllSeconds() > DEEPEP_TRY_SHARE * e.stepSeconds()
        ? deepEpLayout(p, m, cluster, l) : null;
  }

  /**
   * {@link #deepEpAlternative} before its estimate is known: the same layout on DeepEP where the
   * request leaves the dispatcher open and the expert-parallel group crosses nodes, null
   * otherwise.
   */
  private static Layout deepEpLayout(PartialLayout p, ModelSpec m, Cluster cluster, Layout l) {
    if (p.moeDispatcher() != null || !(m instanceof TransformerSpec t) || !t.isMoe()
        || !t.moe().routed() || t.moe().capacityFactor() > 0
        || l.moeDispatcher() != MoeDispatcher.ALL_TO_ALL
        || l.ep() * l.etp() <= cluster.devicesPerNode()) {
      return null;
    }
    return l.withMoeDispatcher(MoeDispatcher.DEEPEP);
  }

  /**
   * The same layout with Megatron-Core's EP A2A overlap ({@code layout.overlapMoeComm}), where
   * the request leaves it open, Megatron-Core can run it on the layout
   * ({@link Layout#whyNotOverlapMoeComm}) and the exchange is over {@link #DEEPEP_TRY_SHARE} of
   * the step: the overlap hides the exchange behind another micro-batch's computation
   * (docs/model-reference.md, "Overlapped expert-parallel exchange"), which only matters where
   * there is an exchange to hide. Null otherwise.
   */
  static Layout overlapAlternative(PartialLayout p, ModelSpec m, Layout l, TrainingEstimate e) {
    if (p.overlapMoeComm() != null || !(m instanceof TransformerSpec t) || !t.isMoe()
        || t.mtpLayers() > 1 || l.overlapMoeComm() || l.whyNotOverlapMoeComm() != null
        || !(e.time().allToAllSeconds() > DEEPEP_TRY_SHARE * e.stepSeconds())) {
      return null;
    }
    return l.withOverlapMoeComm(true);
  }

  /**
   * Evaluates and offers {@link #overlapAlternative} of {@code l}, when there is one, with
   * {@code l}'s model states (the overlap changes none).
   */
  private void offerOverlapped(PlanRequest r, PartialLayout p, ModelSpec m, Cluster cluster,
      TrainingWorkload w, Layout l, TrainingEstimate e, ModelStates states, double usable,
      Accumulator acc, Comparator<Candidate> order) {
    Layout overlapped = overlapAlternative(p, m, l, e);
    if (overlapped != null) {
      acc.offer(candidate(r, estimator.evaluate(m, cluster, w, overlapped, states), w, usable),
          order);
      acc.evaluated++;
    }
  }

  private static Candidate candidate(PlanRequest r, TrainingEstimate e, TrainingWorkload w,
      double usable) {
    TrainingEstimate checked = e;
    if (e.feasible() && e.memory().totalBytes() > usable) {
      List<String> reasons = new Reasons(e.reasons(), () -> String.format(Locale.ROOT,
          "memory: %.1f GiB leaves less than the requested %.0f %% headroom",
          e.memory().totalBytes() / (1L << 30), 100 * r.memoryHeadroom()));
      checked = new TrainingEstimate(false, reasons, e.layout(), e.parameters(),
          e.activeParameters(), e.memory(),
          e.time(), e.modelFlopsPerStep(), e.hardwareFlopsPerStep(), e.devices(),
          e.peakFlopsPerSecond(), e.tokensPerStep(), e.trainingTokens(), e.interval());
    }
    return new Candidate(checked, Cost.of(checked, r.pricing()), w);
  }

  /** Best first: feasible before infeasible, then the objective, then a total tie-break. */
  static Comparator<Candidate> order(PlanRequest r) {
    Comparator<Candidate> objective = switch (r.objective()) {
      case TIME -> Comparator.comparingDouble(Candidate::timeMetric);
      case COST -> Comparator.comparingDouble(Candidate::costMetric)
          .thenComparingDouble(Candidate::timeMetric);
      case THROUGHPUT -> Comparator.comparingDouble(
          (Candidate c) -> -c.estimate().tokensPerSecond());
      case DEVICES -> Comparator.comparing(
          (Candidate c) -> c.timeMetric() > r.deadlineDays())
          .thenComparingLong(c -> c.estimate().devices())
          .thenComparingDouble(Candidate::costMetric);
    };
    Comparator<Candidate> feasibleFirst = Comparator.comparing(
        (Candidate c) -> !c.estimate().feasible());
    Comparator<Candidate> infeasibleBySize = (a, b) -> a.estimate().feasible()
        ? 0 : Double.compare(a.estimate().memory().totalBytes(),
            b.estimate().memory().totalBytes());
    return feasibleFirst.thenComparing(infeasibleBySize).thenComparing(objective)
        .thenComparingLong(c -> c.estimate().devices())
        // At the same time on the same devices, no more context parallelism than needed.
        .thenComparingInt(c -> c.estimate().layout().cp())
        .thenComparingDouble(c -> c.estimate().memory().totalBytes())
        .thenComparing(LAYOUT_ORDER);
  }

  /** A total order on the remaining fields, so that the best plan never depends on threads. */
  private static final Comparator<Candidate> LAYOUT_ORDER = Comparator
      .comparingInt((Candidate c) -> c.estimate().layout().tp())
      .thenComparingInt(c -> c.estimate().layout().pp())
      .thenComparingInt(c -> c.estimate().layout().dp())
      .thenComparingInt(c -> c.estimate().layout().virtualStages())
      .thenComparingInt(c -> c.estimate().layout().microBatch())
      .thenComparing(c -> c.estimate().layout().sequenceParallel())
      .thenComparing(c -> c.estimate().layout().recompute().id())
      .thenComparingInt(c -> c.estimate().layout().zeroStage())
      .thenComparing(c -> c.workload().precision().name())
      .thenComparingInt(c -> c.workload().globalBatchSize())
      .thenComparingInt(c -> Engine.SEARCHED.indexOf(c.estimate().layout().engine()))
      .thenComparingInt(c -> c.estimate().layout().ep())
      .thenComparing(c -> c.estimate().layout().cpCommType().id());

  /** Top-k candidates and the best per device count, mergeable across threads. */
  private static final class Accumulator {
    final int capacity;
    final List<Candidate> top = new ArrayList<>();
    final Map<Long, Candidate> bestPerCount = new TreeMap<>();
    long evaluated;
    long skipped;
    /** Layouts rule 3 left unevaluated. */
    long bounded;

    Accumulator(int capacity, Comparator<Candidate> order) {
      this.capacity = Math.max(1, capacity);
    }

    /**
     * Whether an infeasible candidate for {@code devices} can change nothing: that count's best
     * is feasible and so is the last of a full top list (feasible plans rank first).
     */
    boolean settled(long devices) {
      Candidate best = bestPerCount.get(devices);
      return best != null && best.estimate().feasible() && top.size() >= capacity
          && top.get(top.size() - 1).estimate().feasible();
    }

    void offer(Candidate c, Comparator<Candidate> order) {
      bestPerCount.merge(c.estimate().devices(), c,
          (a, b) -> order.compare(a, b) <= 0 ? a : b);
      if (top.size() < capacity || order.compare(c, top.get(top.size() - 1)) < 0) {
        int i = 0;
        while (i < top.size() && order.compare(top.get(i), c) <= 0) {
          i++;
        }
        top.add(i, c);
        if (top.size() > capacity) {
          top.remove(top.size() - 1);
        }
      }
    }

    Accumulator merge(Accumulator other, Comparator<Candidate> order) {
      Accumulator out = new Accumulator(capacity, order);
      for (Candidate c : top) {
        out.offer(c, order);
      }
      for (Candidate c : other.top) {
        out.offer(c, order);
      }
      out.bestPerCount.putAll(bestPerCount);
      other.bestPerCount.forEach((k, v) -> out.bestPerCount.merge(k, v,
          (a, b) -> order.compare(a, b) <= 0 ? a : b));
      out.evaluated = evaluated + other.evaluated;
      out.skipped = skipped + other.skipped;
      out.bounded = bounded + other.bounded;
      return out;
    }
  }

  private Plan result(PlanRequest r, Accumulator acc, Comparator<Candidate> order,
      double seconds) {
    checkArgument(!acc.top.isEmpty(), "workload.globalBatchSize: no layout divides the global"
        + " batch on %s-%s devices (fix the batch or the layout)", r.minDevices(),
        r.maxDevices());
    Candidate best = acc.top.get(0);
    List<String> reasons = new ArrayList<>(best.estimate().reasons());
    boolean feasible = best.estimate().feasible();
    if (!feasible) {
      reasons.add(0, "no layout fits: the closest one is shown");
    } else if (r.deadlineDays() > 0 && best.timeMetric() > r.deadlineDays()) {
      feasible = false;
      reasons.add(String.format(Locale.ROOT, "deadline: the fastest plan takes %.1f days, more"
          + " than the %.1f allowed", best.timeMetric(), r.deadlineDays()));
    }
    List<Candidate> scaling = ImmutableList.copyOf(acc.bestPerCount.values());
    List<Candidate> pareto = pareto(scaling);
    List<Candidate> alternatives = acc.top.subList(1, acc.top.size());
    TrainingEstimate e = best.estimate();
    Cluster cluster = r.clusterFor(e.layout().engine()).withDevices((int) e.devices());
    return new Plan(feasible, reasons, best, alternatives, pareto, scaling,
        e.stepSeconds() > 0 ? GoldenParameters.derive(e, r.model(), cluster, best.workload(),
            estimator.interconnect()) : List.of(),
        TrainingFindings.of(e, r.model(), cluster, best.workload()), acc.evaluated,
        acc.bounded, seconds,
        r.objective(), r);
  }

  /** Candidates not beaten on both time and cost, fastest first. */
  static List<Candidate> pareto(List<Candidate> candidates) {
    List<Candidate> feasible = new ArrayList<>();
    for (Candidate c : candidates) {
      if (c.estimate().feasible()) {
        feasible.add(c);
      }
    }
    feasible.sort(Comparator.comparingDouble(Candidate::timeMetric)
        .thenComparingDouble(Candidate::costMetric));
    List<Candidate> front = new ArrayList<>();
    double cheapest = Double.MAX_VALUE;
    for (Candidate c : feasible) {
      if (c.costMetric() < cheapest) {
        front.add(c);
        cheapest = c.costMetric();
      }
    }
    return ImmutableList.copyOf(front);
  }
}
