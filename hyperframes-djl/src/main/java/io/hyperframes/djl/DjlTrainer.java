package io.hyperframes.djl;

import static com.google.common.base.Preconditions.checkArgument;
import static com.google.common.base.Preconditions.checkState;

import ai.djl.Device;
import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDList;
import ai.djl.ndarray.NDManager;
import ai.djl.ndarray.index.NDIndex;
import ai.djl.nn.Parameter;
import ai.djl.training.EasyTrain;
import ai.djl.training.GradientCollector;
import ai.djl.training.Trainer;
import ai.djl.training.dataset.Batch;
import ai.djl.training.dataset.Dataset;
import ai.djl.training.listener.TrainingListener.BatchData;
import ai.djl.translate.TranslateException;
import io.hyperframes.runtime.CheckpointFiles;
import io.hyperframes.runtime.LossScale;
import io.hyperframes.runtime.StepMeter;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;

/**
 * The training loop of {@code EasyTrain.fit} around an existing DJL {@link Trainer}, with the
 * runtime added, in one expression:
 *
 * <pre>{@code
 * DjlTrainer.Result r = DjlTrainer.train(trainer)        // your Trainer, configured as before
 *     .data(PrefetchingDataset.builder(train).batchSize(256).workers(4).shuffle(42).build())
 *     .epochs(10)
 *     .lossScaling(LossScale.pytorchDefaults())          // FP16 models; optional
 *     .checkpoints(Path.of("ckpt"), 500, 3)              // every 500 steps, keep 3, async
 *     .fit();
 * r.summary().findings();
 * }</pre>
 *
 * <p>Each batch is split over the trainer's devices and each part runs forward, loss and
 * backward as in {@code EasyTrain.trainBatch}; with several devices and the trainer's executor
 * the parts run on it and the loop <b>waits for every part</b> before it steps (EasyTrain does
 * not join those futures, DJL issue 2459). The trainer's listeners see {@code onTrainingBatch}
 * with the labels and predictions as from EasyTrain, so evaluators and loggers work unchanged;
 * validation data is evaluated after each epoch with {@code EasyTrain.evaluateDataset}, then
 * {@code onEpoch}. Around the step the loop adds:
 *
 * <ul>
 *   <li>metering of every phase (data wait, forward, backward, optimizer) into a
 *       {@link StepMeter}, the same summary and findings as the DL4J side;
 *   <li>a guard that skips a non-finite step before the optimizer sees it (weights and optimizer
 *       state unchanged, gradients cleared): a step whose loss is Inf or NaN, and with loss
 *       scaling (or {@link #checkEveryGradient}) one whose gradients hold Inf or NaN;
 *   <li>dynamic loss scaling ({@link LossScale}, PyTorch {@code GradScaler} semantics): the loss
 *       is multiplied by the scale before backward, gradients divided by it before the step;
 *       overflow skips the step and backs the scale off;
 *   <li>asynchronous atomic checkpoints ({@link DjlCheckpoints}): the parameters are copied on
 *       the training thread, written on a background one, renamed into place when complete.
 * </ul>
 *
 * <p>The non-finite check reads each parameter's gradient on the parameter's own array (the
 * first device's); with several devices the per-device copies are summed by DJL's parameter
 * server during the step, after the check. Single use, not thread-safe.
 */
public final class DjlTrainer {

  /**
   * What a run did.
   *
   * @param epochs epochs completed
   * @param steps optimizer steps applied
   * @param skippedSteps steps skipped for non-finite gradients
   * @param summary the step meter's summary over the run
   * @param lossScale the loss scale's final state (empty without loss scaling)
   * @param lastCheckpoint the final checkpoint, when checkpoints were asked for
   */
  public record Result(int epochs, long steps, long skippedSteps, StepMeter.Summary summary,
      Map<String, Double> lossScale, Optional<Path> lastCheckpoint) {
    public Result {
      lossScale = Map.copyOf(lossScale);
    }
  }

  private final Trainer trainer;
  private Dataset data;
  private Dataset validation;
  private int epochs = 1;
  private LossScale lossScale;
  private boolean skipNonFinite = true;
  private Boolean checkGradients;
  private StepMeter meter;
  private HyperFramesListener listener;
  private List<Parameter> trainable;
  private Path checkpointDir;
  private int checkpointEvery;
  private int checkpointKeep;
  private boolean used;

  private DjlTrainer(Trainer trainer) {
    this.trainer = trainer;
  }

  /** A loop around {@code trainer} (initialised, with its loss, optimizer and listeners). */
  public static DjlTrainer train(Trainer trainer) {
    checkArgument(trainer != null, "trainer: must be given");
    return new DjlTrainer(trainer);
  }

  /** The training data (any DJL dataset; a {@link PrefetchingDataset} to prefetch). */
  public DjlTrainer data(Dataset dataset) {
    checkArgument(dataset != null, "data: must be given");
    this.data = dataset;
    return this;
  }

  /** Data evaluated after each epoch (optional). */
  public DjlTrainer validation(Dataset dataset) {
    checkArgument(dataset != null, "validation: must be given");
    this.validation = dataset;
    return this;
  }

  /** Epochs (default 1). */
  public DjlTrainer epochs(int n) {
    checkArgument(n >= 1, "epochs: must be >= 1, got %s", n);
    this.epochs = n;
    return this;
  }

  /** Dynamic loss scaling for FP16 models (default: none). */
  public DjlTrainer lossScaling(LossScale scale) {
    checkArgument(scale != null, "lossScaling: must be given");
    this.lossScale = scale;
    return this;
  }

  /**
   * Whether non-finite steps are skipped (default true; always with loss scaling). What is
   * checked: see {@link #checkEveryGradient}.
   */
  public DjlTrainer skipNonFiniteSteps(boolean skip) {
    this.skipNonFinite = skip;
    return this;
  }

  /**
   * Whether the guard reads every gradient (one reduction per parameter tensor and one
   * synchronisation per step, as PyTorch's GradScaler) or only the loss (one scalar per device).
   * Default: every gradient with loss scaling, where a finite loss with overflowing FP16
   * gradients is the case to catch; the loss without it, where a non-finite gradient comes from
   * a non-finite loss.
   */
  public DjlTrainer checkEveryGradient(boolean every) {
    this.checkGradients = every;
    return this;
  }

  /** The meter to record into (default: a fresh one). */
  public DjlTrainer meter(StepMeter m) {
    checkArgument(m != null, "meter: must be given");
    checkArgument(listener == null, "meter: already set by listener(...)");
    this.meter = m;
    return this;
  }

  /**
   * A {@link HyperFramesListener} that is among the trainer's listeners: the loop records into
   * its meter, and the listener stands aside while the loop runs, so that no step is counted
   * twice (it meters {@code EasyTrain.fit} again afterwards).
   */
  public DjlTrainer listener(HyperFramesListener l) {
    checkArgument(l != null, "listener: must be given");
    checkArgument(meter == null, "listener: the meter is already set by meter(...)");
    this.listener = l;
    this.meter = l.meter();
    return this;
  }

  /**
   * Asynchronous checkpoints into {@code directory} every {@code everySteps} steps and at the
   * end, keeping the newest {@code keep}.
   */
  public DjlTrainer checkpoints(Path directory, int everySteps, int keep) {
    checkArgument(directory != null, "checkpoints.directory: must be given");
    checkArgument(everySteps >= 1, "checkpoints.everySteps: must be >= 1, got %s", everySteps);
    checkArgument(keep >= 1, "checkpoints.keep: must be >= 1, got %s", keep);
    this.checkpointDir = directory;
    this.checkpointEvery = everySteps;
    this.checkpointKeep = keep;
    return this;
  }

  /**
   * Runs the loop.
   *
   * @throws IllegalStateException without data, or on a second call
   * @throws IOException when the data cannot be read or a checkpoint not written
   */
  public Result fit() throws IOException, TranslateException {
    checkState(data != null, "data: must be given before fit()");
    checkState(!used, "fit: a DjlTrainer runs once");
    used = true;
    StepMeter m = meter != null ? meter : new StepMeter();
    long steps = 0;
    long skipped = 0;
    int epoch = 0;
    Path last = null;
    CheckpointFiles files = checkpointDir == null ? null
        : new CheckpointFiles(checkpointDir, checkpointKeep, DjlCheckpoints.EXTENSION);
    List<Future<Path>> pending = new ArrayList<>();
    if (listener != null) {
      listener.drivenBy(true);
    }
    try {
      for (; epoch < epochs; epoch++) {
        Iterator<Batch> it = trainer.iterateDataset(data).iterator();
        while (true) {
          long t0 = System.nanoTime();
          if (!it.hasNext()) {
            break;
          }
          Batch batch = it.next();
          long tData = System.nanoTime();
          long[] forwardEnd = new long[1];
          boolean finite;
          long tCompute;
          try {
            boolean lossFinite = trainSplits(batch, forwardEnd);
            tCompute = System.nanoTime();
            boolean every = checkGradients != null ? checkGradients : lossScale != null;
            finite = !guarded() || (lossFinite && (!every || gradientsFinite()));
            if (finite) {
              if (lossScale != null) {
                unscaleGradients(lossScale.scale());
              }
              trainer.step();
              steps++;
            } else {
              clearGradients();
              skipped++;
            }
            if (lossScale != null) {
              lossScale.update(!finite);
            }
          } finally {
            batch.close();
          }
          long tEnd = System.nanoTime();
          long forward = forwardEnd[0] > 0 ? forwardEnd[0] - tData : 0;
          m.record(tData - t0, Math.min(forward, tCompute - tData), tCompute - tData,
              tEnd - tCompute, tEnd - t0, batch.getSize());
          if (files != null && finite && steps % checkpointEvery == 0) {
            pending.add(checkpoint(files, steps, epoch));
          }
        }
        if (validation != null) {
          EasyTrain.evaluateDataset(trainer, validation);
        }
        trainer.notifyListeners(listener -> listener.onEpoch(trainer));
      }
      if (files != null) {
        pending.add(checkpoint(files, steps, epochs - 1));
        for (Future<Path> f : pending) {
          last = f.get();
        }
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IOException("checkpoint: interrupted while waiting for the writer", e);
    } catch (ExecutionException e) {
      throw new IOException("checkpoint: " + e.getCause().getMessage(), e.getCause());
    } finally {
      if (listener != null) {
        listener.drivenBy(false);
      }
      if (files != null) {
        files.close();
      }
    }
    return new Result(epoch, steps, skipped, m.summary(),
        lossScale == null ? Map.of() : lossScale.state(), Optional.ofNullable(last));
  }

  private Future<Path> checkpoint(CheckpointFiles files, long step, int epoch)
      throws IOException {
    byte[] params = DjlCheckpoints.snapshot(trainer.getModel().getBlock());
    Map<String, Double> state = lossScale == null ? Map.of() : lossScale.state();
    return files.submit(step, tmp -> DjlCheckpoints.write(tmp, step, epoch, state, params));
  }

  /**
   * Forward, loss and backward of every device's part of the batch, as EasyTrain.trainBatch, and
   * then the listeners' onTrainingBatch. With one part, {@code forwardEnd[0]} is when its
   * forward and loss were done.
   */
  private boolean trainSplits(Batch batch, long[] forwardEnd) {
    Device[] devices = trainer.getDevices();
    Batch[] splits = batch.split(devices, false);
    BatchData batchData = new BatchData(batch, new ConcurrentHashMap<>(),
        new ConcurrentHashMap<>());
    double scale = lossScale == null ? 1.0 : lossScale.scale();
    float[] losses = new float[splits.length];
    try (GradientCollector collector = trainer.newGradientCollector()) {
      Optional<ExecutorService> executor = trainer.getExecutorService();
      if (splits.length > 1 && executor.isPresent()) {
        List<CompletableFuture<Void>> parts = new ArrayList<>(splits.length);
        for (int i = 0; i < splits.length; i++) {
          int part = i;
          parts.add(CompletableFuture.runAsync(() -> losses[part] = trainSplit(collector,
              batchData, splits[part], scale, null), executor.get()));
        }
        try {
          CompletableFuture.allOf(parts.toArray(CompletableFuture[]::new)).join();
        } catch (CompletionException e) {
          Throwable cause = e.getCause();
          if (cause instanceof RuntimeException r) {
            throw r;
          }
          throw e;
        }
      } else {
        for (int i = 0; i < splits.length; i++) {
          losses[i] = trainSplit(collector, batchData, splits[i], scale,
              splits.length == 1 ? forwardEnd : null);
        }
      }
    } finally {
      for (Batch split : splits) {
        if (split != batch) {
          split.close();
        }
      }
    }
    trainer.notifyListeners(listener -> listener.onTrainingBatch(trainer, batchData));
    boolean finite = true;
    for (float loss : losses) {
      finite &= Float.isFinite(loss);
    }
    return finite;
  }

  /** Forward, loss and backward of one part; returns the loss value. */
  private float trainSplit(GradientCollector collector, BatchData batchData, Batch split,
      double scale, long[] forwardEnd) {
    NDList data = split.getData();
    NDList labels = split.getLabels();
    NDList predictions = trainer.forward(data, labels);
    NDArray loss = trainer.getLoss().evaluate(labels, predictions);
    if (forwardEnd != null) {
      forwardEnd[0] = System.nanoTime();
    }
    collector.backward(scale == 1.0 ? loss : loss.mul(scale));
    Device device = labels.head().getDevice();
    batchData.getLabels().put(device, labels);
    batchData.getPredictions().put(device, predictions);
    return guarded() ? scalar(loss) : 0f;
  }

  /**
   * Whether every parameter's gradient is finite: a sum is NaN or Inf if any element is, so the
   * sums are added on the device and read back once (one synchronisation per step).
   */
  private boolean gradientsFinite() {
    return withGradients(grads -> {
      NDArray total = null;
      for (NDArray g : grads) {
        NDArray sum = g.sum();
        total = total == null ? sum : total.addi(sum);
      }
      return total == null || Float.isFinite(scalar(total));
    });
  }

  private void unscaleGradients(double scale) {
    float inverse = (float) (1.0 / scale);
    withGradients(grads -> {
      grads.forEach(g -> g.muli(inverse));
      return null;
    });
  }

  /** Sets every gradient to zero (Inf − Inf would leave NaN, so set, not subtract). */
  private void clearGradients() {
    withGradients(grads -> {
      grads.forEach(g -> g.set(new NDIndex("..."), 0f));
      return null;
    });
  }

  /**
   * Applies {@code use} to every trainable parameter's gradient; the gradient handles (and what
   * {@code use} computes from them) live in a scratch manager closed afterwards.
   */
  private <T> T withGradients(java.util.function.Function<List<NDArray>, T> use) {
    try (NDManager scratch = trainer.getManager().newSubManager()) {
      List<NDArray> grads = new ArrayList<>();
      for (Parameter p : parameters()) {
        NDArray g = p.getArray().getGradient();
        g.attach(scratch);
        grads.add(g);
      }
      return use.apply(grads);
    }
  }

  /** A scalar as a float (toFloatArray copies it out; getFloat goes through an indexer). */
  private static float scalar(NDArray a) {
    return a.getDataType() == ai.djl.ndarray.types.DataType.FLOAT32 ? a.toFloatArray()[0]
        : a.toType(ai.djl.ndarray.types.DataType.FLOAT32, true).toFloatArray()[0];
  }

  /** Whether non-finite steps are caught (asked for, or implied by loss scaling). */
  private boolean guarded() {
    return skipNonFinite || lossScale != null;
  }

  private List<Parameter> parameters() {
    if (trainable != null) {
      return trainable;
    }
    List<Parameter> out = new ArrayList<>();
    for (var pair : trainer.getModel().getBlock().getParameters()) {
      Parameter p = pair.getValue();
      if (p.requiresGradient() && p.isInitialized()) {
        out.add(p);
      }
    }
    trainable = out;
    return out;
  }
}
