package io.hyperframes.spark;

import io.hyperframes.nd4j.compress.GradientCodec;
import io.hyperframes.nd4j.train.AsyncCheckpointer;
import java.io.Serializable;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.Deque;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;
import org.apache.spark.HashPartitioner;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.api.java.function.FlatMapFunction2;
import org.apache.spark.broadcast.Broadcast;
import org.apache.spark.storage.StorageLevel;
import org.deeplearning4j.nn.conf.MultiLayerConfiguration;
import org.deeplearning4j.nn.multilayer.MultiLayerNetwork;
import org.nd4j.linalg.dataset.DataSet;
import scala.Tuple2;

/**
 * Synchronous data-parallel training of a DL4J network on Spark in which the workers exchange
 * only encoded updates: each worker computes the update of its mini-batch through its own
 * optimizer (the network's updater, {@code FusedAdamConfig} included), encodes it with its own
 * {@link GradientCodec} (its own error-feedback residual), and sends the message's bytes
 * ({@code Encoded.toBytes}) to the driver; the driver sends every worker all the messages of the
 * step, and every replica, the driver's included, applies their decoded mean. The replicas
 * therefore hold equal parameters, as DL4J's gradient sharing keeps them, and what crosses the
 * process boundary is counted from the bytes that did ({@link Result}). A worker whose gradient
 * holds a NaN or an infinity sends the empty message and changes nothing of its own; every
 * replica then skips that step, as a loss scaler skips an overflowed step, and
 * {@link Result#skippedSteps()} counts it.
 *
 * <pre>{@code
 * EncodedDataParallel dp = EncodedDataParallel.on(sc, conf).codec("topk-0.01-ef").workers(8)
 *     .build();
 * EncodedDataParallel.Result r = dp.fit(batches, 5);      // JavaRDD<DataSet> of mini-batches
 * MultiLayerNetwork trained = dp.network();
 * }</pre>
 *
 * <p>Workers live in Spark partitions, one per worker: a step makes each worker's next state
 * from its last one and never changes it, so a task that Spark runs again (a lost executor, a
 * retried failure) recomputes the same state and sends the same bytes. With a checkpoint
 * directory on the context ({@code sc.setCheckpointDir}) the workers' states are written there
 * every {@link Builder#truncateLineageEvery} steps, so that recovery replays at most that many
 * steps from the messages kept since. Without one they are checkpointed locally (Spark's
 * {@code localCheckpoint}: on the executors' own storage), which bounds the memory the kept
 * messages take but does not survive the loss of an executor: set a checkpoint directory on
 * shared storage for a job that must. The
 * driver's network can be saved through the atomic {@link AsyncCheckpointer}
 * ({@link Builder#checkpoints}).
 *
 * <p>Mini-batch {@code i} of the input goes to worker {@code i mod workers}; an epoch is
 * ⌊batches / workers⌋ steps, each worker taking its next mini-batch per step. Not thread-safe:
 * one {@code fit} at a time.
 */
public final class EncodedDataParallel {

  private final JavaSparkContext sc;
  private final String confJson;
  private final String codec;
  private final int workers;
  private final int truncateEvery;
  private final AsyncCheckpointer checkpointer;
  private final int checkpointEvery;
  private final Fault fault;
  private final Replica driver;
  private JavaRDD<WorkerState> state;
  /** Broadcast messages that a recomputation of {@link #state} may still need, oldest first. */
  private final Deque<Broadcast<List<byte[]>>> kept = new ArrayDeque<>();
  private long steps;

  private EncodedDataParallel(Builder b) {
    this.sc = b.sc;
    this.confJson = b.conf.toJson();
    this.codec = b.codec;
    this.workers = b.workers != null ? b.workers : sc.defaultParallelism();
    this.truncateEvery = b.truncateEvery;
    this.checkpointer = b.checkpointer;
    this.checkpointEvery = b.checkpointEvery;
    this.fault = b.fault;
    MultiLayerNetwork net = new MultiLayerNetwork(MultiLayerConfiguration.fromJson(confJson));
    net.init();
    this.driver = Replica.driver(net, codec, workers);
  }

  /**
   * A trainer of {@code conf} on {@code sc}.
   *
   * @throws IllegalArgumentException naming the argument when one is null
   */
  public static Builder on(JavaSparkContext sc, MultiLayerConfiguration conf) {
    if (sc == null) {
      throw new IllegalArgumentException("sc: a Spark context must be given");
    }
    if (conf == null) {
      throw new IllegalArgumentException("conf: a network configuration must be given");
    }
    return new Builder(sc, conf);
  }

  /** The trainer's settings; {@link #build} checks them. */
  public static final class Builder {
    private final JavaSparkContext sc;
    private final MultiLayerConfiguration conf;
    private String codec = "none";
    /** Null until set: the context's default parallelism. */
    private Integer workers;
    private int truncateEvery = 20;
    private AsyncCheckpointer checkpointer;
    private int checkpointEvery;
    private Fault fault = Fault.NONE;

    private Builder(JavaSparkContext sc, MultiLayerConfiguration conf) {
      this.sc = sc;
      this.conf = conf;
    }

    /** The codec every worker encodes its update with ({@link GradientCodec#named}). */
    public Builder codec(String id) {
      this.codec = id;
      return this;
    }

    /** Workers (Spark partitions); default the context's default parallelism. */
    public Builder workers(int n) {
      this.workers = n;
      return this;
    }

    /**
     * Steps between checkpoints of the workers' states (to the context's checkpoint directory
     * when it has one, else local): what a recovery replays at most, and how many steps'
     * messages are kept for it. Default 20.
     */
    public Builder truncateLineageEvery(int steps) {
      this.truncateEvery = steps;
      return this;
    }

    /** Saves the driver's network through {@code checkpointer} every {@code steps} steps and
     * at the end of every {@code fit}. */
    public Builder checkpoints(AsyncCheckpointer checkpointer, int steps) {
      this.checkpointer = checkpointer;
      this.checkpointEvery = steps;
      return this;
    }

    /** A failure to inject before a worker's step (tests). */
    Builder fault(Fault f) {
      this.fault = f;
      return this;
    }

    /**
     * The trainer.
     *
     * @throws IllegalArgumentException naming the setting that is invalid: an unknown codec, a
     *     codec whose state cannot travel ({@code dl4j-threshold}), workers below 1, a lineage
     *     or checkpoint interval below 1
     */
    public EncodedDataParallel build() {
      GradientCodec c = GradientCodec.named(codec);
      try {
        c.state();
      } catch (IllegalStateException e) {
        throw new IllegalArgumentException("codec: " + codec + " cannot run on Spark, a worker's"
            + " codec state must travel with it (" + e.getMessage() + ")", e);
      }
      codec = c.id();
      if (workers != null && workers < 1) {
        throw new IllegalArgumentException("workers: must be at least 1, got " + workers);
      }
      if (truncateEvery < 1) {
        throw new IllegalArgumentException("truncateLineageEvery: must be at least 1, got "
            + truncateEvery);
      }
      if (checkpointer != null && checkpointEvery < 1) {
        throw new IllegalArgumentException("checkpoints: every must be at least 1 step, got "
            + checkpointEvery);
      }
      return new EncodedDataParallel(this);
    }
  }

  /**
   * What one {@code fit} did.
   *
   * @param codec the codec's id
   * @param workers data-parallel workers
   * @param steps synchronous steps taken
   * @param skippedSteps steps that no replica applied because a worker's gradient held a NaN or
   *     an infinity (its message is empty; optimizer state and residual unchanged)
   * @param bytesSent message bytes the workers sent to the driver, on the wire
   * @param bytesReceived message bytes the workers received (every worker gets all of a step's
   *     messages)
   * @param seconds wall time of the fit
   * @param samplesPerSecond training samples over the wall time
   * @param score the mean loss of the workers' last mini-batches
   */
  public record Result(String codec, int workers, long steps, long skippedSteps, long bytesSent,
      long bytesReceived, double seconds, double samplesPerSecond, double score) {

    /** Bytes that crossed between the workers and the driver, both ways. */
    public long bytesExchanged() {
      return bytesSent + bytesReceived;
    }
  }

  /** The driver's replica: the trained network (its parameters equal every worker's). */
  public MultiLayerNetwork network() {
    return driver.net;
  }

  /**
   * Trains {@code epochs} epochs over {@code batches} (mini-batches, one per worker per step).
   *
   * @throws IllegalArgumentException when batches is null, epochs is below 1, or there are fewer
   *     mini-batches than workers
   */
  public Result fit(JavaRDD<DataSet> batches, int epochs) {
    if (batches == null) {
      throw new IllegalArgumentException("batches: must be given");
    }
    if (epochs < 1) {
      throw new IllegalArgumentException("epochs: must be at least 1, got " + epochs);
    }
    long count = batches.count();
    if (count < workers) {
      throw new IllegalArgumentException("batches: " + count + " mini-batches for " + workers
          + " workers; every worker needs at least one");
    }
    long perWorker = count / workers;
    JavaRDD<DataSet> shards = batches.zipWithIndex().mapToPair(t -> new Tuple2<>(t._2(), t._1()))
        .repartitionAndSortWithinPartitions(new HashPartitioner(workers)).values()
        .persist(StorageLevel.MEMORY_ONLY());
    if (state == null) {
      state = initialState();
    }
    long sent = 0;
    long received = 0;
    long skipped = 0;
    double score = Double.NaN;
    long samples = 0;
    long start = System.nanoTime();
    try {
      for (int epoch = 0; epoch < epochs; epoch++) {
        for (long local = 0; local < perWorker; local++) {
          Broadcast<List<byte[]>> previous = kept.peekLast();
          JavaRDD<WorkerState> next = state.zipPartitions(shards,
              new Step(confJson, codec, workers, steps, epoch, local, previous, fault))
              .persist(StorageLevel.MEMORY_AND_DISK());
          boolean cut = (steps + 1) % truncateEvery == 0;
          if (cut && sc.getCheckpointDir().isPresent()) {
            next.checkpoint();
          } else if (cut) {
            next.rdd().localCheckpoint();
          }
          List<WorkerState.Sent> out = new ArrayList<>(next.map(WorkerState::sent).collect());
          out.sort(Comparator.comparingInt(WorkerState.Sent::worker));
          List<byte[]> messages = new ArrayList<>(out.size());
          long bytes = 0;
          double loss = 0;
          for (WorkerState.Sent s : out) {
            messages.add(s.message());
            bytes += s.message().length;
            loss += Double.isFinite(s.score()) ? s.score() : 0;
            samples += s.rows();
          }
          if (!driver.apply(messages)) {
            skipped++;
          }
          sent += bytes;
          received += bytes * workers;
          score = loss / workers;
          state.unpersist(false);
          state = next;
          if (cut) {
            // The states after this step are checkpointed: older messages are no longer needed.
            while (!kept.isEmpty()) {
              kept.pollFirst().destroy();
            }
          }
          kept.addLast(sc.broadcast(Collections.unmodifiableList(messages)));
          steps++;
          if (checkpointer != null && steps % checkpointEvery == 0) {
            checkpointer.save(driver.net, steps, Map.of());
          }
        }
      }
    } finally {
      shards.unpersist(false);
    }
    if (checkpointer != null && steps % checkpointEvery != 0) {
      checkpointer.save(driver.net, steps, Map.of());
    }
    double seconds = (System.nanoTime() - start) / 1e9;
    return new Result(codec, workers, perWorker * epochs, skipped, sent, received, seconds,
        samples / seconds, score);
  }

  private JavaRDD<WorkerState> initialState() {
    WorkerState first = driver.state(0, 0, new byte[0], 0);
    Broadcast<WorkerState> init = sc.broadcast(first);
    List<Integer> ids = IntStream.range(0, workers).boxed().toList();
    return sc.parallelize(ids, workers).map(i -> {
      WorkerState s = init.value();
      return new WorkerState(i, 0, s.params, s.updater, s.codec, s.message, Double.NaN, 0);
    }).persist(StorageLevel.MEMORY_AND_DISK());
  }

  /** A failure injected before a worker's step, for the tests of recovery. */
  interface Fault extends Serializable {
    Fault NONE = (worker, step) -> { };

    void before(int worker, long step);
  }

  /** One step on one worker: the next state from the last one and the worker's mini-batch. */
  private static final class Step
      implements FlatMapFunction2<Iterator<WorkerState>, Iterator<DataSet>, WorkerState> {
    private static final long serialVersionUID = 1L;
    private final String confJson;
    private final String codec;
    private final int workers;
    private final long step;
    private final int epoch;
    private final long local;
    private final Broadcast<List<byte[]>> previous;
    private final Fault fault;

    Step(String confJson, String codec, int workers, long step, int epoch, long local,
        Broadcast<List<byte[]>> previous, Fault fault) {
      this.confJson = confJson;
      this.codec = codec;
      this.workers = workers;
      this.step = step;
      this.epoch = epoch;
      this.local = local;
      this.previous = previous;
      this.fault = fault;
    }

    @Override
    public Iterator<WorkerState> call(Iterator<WorkerState> states, Iterator<DataSet> data) {
      WorkerState s = states.next();
      fault.before(s.worker, step);
      DataSet batch = null;
      for (long i = 0; i <= local && data.hasNext(); i++) {
        batch = data.next();
      }
      if (batch == null) {
        throw new IllegalStateException("worker " + s.worker + ": no mini-batch " + local);
      }
      Replica r = Replica.worker(confJson, s, codec, workers);
      r.apply(previous == null ? List.of() : previous.value());
      byte[] message = r.update(batch, step, epoch);
      return List.of(r.state(s.worker, step + 1, message, batch.numExamples())).iterator();
    }
  }
}
