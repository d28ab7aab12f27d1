package io.hyperframes.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Locale;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.deeplearning4j.nn.multilayer.MultiLayerNetwork;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.nd4j.linalg.dataset.DataSet;

/**
 * Data-parallel training on Spark local[2] with encoded updates: top-k with error feedback
 * reaches the single-process accuracy within a point and exchanges at least 50 times fewer
 * bytes than the uncompressed run, counted from the messages that crossed.
 */
class EncodedDataParallelTest {
  static final int EPOCHS = 8;
  static final int ROWS = 32;
  static JavaSparkContext sc;
  static List<DataSet> train;
  static List<DataSet> test;

  @BeforeAll
  static void start() {
    sc = new JavaSparkContext(Blobs.spark("local[2]"));
    train = Blobs.batches(64, ROWS, 1);
    test = Blobs.batches(16, 128, 2);
  }

  @AfterAll
  static void stop() {
    sc.close();
  }

  @Test
  void topKWithErrorFeedbackMatchesOneProcessWithFiftyTimesFewerBytes() {
    // One process, the same samples and epochs, the global batch of both workers.
    double reference = Blobs.singleProcessAccuracy(EPOCHS, test);
    JavaRDD<DataSet> batches = sc.parallelize(train, 4);
    EncodedDataParallel dense = EncodedDataParallel.on(sc, Blobs.mlp(true)).workers(2).build();
    // The uncompressed run for the byte count: one epoch, compared per step.
    EncodedDataParallel.Result none = dense.fit(batches, 1);
    EncodedDataParallel sparse = EncodedDataParallel.on(sc, Blobs.mlp(true))
        .codec("topk-0.01-ef").workers(2).build();
    EncodedDataParallel.Result topk = sparse.fit(batches, EPOCHS);
    double a1 = Blobs.accuracy(sparse.network(), test);
    double ratio = (double) none.bytesExchanged() / none.steps()
        / ((double) topk.bytesExchanged() / topk.steps());
    System.out.printf(Locale.ROOT, "single %.4f, none %d bytes a step (%.2f s an epoch),"
        + " topk-0.01-ef %.4f, %d bytes a step (%.2f s), ratio %.1f%n", reference,
        none.bytesExchanged() / none.steps(), none.seconds(), a1,
        topk.bytesExchanged() / topk.steps(), topk.seconds(), ratio);
    assertEquals(32 * EPOCHS, topk.steps());
    assertTrue(reference > 0.5 && reference < 0.995, "a task with room: " + reference);
    assertTrue(Math.abs(a1 - reference) <= 0.01, a1 + " against " + reference);
    assertTrue(ratio >= 50, "ratio " + ratio);
  }

  @Test
  void oneUncompressedWorkerTrainsAsOneProcess() {
    MultiLayerNetwork single = new MultiLayerNetwork(Blobs.mlp(true));
    single.init();
    for (int e = 0; e < 2; e++) {
      for (DataSet d : train.subList(0, 8)) {
        single.fit(d);
      }
    }
    EncodedDataParallel one = EncodedDataParallel.on(sc, Blobs.mlp(true)).workers(1).build();
    one.fit(sc.parallelize(train.subList(0, 8), 2), 2);
    double[] a = single.params().toDoubleVector();
    double[] b = one.network().params().toDoubleVector();
    double diff = 0;
    for (int i = 0; i < a.length; i++) {
      diff = Math.max(diff, Math.abs(a[i] - b[i]));
    }
    System.out.println("one worker against one process: max |param diff| " + diff);
    assertEquals(0.0, diff, 1e-6);
  }

  @Test
  void aNonFiniteGradientSkipsTheStepOnEveryReplica() {
    List<DataSet> batches = new java.util.ArrayList<>(train.subList(0, 8));
    DataSet poisoned = batches.get(3).copy();
    poisoned.getFeatures().putScalar(0, 5, Double.NaN);
    batches.set(3, poisoned);
    EncodedDataParallel dp = EncodedDataParallel.on(sc, Blobs.mlp(true)).codec("topk-0.05-ef")
        .workers(2).build();
    EncodedDataParallel.Result r = dp.fit(sc.parallelize(batches, 2), 2);
    assertEquals(8, r.steps());
    assertEquals(2, r.skippedSteps(), "worker 1's step 1, in each of the two epochs");
    assertTrue(Double.isFinite(dp.network().params().sumNumber().doubleValue()));
    assertTrue(Double.isFinite(r.score()), "the loss of the last step " + r.score());
  }

  @Test
  void badSettingsAreNamed() {
    var conf = Blobs.mlp(false);
    assertThrows(IllegalArgumentException.class, () -> EncodedDataParallel.on(null, conf));
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> EncodedDataParallel.on(sc, conf).codec("dl4j-threshold").build());
    assertTrue(e.getMessage().startsWith("codec: dl4j-threshold cannot run on Spark"),
        e.getMessage());
    e = assertThrows(IllegalArgumentException.class,
        () -> EncodedDataParallel.on(sc, conf).workers(0).build());
    assertTrue(e.getMessage().startsWith("workers:"), e.getMessage());
    EncodedDataParallel dp = EncodedDataParallel.on(sc, conf).workers(8).build();
    e = assertThrows(IllegalArgumentException.class,
        () -> dp.fit(sc.parallelize(train.subList(0, 3)), 1));
    assertTrue(e.getMessage().startsWith("batches: 3 mini-batches for 8 workers"),
        e.getMessage());
  }
}
