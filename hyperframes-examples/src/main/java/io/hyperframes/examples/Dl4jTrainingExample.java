package io.hyperframes.examples;

import io.hyperframes.nd4j.FusedDense;
import io.hyperframes.nd4j.dl4j.Dl4jAdapter;
import io.hyperframes.nd4j.train.Trainer;
import io.hyperframes.runtime.StepMeter;
import java.util.Locale;
import org.deeplearning4j.nn.conf.MultiLayerConfiguration;
import org.deeplearning4j.nn.conf.NeuralNetConfiguration;
import org.deeplearning4j.nn.conf.layers.DenseLayer;
import org.deeplearning4j.nn.conf.layers.OutputLayer;
import org.deeplearning4j.nn.multilayer.MultiLayerNetwork;
import org.nd4j.linalg.activations.Activation;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.factory.Nd4j;
import org.nd4j.linalg.learning.config.Adam;
import org.nd4j.linalg.lossfunctions.LossFunctions.LossFunction;

/**
 * An existing DL4J {@code MultiLayerNetwork} loop, then the same network through
 * {@link Trainer} (metering, the non-finite guard, asynchronous checkpoints), then with its dense
 * layers swapped for fused BF16 ones by {@link Dl4jAdapter}: the task and MLP of
 * {@link DjlTrainingExample}. Run: {@code java -cp hyperframes-examples/target/hyperframes.jar
 * io.hyperframes.examples.Dl4jTrainingExample}.
 */
public final class Dl4jTrainingExample {

  private Dl4jTrainingExample() {}

  /**
   * What the three runs reached.
   *
   * @param plainAccuracy test accuracy after DL4J's own fit
   * @param trainerAccuracy after {@link Trainer} on the same network and batches
   * @param acceleratedAccuracy after {@link Trainer} on the BF16 fused configuration
   * @param summary the Trainer run's step meter
   */
  public record Outcome(double plainAccuracy, double trainerAccuracy, double acceleratedAccuracy,
      StepMeter.Summary summary) {}

  /** Trains three ways on {@code samples} rows for {@code epochs} epochs at batch {@code batch}. */
  public static Outcome run(int samples, int epochs, int batch) {
    float[][] train = DjlTrainingExample.rows(samples, 1);
    float[][] test = DjlTrainingExample.rows(4096, 2);
    var source = SameDiffTrainingExample.batches(train, batch);

    // Before: the user's loop as it is.
    MultiLayerNetwork plain = new MultiLayerNetwork(configuration());
    plain.init();
    plain.fit(SameDiffTrainingExample.iterator(source, batch), epochs);

    // After: the same network and batches through the Trainer.
    MultiLayerNetwork metered = new MultiLayerNetwork(configuration());
    metered.init();
    Trainer.Result r = Trainer.train(metered)
        .data(SameDiffTrainingExample.iterator(source, batch)).epochs(epochs).fit();

    // And with the dense layers fused (BF16 matmuls, FP32 accumulation).
    MultiLayerNetwork fused = new MultiLayerNetwork(
        Dl4jAdapter.accelerate(configuration(), FusedDense.Precision.BF16).configuration());
    fused.init();
    Trainer.train(fused).data(SameDiffTrainingExample.iterator(source, batch)).epochs(epochs)
        .fit();
    return new Outcome(accuracy(plain, test), accuracy(metered, test), accuracy(fused, test),
        r.summary());
  }

  /** Prints the three accuracies and the Trainer run's summary. */
  public static void main(String[] args) {
    Outcome o = run(16384, 3, 256);
    System.out.printf(Locale.ROOT, "DL4J fit              accuracy %.2f %%%n",
        100 * o.plainAccuracy());
    System.out.printf(Locale.ROOT, "Trainer               accuracy %.2f %%, %s%n",
        100 * o.trainerAccuracy(), o.summary().line());
    System.out.printf(Locale.ROOT, "Trainer, fused BF16   accuracy %.2f %%%n",
        100 * o.acceleratedAccuracy());
  }

  /** The example MLP as a DL4J configuration (fixed seed, Adam 1e-3). */
  public static MultiLayerConfiguration configuration() {
    return new NeuralNetConfiguration.Builder().seed(7).updater(new Adam(1e-3))
        .dataType(DataType.FLOAT).list()
        .layer(new DenseLayer.Builder().nIn(DjlTrainingExample.FEATURES).nOut(256)
            .activation(Activation.RELU).build())
        .layer(new DenseLayer.Builder().nIn(256).nOut(256).activation(Activation.RELU).build())
        .layer(new OutputLayer.Builder(LossFunction.MCXENT).nIn(256)
            .nOut(DjlTrainingExample.CLASSES).activation(Activation.SOFTMAX).build())
        .build();
  }

  static double accuracy(MultiLayerNetwork net, float[][] rows) {
    int n = rows[1].length;
    INDArray x = Nd4j.create(rows[0], new long[] {n, DjlTrainingExample.FEATURES},
        DataType.FLOAT);
    long[] p = net.output(x).argMax(1).toLongVector();
    return DjlTrainingExample.share(p, rows[1]);
  }
}
