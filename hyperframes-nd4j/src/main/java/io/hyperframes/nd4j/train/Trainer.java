package io.hyperframes.nd4j.train;

import io.hyperframes.nd4j.data.EncodedDataset;
import io.hyperframes.nd4j.data.PrefetchingDataSetIterator;
import io.hyperframes.runtime.StepMeter;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.function.Supplier;
import org.deeplearning4j.nn.api.Model;
import org.deeplearning4j.nn.api.NeuralNetwork;
import org.deeplearning4j.nn.graph.ComputationGraph;
import org.deeplearning4j.nn.multilayer.MultiLayerNetwork;
import org.deeplearning4j.optimize.api.BaseTrainingListener;
import org.deeplearning4j.optimize.api.TrainingListener;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.dataset.DataSet;
import org.nd4j.linalg.dataset.api.iterator.DataSetIterator;

/**
 * Wires the training runtime around an existing DL4J network ({@link MultiLayerNetwork} or
 * single-input, single-output {@link ComputationGraph}) in one expression:
 *
 * <pre>{@code
 * Trainer.Result r = Trainer.train(net)                 // e.g. built from Dl4jAdapter.accelerate
 *     .data(encoded, 256, 42).prefetch(4, 8)             // memory-mapped rows, 4 workers, 8 ahead
 *     .epochs(10)
 *     .checkpoints(Path.of("ckpt"), 500, 3)              // every 500 steps, keep 3, asynchronous
 *     .fit();
 * r.summary().findings();                                // step meter: p50/p99, shares, findings
 * }</pre>
 *
 * <p>Each batch goes through DL4J's own {@code fit(DataSet)} (updater, regularisation, listeners
 * as configured). Around it the trainer adds: a {@link StepMeterListener} for the run (removed
 * afterwards); a guard that skips a step whose gradients contain Inf or NaN before the updater
 * sees them, so weights and updater state stay unchanged (the overflow half of
 * {@link DynamicLossScaler}: DL4J networks keep FP32 gradients, also behind BF16 fused layers,
 * so there is nothing to unscale); and {@link AsyncCheckpointer} snapshots every n steps and at
 * the end, each with the step, epoch and skipped-step count as extra state.
 *
 * <p>A trainer is single-use and not thread-safe.
 */
public final class Trainer {

  /** Loader defaults; the planner's golden parameter table sizes them for a given machine. */
  static final int DEFAULT_WORKERS = 2;

  static final int DEFAULT_DEPTH = 8;

  /**
   * What a run did.
   *
   * @param epochs epochs completed
   * @param steps optimizer steps applied
   * @param skippedSteps steps skipped for non-finite gradients
   * @param summary the step meter's summary over the run
   * @param lastCheckpoint the final checkpoint, when checkpoints were asked for
   */
  public record Result(int epochs, long steps, long skippedSteps, StepMeter.Summary summary,
      Optional<Path> lastCheckpoint) {}

  /** What the loop needs of a network: both DL4J kinds offer it under the same names. */
  private interface Net {
    void fit(DataSet ds);

    Collection<TrainingListener> listeners();

    void listeners(Collection<TrainingListener> l);

    void nextEpoch();

    Model model();
  }

  private final Net net;
  private DataSetIterator iterator;
  private EncodedDataset encoded;
  private int batchSize;
  private long seed;
  private int workers = DEFAULT_WORKERS;
  private int depth = DEFAULT_DEPTH;
  private int epochs = 1;
  private StepMeter meter;
  private Path checkpointDir;
  private int checkpointEvery;
  private int checkpointKeep;
  private boolean skipNonFinite = true;
  private boolean used;

  private Trainer(Net net) {
    this.net = net;
  }

  /**
   * A trainer for {@code net} (initialised).
   *
   * @throws IllegalArgumentException when {@code net} is null
   */
  public static Trainer train(MultiLayerNetwork net) {
    if (net == null) {
      throw new IllegalArgumentException("net: must be given");
    }
    return of(net, net::getListeners, net::incrementEpochCount);
  }

  /**
   * A trainer for {@code graph} (initialised; one input and one output, as {@code fit(DataSet)}
   * needs). Checkpoints are {@code ComputationGraph} zips.
   *
   * @throws IllegalArgumentException when {@code graph} is null or not single-input and -output
   */
  public static Trainer train(ComputationGraph graph) {
    if (graph == null) {
      throw new IllegalArgumentException("graph: must be given");
    }
    if (graph.getNumInputArrays() != 1 || graph.getNumOutputArrays() != 1) {
      throw new IllegalArgumentException("graph: fit(DataSet) needs one input and one output, got "
          + graph.getNumInputArrays() + " and " + graph.getNumOutputArrays());
    }
    return of(graph, graph::getListeners, graph::incrementEpochCount);
  }

  /** A trainer for a network of either kind, which share no interface for these calls. */
  private static <N extends Model & NeuralNetwork> Trainer of(N network,
      Supplier<Collection<TrainingListener>> listeners, Runnable nextEpoch) {
    return new Trainer(new Net() {
      @Override
      public void fit(DataSet ds) {
        network.fit(ds);
      }

      @Override
      public Collection<TrainingListener> listeners() {
        return listeners.get();
      }

      @Override
      public void listeners(Collection<TrainingListener> l) {
        network.setListeners(l);
      }

      @Override
      public void nextEpoch() {
        nextEpoch.run();
      }

      @Override
      public Model model() {
        return network;
      }
    });
  }

  /** Trains on {@code iterator} as it is (reset at every epoch). */
  public Trainer data(DataSetIterator iterator) {
    if (iterator == null) {
      throw new IllegalArgumentException("iterator: must be given");
    }
    if (epochs > 1 && !iterator.resetSupported()) {
      throw new IllegalArgumentException("iterator: does not support reset, needed for "
          + epochs + " epochs");
    }
    this.iterator = iterator;
    this.encoded = null;
    return this;
  }

  /**
   * Trains on a pre-encoded dataset through a {@link PrefetchingDataSetIterator} (shuffled by
   * {@code seed}, a new order each epoch), created and closed by {@link #fit}.
   */
  public Trainer data(EncodedDataset data, int batchSize, long seed) {
    if (data == null) {
      throw new IllegalArgumentException("data: must be given");
    }
    if (batchSize < 1) {
      throw new IllegalArgumentException("batchSize: must be >= 1, got " + batchSize);
    }
    this.encoded = data;
    this.batchSize = batchSize;
    this.seed = seed;
    this.iterator = null;
    return this;
  }

  /** Loader threads and batches built ahead for {@link #data(EncodedDataset, int, long)}. */
  public Trainer prefetch(int workers, int depth) {
    if (workers < 1) {
      throw new IllegalArgumentException("workers: must be >= 1, got " + workers);
    }
    if (depth < 1) {
      throw new IllegalArgumentException("depth: must be >= 1, got " + depth);
    }
    this.workers = workers;
    this.depth = depth;
    return this;
  }

  /** Epochs to run (default 1). */
  public Trainer epochs(int n) {
    if (n < 1) {
      throw new IllegalArgumentException("epochs: must be >= 1, got " + n);
    }
    if (n > 1 && iterator != null && !iterator.resetSupported()) {
      throw new IllegalArgumentException("epochs: " + n + " needs an iterator that resets");
    }
    this.epochs = n;
    return this;
  }

  /** The meter to feed (default: a new one, in {@link Result#summary()}). */
  public Trainer meter(StepMeter meter) {
    if (meter == null) {
      throw new IllegalArgumentException("meter: must be given");
    }
    this.meter = meter;
    return this;
  }

  /** Asynchronous checkpoints into {@code dir} every {@code everySteps} steps, keeping the last k. */
  public Trainer checkpoints(Path dir, int everySteps, int keep) {
    if (dir == null) {
      throw new IllegalArgumentException("dir: must be given");
    }
    if (everySteps < 1) {
      throw new IllegalArgumentException("everySteps: must be >= 1, got " + everySteps);
    }
    if (keep < 1) {
      throw new IllegalArgumentException("keep: must be >= 1, got " + keep);
    }
    this.checkpointDir = dir;
    this.checkpointEvery = everySteps;
    this.checkpointKeep = keep;
    return this;
  }

  /** Whether steps with Inf/NaN gradients are skipped (default true) or applied as DL4J would. */
  public Trainer skipNonFiniteSteps(boolean skip) {
    this.skipNonFinite = skip;
    return this;
  }

  /**
   * Runs the epochs.
   *
   * @throws IllegalStateException when no data was given or the trainer was already used
   * @throws UncheckedIOException when a checkpoint cannot be written
   */
  public Result fit() {
    if (iterator == null && encoded == null) {
      throw new IllegalStateException("data: call data(...) before fit()");
    }
    if (used) {
      throw new IllegalStateException("trainer: already used; create a new one");
    }
    used = true;
    StepMeter m = meter != null ? meter : new StepMeter();
    StepMeterListener meterListener = new StepMeterListener(m);
    Guard guard = new Guard();
    Collection<TrainingListener> before = new ArrayList<>(net.listeners());
    List<TrainingListener> during = new ArrayList<>(before);
    during.add(meterListener);
    if (skipNonFinite) {
      during.add(guard);
    }
    net.listeners(during);
    PrefetchingDataSetIterator owned = encoded == null ? null
        : PrefetchingDataSetIterator.builder(encoded.batches(batchSize, seed)).workers(workers)
            .depth(depth).batchSize(batchSize).inputColumns(encoded.featureColumns())
            .totalOutcomes(encoded.labelColumns()).build();
    DataSetIterator it = meterListener.metered(owned != null ? owned : iterator);
    AsyncCheckpointer checkpointer = checkpointDir == null ? null
        : new AsyncCheckpointer(checkpointDir, checkpointKeep);
    long steps = 0;
    long skipped = 0;
    Future<Path> last = null;
    int epoch = 0;
    try {
      for (; epoch < epochs; epoch++) {
        if (epoch > 0 || it.resetSupported()) {
          it.reset();
        }
        meterListener.onEpochStart(net.model());
        while (it.hasNext()) {
          DataSet ds = it.next();
          try {
            net.fit(ds);
            steps++;
          } catch (NonFiniteGradients e) {
            skipped++;
            continue;
          }
          if (checkpointer != null && steps % checkpointEvery == 0) {
            last = checkpointer.save(net.model(), steps, state(steps, epoch, skipped));
          }
        }
        net.nextEpoch();
      }
      if (checkpointer != null && (last == null || steps % checkpointEvery != 0)) {
        last = checkpointer.save(net.model(), steps, state(steps, epoch, skipped));
      }
      Optional<Path> lastPath = Optional.empty();
      if (last != null) {
        lastPath = Optional.of(await(last));
      }
      return new Result(epoch, steps, skipped, m.summary(), lastPath);
    } finally {
      net.listeners(before);
      if (owned != null) {
        owned.close();
      }
      if (checkpointer != null) {
        checkpointer.close();
      }
    }
  }

  private static Map<String, Double> state(long steps, int epoch, long skipped) {
    return Map.of("step", (double) steps, "epoch", (double) epoch, "skippedSteps",
        (double) skipped);
  }

  private static Path await(Future<Path> f) {
    try {
      return f.get();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("checkpoint: interrupted while waiting for the write", e);
    } catch (ExecutionException e) {
      Throwable c = e.getCause();
      if (c instanceof IOException io) {
        throw new UncheckedIOException("checkpoint: write failed: " + io.getMessage(), io);
      }
      throw new IllegalStateException("checkpoint: write failed: " + c, c);
    }
  }

  /** Thrown from the gradient callback to abandon a step before the updater runs. */
  private static final class NonFiniteGradients extends RuntimeException {
    private static final long serialVersionUID = 1L;

    NonFiniteGradients() {
      super("non-finite gradients", null, false, false);
    }
  }

  /** Aborts the step when the flattened gradients hold Inf or NaN (one reduction per step). */
  private static final class Guard extends BaseTrainingListener {
    @Override
    public void onGradientCalculation(Model model) {
      INDArray g = model.gradient() == null ? null : model.gradient().gradient();
      if (g != null && !Double.isFinite(g.sumNumber().doubleValue())) {
        throw new NonFiniteGradients();
      }
    }
  }
}
