package io.hyperframes.bench;

import io.hyperframes.nd4j.train.FusedAdam;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.factory.Nd4j;
import org.nd4j.linalg.learning.GradientUpdater;
import org.nd4j.linalg.learning.config.Adam;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Setup;

/**
 * One Adam step on a parameter array of {@code rows × cols} FP32 values: {@link FusedAdam}
 * (one vectorised pass over Java arrays, plus copying the gradient in and the weights out)
 * beside ND4J's native Adam updater followed by the weight subtraction, as {@code FusedMlp} and
 * DL4J used it.
 *
 * <p>Run: {@code mvn -B -q package -DskipTests && java -jar hyperframes-bench/target/benchmarks.jar
 * OptimizerBenchmark -f 1 -wi 3 -i 5 -w 1 -r 1}
 */
public class OptimizerBenchmark extends MillisPerOperation {

  @Param({"2048"})
  int rows;

  @Param({"2048"})
  int cols;

  private INDArray fusedWeights;
  private INDArray nd4jWeights;
  private INDArray gradient;
  private INDArray scratch;
  private FusedAdam fused;
  private GradientUpdater<?> nd4j;
  private int step;

  @Setup
  public void setUp() {
    Nd4j.getRandom().setSeed(42);
    fusedWeights = Nd4j.randn(DataType.FLOAT, rows, cols);
    nd4jWeights = fusedWeights.dup();
    gradient = Nd4j.randn(DataType.FLOAT, rows, cols).muli(1e-3);
    scratch = gradient.dup();
    fused = FusedAdam.of(fusedWeights, 1e-3);
    Adam adam = new Adam(1e-3);
    nd4j = adam.instantiate(Nd4j.zeros(DataType.FLOAT, 1, adam.stateSize(rows * (long) cols)),
        true);
  }

  @Benchmark
  public INDArray fusedAdam() {
    fused.update(gradient);
    return fusedWeights;
  }

  @Benchmark
  public INDArray nd4jAdamThenSubtract() {
    scratch.assign(gradient); // the updater overwrites its input with the update
    nd4j.applyUpdater(scratch, step++, 0);
    return nd4jWeights.subi(scratch);
  }
}
