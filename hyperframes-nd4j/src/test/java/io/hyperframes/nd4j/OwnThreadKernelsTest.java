package io.hyperframes.nd4j;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.factory.Nd4j;
import org.nd4j.nativeblas.NativeOps;
import org.nd4j.nativeblas.NativeOpsHolder;

/**
 * {@link Kernels#onThisThreadOnly}: inside it the thread's OpenMP count is 1 and restored after,
 * even when the body fails; products are those computed outside it; several threads running the
 * same shape at once each get the right result (their own plans); a missing body is named.
 */
class OwnThreadKernelsTest {

  private static NativeOps ops() {
    Nd4j.create(1);
    return NativeOpsHolder.getInstance().getDeviceNativeOps();
  }

  @Test
  void theThreadCountIsOneInsideAndRestoredAfter() {
    Assumptions.assumeTrue(Kernels.cpu().accelerated(), "oneDNN did not load: "
        + Kernels.cpu().fallbackReason());
    NativeOps ops = ops();
    int before = ops.ompGetMaxThreads();
    int inside = Kernels.cpu().onThisThreadOnly(ops::ompGetMaxThreads);
    assertEquals(1, inside);
    assertEquals(before, ops.ompGetMaxThreads());
    assertThrows(IllegalStateException.class, () -> Kernels.cpu().onThisThreadOnly(() -> {
      throw new IllegalStateException("body failed");
    }));
    assertEquals(before, ops.ompGetMaxThreads(), "restored after a failure");
    assertEquals(7, Kernels.cpu().onThisThreadOnly(() -> Kernels.cpu().onThisThreadOnly(
        () -> 7)), "nested calls run the body");
  }

  @Test
  void productsOnOwnThreadsAreThoseOfTheSharedKernels() throws Exception {
    Assumptions.assumeTrue(Kernels.cpu().accelerated(), "oneDNN did not load");
    Nd4j.getRandom().setSeed(3);
    INDArray a = Nd4j.randn(DataType.FLOAT, 96, 64).castTo(DataType.BFLOAT16);
    INDArray b = Nd4j.randn(DataType.FLOAT, 64, 80).castTo(DataType.BFLOAT16);
    INDArray shared = Matmul.multiply(a, b);
    ExecutorService pool = Executors.newFixedThreadPool(3);
    try {
      List<Future<INDArray>> results = new ArrayList<>();
      for (int t = 0; t < 3; t++) {
        results.add(pool.submit(() -> Kernels.cpu().onThisThreadOnly(() -> {
          INDArray last = null;
          for (int i = 0; i < 50; i++) {
            last = Matmul.multiply(a, b);
          }
          return last;
        })));
      }
      for (Future<INDArray> r : results) {
        INDArray c = r.get();
        assertTrue(shared.equalsWithEps(c, 1e-6), "own-thread product differs");
      }
    } finally {
      pool.shutdownNow();
    }
  }

  @Test
  void aMissingBodyIsNamed() {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> Kernels.cpu().onThisThreadOnly(null));
    assertTrue(e.getMessage().startsWith("body:"), e.getMessage());
  }
}
