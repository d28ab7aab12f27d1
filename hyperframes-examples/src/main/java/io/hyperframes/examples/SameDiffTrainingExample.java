package io.hyperframes.examples;

import io.hyperframes.nd4j.data.PrefetchingDataSetIterator;
import io.hyperframes.nd4j.samediff.SameDiffMeterListener;
import io.hyperframes.runtime.BatchSource;
import io.hyperframes.runtime.StepMeter;
import java.util.Locale;
import java.util.Map;
import org.nd4j.autodiff.samediff.SDVariable;
import org.nd4j.autodiff.samediff.SameDiff;
import org.nd4j.autodiff.samediff.TrainingConfig;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.dataset.DataSet;
import org.nd4j.linalg.dataset.api.iterator.DataSetIterator;
import org.nd4j.linalg.factory.Nd4j;
import org.nd4j.linalg.learning.config.Adam;
import org.nd4j.weightinit.impl.XavierInitScheme;

/**
 * An existing {@code SameDiff.fit} loop, then the same loop with HyperFrames: the example's MLP
 * (128-256-256-10, the task of {@link DjlTrainingExample}) in SameDiff, trained once over DL4J's
 * in-memory iterator and once over a {@link PrefetchingDataSetIterator} (two workers) with a
 * {@link SameDiffMeterListener}. Same initial weights and batch order, so the same accuracy.
 * Run: {@code java -cp hyperframes-examples/target/hyperframes.jar
 * io.hyperframes.examples.SameDiffTrainingExample}.
 */
public final class SameDiffTrainingExample {

  private SameDiffTrainingExample() {}

  /**
   * What the two runs reached.
   *
   * @param plainAccuracy test accuracy after plain SameDiff.fit
   * @param wrappedAccuracy test accuracy after fit with the prefetcher and the listener
   * @param summary the wrapped run's step meter
   */
  public record Outcome(double plainAccuracy, double wrappedAccuracy, StepMeter.Summary summary) {}

  /** Trains both ways on {@code samples} rows for {@code epochs} epochs at batch {@code batch}. */
  public static Outcome run(int samples, int epochs, int batch) {
    float[][] train = DjlTrainingExample.rows(samples, 1);
    float[][] test = DjlTrainingExample.rows(4096, 2);
    BatchSource<DataSet> source = batches(train, batch);

    // Before: the user's loop as it is.
    SameDiff plain = mlp(7);
    plain.fit(iterator(source, batch), epochs);

    // After: the same graph; the iterator prefetches, the listener meters.
    SameDiff wrapped = mlp(7);
    SameDiffMeterListener meter = new SameDiffMeterListener();
    try (PrefetchingDataSetIterator it = PrefetchingDataSetIterator.builder(source).workers(2)
        .depth(8).batchSize(batch).inputColumns(DjlTrainingExample.FEATURES)
        .totalOutcomes(DjlTrainingExample.CLASSES).build()) {
      wrapped.fit(it, epochs, meter);
    }
    return new Outcome(accuracy(plain, test), accuracy(wrapped, test), meter.summary());
  }

  /** Prints both accuracies and the wrapped run's summary. */
  public static void main(String[] args) {
    Outcome o = run(16384, 3, 256);
    System.out.printf(Locale.ROOT, "SameDiff.fit                         accuracy %.2f %%%n",
        100 * o.plainAccuracy());
    System.out.printf(Locale.ROOT, "SameDiff.fit, prefetched and metered accuracy %.2f %%, %s%n",
        100 * o.wrappedAccuracy(), o.summary().line());
    o.summary().findings().forEach(f -> System.out.println("  " + f.id() + ": " + f.title()));
  }

  /** The example MLP as a SameDiff graph, Xavier weights from {@code seed}, Adam 1e-3. */
  public static SameDiff mlp(long seed) {
    int in = DjlTrainingExample.FEATURES;
    int out = DjlTrainingExample.CLASSES;
    int hidden = 256;
    Nd4j.getRandom().setSeed(seed);
    SameDiff sd = SameDiff.create();
    SDVariable x = sd.placeHolder("input", DataType.FLOAT, -1, in);
    SDVariable y = sd.placeHolder("label", DataType.FLOAT, -1, out);
    SDVariable h = x;
    int width = in;
    for (int l = 0; l < 2; l++) {
      SDVariable w = sd.var("w" + l, new XavierInitScheme('c', width, hidden), DataType.FLOAT,
          width, hidden);
      SDVariable b = sd.zero("b" + l, DataType.FLOAT, 1, hidden);
      h = sd.nn.relu(h.mmul(w).add(b), 0);
      width = hidden;
    }
    SDVariable w = sd.var("w2", new XavierInitScheme('c', hidden, out), DataType.FLOAT, hidden,
        out);
    SDVariable b = sd.zero("b2", DataType.FLOAT, 1, out);
    SDVariable logits = h.mmul(w).add(b);
    sd.nn.softmax("out", logits);
    sd.loss.softmaxCrossEntropy("loss", y, logits, null);
    sd.setLossVariables("loss");
    sd.setTrainingConfig(TrainingConfig.builder().updater(new Adam(1e-3))
        .dataSetFeatureMapping("input").dataSetLabelMapping("label").build());
    return sd;
  }

  /** The rows as batches of {@code batch} in order, one-hot labels, built on request. */
  public static BatchSource<DataSet> batches(float[][] rows, int batch) {
    int f = DjlTrainingExample.FEATURES;
    int n = rows[1].length / batch;
    return new BatchSource<>() {
      @Override
      public int batches() {
        return n;
      }

      @Override
      public DataSet batch(int epoch, int index) {
        float[] x = java.util.Arrays.copyOfRange(rows[0], index * batch * f,
            (index + 1) * batch * f);
        float[] y = new float[batch * DjlTrainingExample.CLASSES];
        for (int r = 0; r < batch; r++) {
          y[r * DjlTrainingExample.CLASSES + (int) rows[1][index * batch + r]] = 1f;
        }
        return new DataSet(Nd4j.create(x, new long[] {batch, f}, DataType.FLOAT),
            Nd4j.create(y, new long[] {batch, DjlTrainingExample.CLASSES}, DataType.FLOAT));
      }
    };
  }

  /** DL4J's plain iterator over the same batches, built on the consumer's thread. */
  public static DataSetIterator iterator(BatchSource<DataSet> source, int batch) {
    java.util.List<DataSet> all = new java.util.ArrayList<>();
    for (int i = 0; i < source.batches(); i++) {
      try {
        all.add(source.batch(0, i));
      } catch (Exception e) {
        throw new IllegalStateException(e);
      }
    }
    return new org.deeplearning4j.datasets.iterator.utilty.ListDataSetIterator<>(all, 1);
  }

  /** Share of {@code rows} the graph classifies right. */
  public static double accuracy(SameDiff sd, float[][] rows) {
    int n = rows[1].length;
    INDArray x = Nd4j.create(rows[0], new long[] {n, DjlTrainingExample.FEATURES},
        DataType.FLOAT);
    INDArray out = sd.output(Map.of("input", x), "out").get("out");
    long[] p = out.argMax(1).toLongVector();
    return DjlTrainingExample.share(p, rows[1]);
  }
}
