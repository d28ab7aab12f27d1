package io.hyperframes.nd4j.train;

import static com.google.common.base.Preconditions.checkArgument;

import java.util.List;
import java.util.Map;
import org.deeplearning4j.nn.api.Model;
import org.deeplearning4j.optimize.api.BaseTrainingListener;
import org.nd4j.linalg.api.ndarray.INDArray;

/**
 * Feeds a {@link StepMeter} from DL4J's training callbacks: data wait from the end of one
 * iteration to the start of the next forward pass, compute from there to the end of the backward
 * pass, optimizer from there to the end of the iteration.
 */
public final class StepMeterListener extends BaseTrainingListener {
  private final StepMeter meter;
  private long iterationEnd;
  private long forwardStart;
  private long backwardEnd;

  public StepMeterListener(StepMeter meter) {
    checkArgument(meter != null, "meter: must be given");
    this.meter = meter;
  }

  public StepMeter meter() {
    return meter;
  }

  @Override
  public void onEpochStart(Model model) {
    iterationEnd = System.nanoTime();
  }

  @Override
  public void onForwardPass(Model model, List<INDArray> activations) {
    markForward();
  }

  @Override
  public void onForwardPass(Model model, Map<String, INDArray> activations) {
    markForward();
  }

  private void markForward() {
    if (forwardStart == 0) {
      forwardStart = System.nanoTime();
    }
  }

  @Override
  public void onBackwardPass(Model model) {
    backwardEnd = System.nanoTime();
  }

  @Override
  public void iterationDone(Model model, int iteration, int epoch) {
    long now = System.nanoTime();
    long start = iterationEnd > 0 ? iterationEnd : (forwardStart > 0 ? forwardStart : now);
    long f = forwardStart > 0 ? forwardStart : start;
    long b = backwardEnd > 0 ? backwardEnd : now;
    meter.record(Math.max(0, f - start), Math.max(0, b - f), Math.max(0, now - b),
        Math.max(0, now - start), model.batchSize());
    iterationEnd = now;
    forwardStart = 0;
    backwardEnd = 0;
  }
}
