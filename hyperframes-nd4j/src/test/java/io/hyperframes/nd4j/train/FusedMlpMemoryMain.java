package io.hyperframes.nd4j.train;

import io.hyperframes.nd4j.Activation;
import io.hyperframes.nd4j.FusedDense;
import org.bytedeco.javacpp.Pointer;
import org.nd4j.linalg.api.ndarray.INDArray;

/**
 * Child process of {@link FusedMlpTest}: trains 8 000 warm-up steps, then 10 000 more, and
 * prints the resident set size after each part (after the freed native buffers are released).
 * Run with a fixed, pre-touched heap so that only native memory can change the resident size.
 */
public final class FusedMlpMemoryMain {
  private FusedMlpMemoryMain() {}

  public static void main(String[] args) {
    FusedMlp net = new FusedMlp(new int[] {16, 64, 64, 4}, Activation.GELU_TANH,
        FusedDense.Precision.FP32, 1e-3, 5);
    INDArray[] data = FusedMlpTest.problem(64, 3);
    for (int i = 0; i < 8000; i++) {
      net.fit(data[0], data[1], null);
    }
    System.out.println("warm " + settledResidentBytes());
    for (int i = 0; i < 10_000; i++) {
      net.fit(data[0], data[1], null);
    }
    System.out.println("end " + settledResidentBytes());
  }

  /**
   * The resident size once released native buffers are actually freed: JavaCPP frees them when
   * the garbage collector has enqueued their references, which lags on a loaded machine; a
   * leak is memory still held after that, not memory waiting in that queue.
   */
  private static long settledResidentBytes() {
    for (int i = 0; i < 3; i++) {
      System.gc();
      Pointer.deallocateReferences();
      try {
        Thread.sleep(100);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        break;
      }
    }
    return Pointer.physicalBytes();
  }
}
