package io.hyperframes.bench;

import io.hyperframes.nd4j.compress.Encoded;
import io.hyperframes.nd4j.compress.GradientCodec;
import java.util.SplittableRandom;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.factory.Nd4j;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Setup;

/**
 * One encode and one decode (into a dense sum) of a gradient of {@code elements} FP32 values
 * (5 824 522: the example MLP 784-2048-2048-10) per codec, on one thread; "none" is the
 * uncompressed copy, the baseline. GB/s of FP32 gradient = 4 · elements / time.
 *
 * <p>Run: {@code mvn -B -q package -DskipTests && java -jar hyperframes-bench/target/benchmarks.jar
 * CompressionBenchmark -f 1 -wi 3 -i 5 -w 1 -r 1}
 */
public class CompressionBenchmark extends MillisPerOperation {

  @Param({"none", "topk-0.01-ef", "randomk-0.01-ef", "int8", "sign-ef", "bf16",
      "dl4j-threshold"})
  String codec;

  @Param({"5824522"})
  int elements;

  private GradientCodec coder;
  private INDArray gradient;
  private INDArray sum;

  @Setup
  public void setUp() {
    SplittableRandom r = new SplittableRandom(11);
    float[] g = new float[elements];
    for (int i = 0; i < elements; i++) {
      g[i] = (float) (r.nextGaussian() * 1e-3);
    }
    gradient = Nd4j.createFromArray(g);
    sum = Nd4j.zeros(DataType.FLOAT, elements);
    coder = GradientCodec.named(codec);
  }

  @Benchmark
  public Encoded encodeDecode() {
    Encoded m = coder.encode(gradient);
    coder.decodeAdd(m, sum);
    return m;
  }
}
