package io.hyperframes.bench;

import io.hyperframes.nd4j.Matmul;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.factory.Nd4j;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Square matmul size³ into FP32: HyperFrames (oneDNN) in BF16 and FP32 beside ND4J's
 * {@code INDArray.mmul} in FP32 and BF16, in one run. GFLOP/s = 2·size³ / time.
 *
 * <p>Run: {@code java -jar hyperframes-bench/target/benchmarks.jar MatmulBenchmark -f 1 -wi 2 -i 3
 * -w 1 -r 1} (ND4J's BF16 mmul takes seconds per call at 1024³).
 */
@Warmup(iterations = 2, time = 1)
@Measurement(iterations = 3, time = 1)
public class MatmulBenchmark extends MillisPerOperation {

  @Param({"1024"})
  int size;

  private INDArray a32;
  private INDArray b32;
  private INDArray a16;
  private INDArray b16;
  private INDArray c;

  @Setup
  public void setUp() {
    Nd4j.getRandom().setSeed(7);
    a32 = Nd4j.rand(DataType.FLOAT, size, size);
    b32 = Nd4j.rand(DataType.FLOAT, size, size);
    a16 = a32.castTo(DataType.BFLOAT16);
    b16 = b32.castTo(DataType.BFLOAT16);
    c = Nd4j.create(DataType.FLOAT, size, size);
  }

  @Benchmark
  public INDArray hyperframesBf16() {
    Matmul.gemm(a16, false, b16, false, c, 1f, 0f);
    return c;
  }

  @Benchmark
  public INDArray hyperframesFp32() {
    Matmul.gemm(a32, false, b32, false, c, 1f, 0f);
    return c;
  }

  @Benchmark
  public INDArray nd4jFp32Mmul() {
    return a32.mmul(b32);
  }

  @Benchmark
  public INDArray nd4jBf16Mmul() {
    return a16.mmul(b16);
  }
}
