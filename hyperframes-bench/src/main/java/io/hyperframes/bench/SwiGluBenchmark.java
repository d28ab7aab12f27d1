package io.hyperframes.bench;

import io.hyperframes.nd4j.Activation;
import io.hyperframes.nd4j.FusedDense;
import io.hyperframes.nd4j.SwiGlu;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.memory.MemoryWorkspace;
import org.nd4j.linalg.api.memory.conf.WorkspaceConfiguration;
import org.nd4j.linalg.api.memory.enums.AllocationPolicy;
import org.nd4j.linalg.api.memory.enums.LearningPolicy;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.factory.Nd4j;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Setup;

/**
 * The SwiGLU gate of one transformer layer ({@link SwiGlu}), forward and backward with a BF16
 * gradient, the two ways a training step can run it, side by side: {@code recomputing} (the
 * forward pass, then the backward pass that recomputes silu(a) and returns FP32, converted to
 * BF16 by one oneDNN reorder) and {@code keeping} ({@code forwardTraining}, whose silu(a) the
 * backward pass reads, writing BF16 itself). Both run in a reused ND4J workspace, as the
 * training step does. The default shape is {@code bench transformer}'s layer: T = 4 × 512 rows,
 * f = 1 536.
 *
 * <p>Run: {@code java -jar hyperframes-bench/target/benchmarks.jar SwiGluBenchmark}.
 */
public class SwiGluBenchmark extends MillisPerOperation {

  @Param({"2048"})
  int rows;

  @Param({"1536"})
  int feedForward;

  private INDArray gateUp;
  private INDArray dOut;
  private FusedDense converter;

  private static final WorkspaceConfiguration WORKSPACE = WorkspaceConfiguration.builder()
      .policyAllocation(AllocationPolicy.STRICT).policyLearning(LearningPolicy.FIRST_LOOP)
      .build();

  @Setup
  public void setUp() {
    Nd4j.getRandom().setSeed(13);
    gateUp = Nd4j.randn(DataType.FLOAT, rows, 2L * feedForward);
    dOut = Nd4j.randn(DataType.FLOAT, rows, feedForward);
    converter = FusedDense.of(Activation.IDENTITY, FusedDense.Precision.BF16);
  }

  @Benchmark
  public double recomputing() {
    try (MemoryWorkspace ws = Nd4j.getWorkspaceManager().getAndActivateWorkspace(WORKSPACE,
        "swiglu-bench-recomputing")) {
      INDArray out = SwiGlu.forward(gateUp, DataType.BFLOAT16);
      INDArray grad = SwiGlu.backward(dOut, gateUp);
      INDArray bf16 = converter.toCompute(grad, Nd4j.createUninitialized(DataType.BFLOAT16,
          rows, 2L * feedForward));
      return out.getDouble(0) + bf16.getDouble(0);
    }
  }

  @Benchmark
  public double keeping() {
    try (MemoryWorkspace ws = Nd4j.getWorkspaceManager().getAndActivateWorkspace(WORKSPACE,
        "swiglu-bench-keeping")) {
      SwiGlu.Forward forward = SwiGlu.forwardTraining(gateUp, DataType.BFLOAT16);
      INDArray grad = SwiGlu.backward(dOut, gateUp, forward, DataType.BFLOAT16);
      return forward.out().getDouble(0) + grad.getDouble(0);
    }
  }
}
