package io.hyperframes.nd4j.data;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.hyperframes.runtime.BatchSource;
import io.hyperframes.runtime.PrefetchException;
import java.io.IOException;
import org.junit.jupiter.api.Test;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.dataset.DataSet;
import org.nd4j.linalg.factory.Nd4j;

/** The ND4J iterator over the prefetcher: epochs, reset, failures with their cause. */
class PrefetchingDataSetIteratorTest {

  static BatchSource<DataSet> source(int batches, int failAt) {
    return new BatchSource<>() {
      @Override
      public int batches() {
        return batches;
      }

      @Override
      public DataSet batch(int epoch, int index) throws IOException {
        if (index == failAt && epoch == 0) {
          throw new IOException("disk read failed at " + index);
        }
        return new DataSet(Nd4j.valueArrayOf(new long[] {4, 3}, index, DataType.FLOAT),
            Nd4j.zeros(DataType.FLOAT, 4, 2));
      }
    };
  }

  @Test
  void deliversEpochsInOrderAndResets() {
    try (PrefetchingDataSetIterator it = PrefetchingDataSetIterator.builder(source(25, -1))
        .workers(3).depth(5).batchSize(4).inputColumns(3).totalOutcomes(2).build()) {
      for (int epoch = 0; epoch < 2; epoch++) {
        int i = 0;
        while (it.hasNext()) {
          DataSet ds = it.next();
          assertEquals(i, ds.getFeatures().getInt(0, 0));
          assertFalse(ds.getFeatures().isAttached());
          i++;
        }
        assertEquals(25, i);
        it.reset();
      }
      assertFalse(it.asyncSupported());
      assertTrue(it.resetSupported());
      assertEquals(4, it.batch());
    }
  }

  @Test
  void aPreProcessorSetAfterTheWorkersStartedReachesEveryBatchOnce() throws Exception {
    try (PrefetchingDataSetIterator it = PrefetchingDataSetIterator.builder(source(6, -1))
        .workers(2).depth(6).batchSize(4).build()) {
      Thread.sleep(50); // let the workers build the whole epoch without a pre-processor
      it.setPreProcessor(ds -> ds.getFeatures().addi(100));
      for (int i = 0; i < 6; i++) {
        assertEquals(100 + i, it.next().getFeatures().getInt(0, 0), "batch " + i);
      }
      it.reset();
      assertEquals(100, it.next().getFeatures().getInt(0, 0), "built by a worker with it");
    }
  }

  @Test
  void aWorkerFailureReachesTheConsumerWithItsCauseAndIsRetried() {
    try (PrefetchingDataSetIterator it = PrefetchingDataSetIterator.builder(source(10, 3))
        .batchSize(4).build()) {
      for (int i = 0; i < 3; i++) {
        it.next();
      }
      PrefetchException e = assertThrows(PrefetchException.class, it::next);
      assertEquals(3, e.index());
      assertTrue(e.getCause() instanceof IOException);
      assertTrue(e.getMessage().contains("disk read failed"), e.getMessage());
      assertThrows(PrefetchException.class, it::next, "epoch 0 still fails at 3");
    }
  }

  @Test
  void badOptionsNameTheOption() {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> PrefetchingDataSetIterator.builder(source(1, -1)).workers(0));
    assertTrue(e.getMessage().startsWith("workers"), e.getMessage());
    IllegalStateException twice = assertThrows(IllegalStateException.class,
        () -> PrefetchingDataSetIterator.builder(source(1, -1)).depth(2).depth(3));
    assertTrue(twice.getMessage().contains("2"), twice.getMessage());
  }
}
