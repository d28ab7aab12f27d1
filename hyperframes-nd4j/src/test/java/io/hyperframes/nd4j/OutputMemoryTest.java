package io.hyperframes.nd4j;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.factory.Nd4j;

/** Returned arrays stay the caller's while reachable; their memory is reused only after. */
class OutputMemoryTest {

  /** Waits for the collector to find dropped arrays and the cleaner to return their memory. */
  private static void collect(OutputMemory pool, long reusedBefore, int rows, int cols)
      throws InterruptedException {
    for (int i = 0; i < 50; i++) {
      System.gc();
      Thread.sleep(20);
      pool.allocate(rows, cols);
      if (pool.reused() > reusedBefore) {
        return;
      }
    }
  }

  @Test
  void heldArraysAreNeverHandedOutAgainEvenPastTheCollectionThreshold() {
    OutputMemory pool = new OutputMemory();
    int rows = 1024;
    int cols = 1024;
    long held = OutputMemory.MAX_OUTSTANDING_BYTES / (4L * rows * cols) + 16;
    List<INDArray> arrays = new ArrayList<>();
    for (int i = 0; i < held; i++) {
      INDArray a = pool.allocate(rows, cols);
      a.assign(i);
      arrays.add(a);
    }
    // Allocations past the threshold asked for a collection; nothing held may have come back.
    for (int i = 0; i < held; i++) {
      INDArray a = arrays.get(i);
      assertEquals(i, a.getFloat(0, 0), 0f, "array " + i + " was overwritten");
      assertEquals(i, a.getFloat(rows - 1, cols - 1), 0f, "array " + i + " was overwritten");
    }
    assertEquals(0, pool.reused(), "memory of held arrays was handed out again");
  }

  @Test
  void aViewKeepsItsParentsMemoryAndDroppedArraysAreReused() throws InterruptedException {
    OutputMemory pool = new OutputMemory();
    INDArray parent = pool.allocate(64, 256);
    parent.assign(7f);
    INDArray row = parent.getRow(3);
    parent = null;
    collect(pool, 0, 8, 8); // a different size: the view's block cannot serve it anyway
    List<INDArray> later = new ArrayList<>();
    for (int i = 0; i < 200; i++) {
      INDArray a = pool.allocate(64, 256);
      a.assign(-i);
      later.add(a);
    }
    assertEquals(256, row.length());
    for (int j = 0; j < 256; j++) {
      assertEquals(7f, row.getFloat(j), 0f, "a view's memory was reused while it was held");
    }
    long before = pool.reused();
    later.clear();
    collect(pool, before, 64, 256);
    assertTrue(pool.reused() > before, "dropped arrays' memory was never reused");
  }

  @Test
  void kernelOutputsOfEarlierCallsKeepTheirValues() {
    FusedDense layer = FusedDense.of(Activation.RELU, FusedDense.Precision.FP32);
    INDArray w = Nd4j.rand(DataType.FLOAT, 128, 96);
    List<INDArray> outputs = new ArrayList<>();
    List<INDArray> copies = new ArrayList<>();
    for (int i = 0; i < 40; i++) {
      INDArray x = Nd4j.rand(DataType.FLOAT, 32, 128);
      INDArray y = layer.forward(x, w, null, null);
      outputs.add(y);
      copies.add(y.dup());
      System.gc(); // whatever is unreachable may be reused now; what is held may not
    }
    for (int i = 0; i < outputs.size(); i++) {
      assertEquals(copies.get(i), outputs.get(i), "output " + i + " changed after later calls");
    }
  }
}
