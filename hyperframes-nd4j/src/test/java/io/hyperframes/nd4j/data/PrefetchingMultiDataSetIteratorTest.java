package io.hyperframes.nd4j.data;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.hyperframes.runtime.BatchSource;
import org.junit.jupiter.api.Test;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.dataset.api.MultiDataSet;
import org.nd4j.linalg.dataset.api.MultiDataSetPreProcessor;
import org.nd4j.linalg.factory.Nd4j;

/** The ComputationGraph form: every batch once, in order, pre-processed on the workers. */
class PrefetchingMultiDataSetIteratorTest {

  private static BatchSource<MultiDataSet> source(int batches) {
    return new BatchSource<>() {
      @Override
      public int batches() {
        return batches;
      }

      @Override
      public MultiDataSet batch(int epoch, int index) {
        return new org.nd4j.linalg.dataset.MultiDataSet(
            Nd4j.valueArrayOf(new long[] {2, 3}, index, DataType.FLOAT),
            Nd4j.zeros(DataType.FLOAT, 2, 1));
      }
    };
  }

  @Test
  void deliversEveryBatchOnceInOrderPreProcessedAndResets() {
    try (PrefetchingMultiDataSetIterator it = new PrefetchingMultiDataSetIterator(source(12), 3,
        4)) {
      MultiDataSetPreProcessor plusOne = ds -> ds.getFeatures(0).addi(1000);
      it.setPreProcessor(plusOne);
      assertSame(plusOne, it.getPreProcessor());
      for (int epoch = 0; epoch < 2; epoch++) {
        int i = 0;
        while (it.hasNext()) {
          MultiDataSet ds = it.next(7);
          assertEquals(1000 + i, ds.getFeatures(0).getInt(0, 0));
          assertFalse(ds.getFeatures(0).isAttached());
          i++;
        }
        assertEquals(12, i);
        it.reset();
      }
      assertFalse(it.asyncSupported());
      assertTrue(it.resetSupported());
    }
  }

  @Test
  void badArgumentsAreNamed() {
    assertTrue(assertThrows(IllegalArgumentException.class,
        () -> new PrefetchingMultiDataSetIterator(null, 1, 1)).getMessage().startsWith("source"));
    try (PrefetchingMultiDataSetIterator it = new PrefetchingMultiDataSetIterator(source(1), 1,
        1)) {
      assertTrue(assertThrows(IllegalArgumentException.class, () -> it.next(0)).getMessage()
          .startsWith("num"));
    }
  }
}
