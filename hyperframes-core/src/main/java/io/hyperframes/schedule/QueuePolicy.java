package io.hyperframes.schedule;

import java.util.Comparator;
import java.util.List;
import java.util.Map;

/**
 * The queueing policy of a time-based {@link Replay}: in what order waiting jobs are considered,
 * and what to do at each event (an arrival, a finish, a failure, a repair). A policy starts
 * waiting jobs through {@link Queue#tryStart} (the replay's {@link Placement} places the gang's
 * members, all or none) and may {@link Queue#preempt} running ones. Built in: {@link #fifo()},
 * {@link #sjf()}, {@link #easyBackfill()}, {@link #priority()} and
 * {@link #quotas(Map, boolean)}; write your own.
 */
public interface QueuePolicy {

  /** Short name for reports. */
  String name();

  /** The order of the waiting queue ({@link Queue#waiting()}); ties go to submission order. */
  Comparator<GpuJob> order();

  /** Decides, at one event time, which waiting jobs start and which running ones stop. */
  void schedule(Queue queue);

  /**
   * Whether {@link #schedule} is also called when GPUs are freed and nothing waits, to give
   * them to running jobs ({@link Queue#resize}); false by default, so that a policy that only
   * starts waiting jobs is not called for nothing.
   */
  default boolean growsRunningJobs() {
    return false;
  }

  /**
   * A running job as a policy sees it.
   *
   * @param job the job
   * @param startSeconds when this run started
   * @param finishSeconds when it will finish at its current GPUs (barring failures)
   * @param gpus whole GPUs it runs on now (an elastic job's may differ from its own count)
   */
  record RunningJob(GpuJob job, double startSeconds, double finishSeconds, int gpus) {}

  /**
   * A reservation ({@link Queue#reservation}).
   *
   * @param atSeconds when enough GPUs will have been given back; infinite for {@link #NEVER}
   * @param spareGpuMilli thousandths free beyond the reserved ones at that time
   */
  record Reservation(double atSeconds, long spareGpuMilli) {
    /** No expected finish frees enough. */
    public static final Reservation NEVER =
        new Reservation(Double.POSITIVE_INFINITY, Long.MAX_VALUE);
  }

  /**
   * The replay's state at one event time. Jobs started or preempted here leave or join the
   * waiting queue when {@link #schedule} returns, so {@link #waiting()} may be iterated while
   * starting jobs.
   */
  interface Queue {
    /** The clock, seconds. */
    double now();

    /** Waiting jobs in {@link #order()}, without those started during this call. */
    Iterable<GpuJob> waiting();

    /** Running jobs, a snapshot in submission order, with their expected finish times. */
    List<RunningJob> running();

    /** GPU thousandths free on nodes that are up. */
    long freeGpuMilli();

    /**
     * When a job asking for {@code gpuMilli} thousandths could start by count alone (EASY
     * backfilling's reservation, Lifka 1995; Mu'alem and Feitelson, IEEE TPDS 12(6), 2001): the
     * running jobs are taken in order of expected finish (then submission), and the first
     * finish at which the thousandths free now plus those they give back reach {@code
     * gpuMilli} is the time; the thousandths beyond {@code gpuMilli} then are the spare. Where
     * no finish reaches it: {@link Reservation#NEVER}. The engine keeps the running jobs in
     * that order, so this costs the finishes it walks, not a sort.
     *
     * @throws IllegalArgumentException if {@code gpuMilli} is not positive
     */
    Reservation reservation(long gpuMilli);

    /** GPU thousandths of the whole cluster. */
    long capacityGpuMilli();

    /**
     * Seconds of running {@code job} still needs (restart cost included after a stop): at its
     * current GPUs when running, at its own count when waiting.
     */
    double remainingSeconds(GpuJob job);

    /**
     * Starts a waiting job if the placement finds room for every member now.
     *
     * @return whether it started
     * @throws IllegalArgumentException if the job is not waiting
     */
    boolean tryStart(GpuJob job);

    /**
     * Starts a waiting elastic job on {@code gpus} whole GPUs ({@link GpuJob#shape}) if the
     * placement finds room for every member now.
     *
     * @return whether it started
     * @throws IllegalArgumentException if the job is not waiting or {@code gpus} is outside its
     *     range
     */
    boolean tryStart(GpuJob job, int gpus);

    /**
     * Restarts a running elastic job on {@code gpus} whole GPUs: it keeps its progress and pays
     * the replay's restart cost. If the new shape does not fit, it restarts on its old one
     * (and, should even that not be placed again, waits like a preempted job).
     *
     * @return whether it now runs on {@code gpus}
     * @throws IllegalArgumentException if the job is not running, was started in this call, or
     *     {@code gpus} is outside its range
     */
    boolean resize(GpuJob job, int gpus);

    /**
     * Stops a running job and puts it back in the queue; it keeps its progress and pays the
     * replay's restart cost when it starts again.
     *
     * @throws IllegalArgumentException if the job is not running
     */
    void preempt(GpuJob job);

    /**
     * Starts a waiting job, stopping running jobs that {@code mayPreempt} accepts where that
     * makes room, node by node (the preemption of Kubernetes' scheduler: for a pod that fits
     * nowhere, the node where evicting lower-priority pods makes it fit, with the fewest
     * victims; kubernetes.io/docs/concepts/scheduling-eviction/pod-priority-preemption). First
     * the job is placed as {@link #tryStart} would; failing that, member by member, the node
     * (up, and not the choice of the {@link Placement}) where the member fits after stopping
     * the fewest such jobs, taken on that node in {@code victimOrder} (then the fewest GPUs
     * taken from them, then the lowest node index). A stopped gang frees all its members. When
     * some member fits nowhere even so, nothing is stopped.
     *
     * @return the jobs stopped (empty when it started without stopping any), or null when it
     *     did not start
     * @throws IllegalArgumentException if the job is not waiting, or an argument is missing
     */
    List<GpuJob> tryStartPreempting(GpuJob job,
        java.util.function.Predicate<RunningJob> mayPreempt,
        Comparator<RunningJob> victimOrder);
  }

  /** Ties of an order: submission time, then name. */
  Comparator<GpuJob> ARRIVAL = Comparator.comparingDouble(GpuJob::arrivalSeconds)
      .thenComparing(GpuJob::name);

  /**
   * First come, first served, strict: the head blocks the jobs behind it (no backfilling); no
   * preemption.
   */
  static QueuePolicy fifo() {
    return new QueuePolicies.Strict("fifo", null);
  }

  /** Shortest job first (durations known, as SJF assumes), strict, no preemption. */
  static QueuePolicy sjf() {
    return new QueuePolicies.Strict("sjf", GpuJob::durationSeconds);
  }

  /**
   * FIFO with EASY backfilling (Lifka 1995; Mu'alem and Feitelson, IEEE TPDS 2001, §2): when
   * the head cannot start it gets a reservation at the earliest time enough GPUs will be free
   * (from the running jobs' expected finishes), and a later job may start now if it fits and
   * either ends before that time or leaves the reservation's GPUs untouched. The reservation
   * counts GPU thousandths over the whole cluster, not per node.
   */
  static QueuePolicy easyBackfill() {
    return new QueuePolicies.EasyBackfill();
  }

  /**
   * Priority tiers with preemption: waiting jobs by priority (higher first), then submission;
   * a job that does not fit preempts running jobs of lower priority — lowest tier first, the
   * most recently started first — when their GPUs would make room; jobs that cannot start are
   * skipped, not waited for.
   */
  static QueuePolicy priority() {
    return new QueuePolicies.Priority();
  }

  /**
   * Per-tenant GPU quotas (GPUs), FIFO within them. A job within its tenant's quota starts when
   * it fits; with {@code borrowing}, a job beyond it starts on idle GPUs as a borrower and is
   * preempted (most recent first) when a job within its own quota needs the room — the cohort
   * borrowing of Kubernetes Kueue. Tenants without a quota have none (they only borrow).
   */
  static QueuePolicy quotas(Map<String, Integer> quotaGpus, boolean borrowing) {
    return new QueuePolicies.Quotas(quotaGpus, borrowing);
  }

  /**
   * FIFO with elastic jobs ({@link GpuJob#elastic}), the scale-down and scale-up of elastic
   * training (Or, Zhang and Freedman, "Resource Elasticity in Distributed Deep Learning",
   * MLSys 2020; Kubernetes' TorchElastic): in submission order, a job starts on its own GPU
   * count, or an elastic one on the most GPUs of its range below that which fit. When the head
   * cannot start even on its fewest, running elastic jobs give GPUs back, the most recently
   * started first: first those above their own count down to it, then down to their fewest,
   * until the head starts (and nothing behind it overtakes it). When nothing waits, running
   * elastic jobs grow into the idle GPUs up to their most, the earliest started first; a job
   * started at this instant grows at a later event. Every resize restarts the job (the
   * replay's restart cost); a resize that does not fit leaves the job as it was. With rigid
   * jobs only, this is FIFO.
   */
  static QueuePolicy elastic() {
    return new QueuePolicies.Elastic();
  }

  /**
   * A built-in policy by name, a new one each call (a policy keeps state through a replay):
   * {@code fifo}, {@code sjf}, {@code backfill} ({@link #easyBackfill()}), {@code priority},
   * {@code elastic}, or {@code quotas} with {@code quotaGpus} and {@code borrowing} (ignored by
   * the others).
   *
   * @throws IllegalArgumentException naming {@code queue} and the value for an unknown name
   */
  static QueuePolicy named(String name, Map<String, Integer> quotaGpus, boolean borrowing) {
    return switch (String.valueOf(name)) {
      case "fifo" -> fifo();
      case "sjf" -> sjf();
      case "backfill" -> easyBackfill();
      case "priority" -> priority();
      case "elastic" -> elastic();
      case "quotas" -> quotas(quotaGpus, borrowing);
      default -> throw new IllegalArgumentException("queue: expected fifo, sjf, backfill,"
          + " priority, quotas or elastic, got " + name);
    };
  }
}
