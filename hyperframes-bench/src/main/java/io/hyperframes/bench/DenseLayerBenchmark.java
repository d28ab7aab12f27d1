package io.hyperframes.bench;

import io.hyperframes.nd4j.Activation;
import io.hyperframes.nd4j.Baselines;
import io.hyperframes.nd4j.FusedDense;
import org.nd4j.linalg.activations.IActivation;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.factory.Nd4j;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Setup;

/**
 * The fused dense layer y = act(x·W + b) + r, forward and backward, beside the ND4J code users
 * write today, in one run: x [m, k], W [k, n]. GFLOP/s = 2·m·n·k (forward) or 4·m·n·k (backward)
 * divided by the time per operation.
 *
 * <p>Run: {@code mvn -B -q package -DskipTests && java -jar hyperframes-bench/target/benchmarks.jar
 * DenseLayerBenchmark -f 1 -wi 3 -i 5 -w 1 -r 1}
 */
public class DenseLayerBenchmark extends MillisPerOperation {

  @Param({"256"})
  int m;

  @Param({"1024"})
  int n;

  @Param({"1024"})
  int k;

  @Param({"GELU_TANH"})
  Activation activation;

  private INDArray x;
  private INDArray w;
  private INDArray b;
  private INDArray r;
  private INDArray z;
  private INDArray dY;
  private FusedDense fp32;
  private FusedDense bf16;
  private IActivation nd4j;
  private INDArray dX;
  private INDArray dW;
  private INDArray db;

  @Setup
  public void setUp() {
    Nd4j.getRandom().setSeed(42);
    x = Nd4j.rand(DataType.FLOAT, m, k).subi(0.5);
    w = Nd4j.rand(DataType.FLOAT, k, n).subi(0.5).muli(0.05);
    b = Nd4j.rand(DataType.FLOAT, 1, n);
    r = Nd4j.rand(DataType.FLOAT, m, n);
    dY = Nd4j.rand(DataType.FLOAT, m, n).subi(0.5);
    fp32 = FusedDense.of(activation, FusedDense.Precision.FP32);
    bf16 = FusedDense.of(activation, FusedDense.Precision.BF16);
    z = fp32.forwardTraining(x, w, b, null).preActivation();
    nd4j = Baselines.nd4jActivation(activation);
    dX = Nd4j.create(DataType.FLOAT, m, k);
    dW = Nd4j.create(DataType.FLOAT, k, n);
    db = Nd4j.create(DataType.FLOAT, 1, n);
  }

  @Benchmark
  public INDArray forwardFusedBf16() {
    return bf16.forward(x, w, b, r);
  }

  @Benchmark
  public INDArray forwardFusedFp32() {
    return fp32.forward(x, w, b, r);
  }

  @Benchmark
  public INDArray forwardNd4jUnfusedFp32() {
    return Baselines.unfusedForward(nd4j, x, w, b, r);
  }

  @Benchmark
  public INDArray forwardNd4jXwPlusBFp32() {
    return Baselines.xwPlusBForward(nd4j, x, w, b, r);
  }

  @Benchmark
  public FusedDense.Gradients backwardFusedBf16() {
    return bf16.backward(x, w, z, dY);
  }

  /** The same backward into caller-owned outputs: what allocation costs the call above. */
  @Benchmark
  public FusedDense.Gradients backwardIntoFusedBf16() {
    return bf16.backwardInto(x, w, z, dY, dX, dW, db);
  }

  @Benchmark
  public FusedDense.Gradients backwardFusedFp32() {
    return fp32.backward(x, w, z, dY);
  }

  @Benchmark
  public INDArray[] backwardNd4jUnfusedFp32() {
    return Baselines.unfusedBackward(nd4j, x, w, z, dY);
  }
}
