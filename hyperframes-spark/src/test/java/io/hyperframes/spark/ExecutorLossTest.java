package io.hyperframes.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerExecutorRemoved;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.nd4j.linalg.dataset.DataSet;

/**
 * A worker's executor process dies in the middle of training (it halts itself before step 20,
 * once): Spark starts another executor, recomputes the lost workers' states from the last
 * checkpoint of the lineage and the kept messages, and the job finishes with the same parameters
 * as an undisturbed run, because a step never changes the state it starts from.
 *
 * <p>It runs on Spark's {@code local-cluster} master: real executor processes on this machine.
 * Spark's launcher needs {@code SPARK_HOME} (a folder with a {@code jars} subfolder) and
 * {@code SPARK_SCALA_VERSION}; the module's build sets both, and the test skips without them.
 */
class ExecutorLossTest {

  @Test
  void aKilledExecutorIsReplacedAndTheRunEndsAsAnUndisturbedOne(@TempDir Path dir)
      throws IOException {
    var conf = Blobs.localCluster(2);
    List<DataSet> train = Blobs.batches(16, 32, 1);
    List<DataSet> test = Blobs.batches(8, 128, 2);
    Path marker = dir.resolve("halted");
    double[] undisturbed;
    double accuracy;
    EncodedDataParallel.Result result;
    AtomicInteger removed = new AtomicInteger();
    try (JavaSparkContext sc = new JavaSparkContext(conf)) {
      sc.setCheckpointDir(dir.resolve("lineage").toString());
      sc.sc().addSparkListener(new SparkListener() {
        @Override
        public void onExecutorRemoved(SparkListenerExecutorRemoved e) {
          removed.incrementAndGet();
        }
      });
      var batches = sc.parallelize(train, 2);
      EncodedDataParallel calm = EncodedDataParallel.on(sc, Blobs.mlp(true))
          .codec("topk-0.05-ef").workers(2).truncateLineageEvery(8).build();
      calm.fit(batches, 4);
      undisturbed = calm.network().params().toDoubleVector();
      String flag = marker.toString();
      EncodedDataParallel hit = EncodedDataParallel.on(sc, Blobs.mlp(true))
          .codec("topk-0.05-ef").workers(2).truncateLineageEvery(8)
          .fault((worker, step) -> halt(flag, worker, step)).build();
      result = hit.fit(batches, 4);
      accuracy = Blobs.accuracy(hit.network(), test);
      double[] after = hit.network().params().toDoubleVector();
      double diff = 0;
      for (int i = 0; i < after.length; i++) {
        diff = Math.max(diff, Math.abs(after[i] - undisturbed[i]));
      }
      System.out.printf(Locale.ROOT, "executors removed %d, accuracy %.4f, max |param diff|"
          + " %.3g, %.2f s%n", removed.get(), accuracy, diff, result.seconds());
      assertTrue(Files.exists(marker), "the fault fired");
      assertTrue(removed.get() >= 1, "Spark saw the executor go");
      assertEquals(32, result.steps());
      assertEquals(0.0, diff, 1e-6, "the same parameters as the undisturbed run");
    }
  }

  /** Halts this executor's JVM before worker 0's step 20, the first time only. */
  private static void halt(String flag, int worker, long step) {
    if (worker != 0 || step != 20) {
      return;
    }
    try {
      Files.createFile(Path.of(flag));
    } catch (FileAlreadyExistsException e) {
      return;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    Runtime.getRuntime().halt(3);
  }
}
