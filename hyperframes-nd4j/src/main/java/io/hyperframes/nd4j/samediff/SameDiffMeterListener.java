package io.hyperframes.nd4j.samediff;

import static com.google.common.base.Preconditions.checkArgument;

import io.hyperframes.runtime.MeteredLoop;
import io.hyperframes.runtime.StepMeter;
import org.nd4j.autodiff.listeners.At;
import org.nd4j.autodiff.listeners.BaseListener;
import org.nd4j.autodiff.listeners.ListenerResponse;
import org.nd4j.autodiff.listeners.Loss;
import org.nd4j.autodiff.listeners.Operation;
import org.nd4j.autodiff.listeners.records.LossCurve;
import org.nd4j.autodiff.samediff.SameDiff;
import org.nd4j.autodiff.samediff.internal.Variable;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.dataset.api.MultiDataSet;

/**
 * A SameDiff {@code Listener} that meters every training iteration of {@code SameDiff.fit} into a
 * {@link StepMeter}: the same percentiles, shares and findings as the DL4J and DJL sides.
 *
 * <pre>{@code
 * SameDiffMeterListener meter = new SameDiffMeterListener();
 * sd.fit(iterator, epochs, meter);          // or sd.addListeners(meter) once
 * meter.summary();
 * }</pre>
 *
 * <p>SameDiff's training session calls {@code iterationStart} once the batch is in hand,
 * {@code preUpdate} for each trainable variable once forward and backward are done, and
 * {@code iterationDone} after the updater; between one {@code iterationDone} and the next
 * {@code iterationStart} it only takes the next batch from the iterator. So a step's data wait
 * is the time from the previous iteration's end (or the epoch's start), forward + backward runs
 * to the first {@code preUpdate}, and the optimizer to {@code iterationDone}: no iterator
 * wrapping needed. Inference and evaluation are not metered. One listener per training loop.
 */
public final class SameDiffMeterListener extends BaseListener implements MeteredLoop {

  private final StepMeter meter;
  private long previousEnd;
  private long start;
  private long computed;

  /** A listener with a fresh meter. */
  public SameDiffMeterListener() {
    this(new StepMeter());
  }

  /** A listener recording into {@code meter}. */
  public SameDiffMeterListener(StepMeter meter) {
    checkArgument(meter != null, "meter: must be given");
    this.meter = meter;
  }

  @Override
  public StepMeter meter() {
    return meter;
  }

  @Override
  public boolean isActive(Operation operation) {
    return operation == Operation.TRAINING;
  }

  @Override
  public void epochStart(SameDiff sd, At at) {
    previousEnd = System.nanoTime();
  }

  @Override
  public ListenerResponse epochEnd(SameDiff sd, At at, LossCurve lossCurve, long epochTimeMillis) {
    previousEnd = 0;
    return ListenerResponse.CONTINUE;
  }

  @Override
  public void iterationStart(SameDiff sd, At at, MultiDataSet data, long etlTimeMs) {
    start = System.nanoTime();
    computed = 0;
    if (previousEnd == 0) {
      // No epoch start seen (a listener added mid-epoch): take SameDiff's own ETL figure.
      previousEnd = start - etlTimeMs * 1_000_000L;
    }
  }

  @Override
  public void preUpdate(SameDiff sd, At at, Variable v, INDArray update) {
    if (computed == 0) {
      computed = System.nanoTime();
    }
  }

  @Override
  public void iterationDone(SameDiff sd, At at, MultiDataSet data, Loss loss) {
    long end = System.nanoTime();
    long c = computed > 0 ? computed : end;
    long examples = data != null && data.numFeatureArrays() > 0
        ? data.getFeatures(0).size(0) : 0;
    long dataWait = Math.max(0, start - previousEnd);
    meter.record(dataWait, c - start, end - c, dataWait + (end - start), examples);
    previousEnd = end;
  }
}
