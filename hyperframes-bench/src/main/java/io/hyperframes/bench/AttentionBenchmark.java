package io.hyperframes.bench;

import io.hyperframes.nd4j.CausalAttention;
import io.hyperframes.nd4j.Matmul;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.factory.Nd4j;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Setup;

/**
 * Causal attention of one head ({@link CausalAttention}), forward and forward plus backward, in
 * BF16 and FP32, beside this machine's limit measured in the same run: a BF16 and an FP32 matmul
 * of the attention's tile shape chained over as many tile pairs as the causal pass computes
 * ({@code matmulLimit...}, the products alone, no softmax). Work: the forward pass computes
 * about T²/2 scores, 2·T²·d FLOP in its two products; the backward pass five products, 5·T²·d.
 * GFLOP/s = work / time; the fraction of the limit is the attention's GFLOP/s over the matmul's.
 *
 * <p>Run: {@code java -jar hyperframes-bench/target/benchmarks.jar AttentionBenchmark -t 1}
 * (one thread: an instance owns its tile buffers).
 */
public class AttentionBenchmark extends MillisPerOperation {

  @Param({"512", "2048"})
  int sequence;

  @Param({"64"})
  int headDim;

  private INDArray q32;
  private INDArray k32;
  private INDArray v32;
  private INDArray q16;
  private INDArray k16;
  private INDArray v16;
  private INDArray dOut;
  private INDArray tileA16;
  private INDArray tileB16;
  private INDArray tileA32;
  private INDArray tileB32;
  private INDArray tileC;
  private int pairs;
  private CausalAttention attention;
  private double scale;

  @Setup
  public void setUp() {
    Nd4j.getRandom().setSeed(11);
    q32 = Nd4j.randn(DataType.FLOAT, sequence, headDim);
    k32 = Nd4j.randn(DataType.FLOAT, sequence, headDim);
    v32 = Nd4j.randn(DataType.FLOAT, sequence, headDim);
    q16 = q32.castTo(DataType.BFLOAT16);
    k16 = k32.castTo(DataType.BFLOAT16);
    v16 = v32.castTo(DataType.BFLOAT16);
    dOut = Nd4j.randn(DataType.FLOAT, sequence, headDim);
    attention = new CausalAttention();
    int tile = attention.tile();
    int tiles = (sequence + tile - 1) / tile;
    pairs = tiles * (tiles + 1) / 2;
    tileA16 = Nd4j.randn(DataType.FLOAT, tile, headDim).castTo(DataType.BFLOAT16);
    tileB16 = Nd4j.randn(DataType.FLOAT, tile, headDim).castTo(DataType.BFLOAT16);
    tileA32 = tileA16.castTo(DataType.FLOAT);
    tileB32 = tileB16.castTo(DataType.FLOAT);
    tileC = Nd4j.create(DataType.FLOAT, tile, tile);
    scale = 1 / Math.sqrt(headDim);
  }

  @Benchmark
  public CausalAttention.Forward forwardBf16() {
    return attention.forward(q16, k16, v16, scale);
  }

  @Benchmark
  public CausalAttention.Gradients forwardBackwardBf16() {
    return attention.backward(q16, k16, v16, attention.forward(q16, k16, v16, scale), dOut,
        scale);
  }

  @Benchmark
  public CausalAttention.Forward forwardFp32() {
    return attention.forward(q32, k32, v32, scale);
  }

  /** The forward pass's products alone: two tile × tile × d matmuls per causal tile pair. */
  @Benchmark
  public INDArray matmulLimitBf16() {
    for (int p = 0; p < 2 * pairs; p++) {
      Matmul.gemm(tileA16, false, tileB16, true, tileC, 1f, 0f);
    }
    return tileC;
  }

  /** As {@link #matmulLimitBf16()} in FP32. */
  @Benchmark
  public INDArray matmulLimitFp32() {
    for (int p = 0; p < 2 * pairs; p++) {
      Matmul.gemm(tileA32, false, tileB32, true, tileC, 1f, 0f);
    }
    return tileC;
  }
}
