package io.hyperframes.djl;

import static com.google.common.base.Preconditions.checkArgument;

import ai.djl.metric.Metrics;
import ai.djl.ndarray.NDManager;
import ai.djl.training.Trainer;
import ai.djl.training.dataset.Batch;
import ai.djl.training.dataset.Dataset;
import ai.djl.training.listener.TrainingListener;
import ai.djl.translate.TranslateException;
import ai.djl.util.Progress;
import io.hyperframes.runtime.MeteredLoop;
import io.hyperframes.runtime.StepMeter;
import java.io.IOException;
import java.util.Iterator;

/**
 * A DJL {@link TrainingListener} that meters every training step into a {@link StepMeter}: the
 * same percentiles, shares and findings ({@code loader-bound}, {@code optimizer-bound},
 * {@code step-jitter}) as the DL4J side.
 *
 * <p>DJL calls a listener once per batch, after forward and backward ({@code onTrainingBatch}),
 * and {@code EasyTrain.fit} runs the optimizer and takes the next batch after that. So:
 *
 * <ul>
 *   <li>with the training set passed through {@link #metered(Dataset)}, a step runs from the
 *       request for its batch to the request for the next one: data wait (in the iterator),
 *       forward + backward (until {@code onTrainingBatch}), optimizer (the rest, including the
 *       batch's release); where the trainer has metrics ({@code trainer.setMetrics}), DJL's own
 *       {@code forward} timing splits forward from backward;
 *   <li>without it, only whole steps are seen (from one {@code onTrainingBatch} to the next) and
 *       all of a step counts as compute;
 *   <li>{@link DjlTrainer} marks every phase itself, forward separately from backward.
 * </ul>
 *
 * <p>Validation batches are not metered. One listener per training loop (not thread-safe); read
 * {@link #summary()} between steps or after training.
 */
public final class HyperFramesListener implements TrainingListener, MeteredLoop {

  private final StepMeter meter;
  private boolean metered;
  // True while a DjlTrainer records the steps itself into this listener's meter.
  private boolean driven;
  // Metered steps: when the batch was asked for, handed over, and forward + backward ended.
  private long requested;
  private long ready;
  private long computed;
  private long forward;
  private long examples;
  // Unmetered steps: the previous onTrainingBatch.
  private long last;

  /** A listener with a fresh meter. */
  public HyperFramesListener() {
    this(new StepMeter());
  }

  /** A listener recording into {@code meter}. */
  public HyperFramesListener(StepMeter meter) {
    checkArgument(meter != null, "meter: must be given");
    this.meter = meter;
  }

  @Override
  public StepMeter meter() {
    return meter;
  }

  /**
   * {@code data} with its batches timed: the time spent in its iterator's {@code hasNext} and
   * {@code next} is the data wait of the step the batch starts. Pass the training set through it
   * ({@code EasyTrain.fit(trainer, epochs, listener.metered(train), validation)}).
   */
  public Dataset metered(Dataset data) {
    checkArgument(data != null, "data: must be given");
    metered = true;
    return new Dataset() {
      @Override
      public Iterable<Batch> getData(NDManager manager) throws IOException, TranslateException {
        return timed(data.getData(manager));
      }

      @Override
      public Iterable<Batch> getData(NDManager manager,
          java.util.concurrent.ExecutorService executor) throws IOException, TranslateException {
        return timed(data.getData(manager, executor));
      }

      @Override
      public void prepare(Progress progress) throws IOException, TranslateException {
        data.prepare(progress);
      }
    };
  }

  private Iterable<Batch> timed(Iterable<Batch> batches) {
    return () -> {
      Iterator<Batch> it = batches.iterator();
      return new Iterator<>() {
        @Override
        public boolean hasNext() {
          requested();
          boolean more = it.hasNext();
          if (!more) {
            requested = 0;
          }
          return more;
        }

        @Override
        public Batch next() {
          requested();
          Batch b = it.next();
          ready = System.nanoTime();
          examples = b.getSize();
          return b;
        }
      };
    };
  }

  /** A batch is asked for: the previous step ends (its optimizer with it), the next begins. */
  private void requested() {
    long now = System.nanoTime();
    if (computed > 0) {
      meter.record(ready - requested, forward, computed - ready, now - computed,
          now - requested, examples);
      computed = 0;
      forward = 0;
      ready = 0;
      requested = 0;
    }
    if (requested == 0) {
      requested = now;
    }
  }

  /** A {@link DjlTrainer} records into this listener's meter itself while it runs. */
  void drivenBy(boolean loop) {
    this.driven = loop;
    this.last = 0;
  }

  @Override
  public void onTrainingBatch(Trainer trainer, BatchData batchData) {
    if (driven) {
      return;
    }
    long now = System.nanoTime();
    if (metered && ready > 0) {
      computed = now;
      // DJL times each forward pass itself when the trainer has metrics (trainer.setMetrics).
      Metrics m = trainer.getMetrics();
      if (m != null && m.hasMetric("forward")) {
        double nanos = m.latestMetric("forward").getValue();
        forward = (long) Math.max(0, Math.min(nanos, computed - ready));
      }
      return;
    }
    if (last > 0) {
      meter.record(0, now - last, 0, now - last, batchData.getBatch().getSize());
    }
    last = now;
  }

  @Override
  public void onValidationBatch(Trainer trainer, BatchData batchData) {
    // Validation is not a training step.
  }

  @Override
  public void onEpoch(Trainer trainer) {
    last = 0;
  }

  @Override
  public void onTrainingBegin(Trainer trainer) {
    last = 0;
  }

  @Override
  public void onTrainingEnd(Trainer trainer) {
    if (computed > 0) {
      requested();
      requested = 0;
    }
    last = 0;
  }
}
