package io.hyperframes.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.hyperframes.nd4j.train.AsyncCheckpointer;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.deeplearning4j.nn.conf.MultiLayerConfiguration;
import org.deeplearning4j.nn.multilayer.MultiLayerNetwork;
import org.deeplearning4j.spark.impl.multilayer.SparkDl4jMultiLayer;
import org.deeplearning4j.spark.impl.paramavg.ParameterAveragingTrainingMaster;
import org.deeplearning4j.util.ModelSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.nd4j.linalg.dataset.DataSet;

/**
 * DL4J's own Spark training ({@code SparkDl4jMultiLayer} with parameter averaging) runs the
 * adapter's fused network: its configuration reaches the executors, the fused layers and fused
 * Adam train there, the accuracy is the single-process one within a point, and the averaged
 * network is checkpointed through the atomic writer.
 */
class ParameterAveragingTest {

  @Test
  void theFusedNetworkTrainsOnSparkAsInOneProcess(@TempDir Path dir) throws Exception {
    int epochs = 8;
    List<DataSet> train = Blobs.batches(64, 32, 1);
    List<DataSet> test = Blobs.batches(16, 128, 2);
    double reference = Blobs.singleProcessAccuracy(epochs, test);
    try (JavaSparkContext sc = new JavaSparkContext(Blobs.spark("local[2]"));
        AsyncCheckpointer checkpoints = new AsyncCheckpointer(dir, 2)) {
      JavaRDD<DataSet> batches = sc.parallelize(train, 2).cache();
      double[] accuracy = new double[2];
      double[] seconds = new double[2];
      for (int fused = 0; fused < 2; fused++) {
        MultiLayerConfiguration conf = Blobs.mlp(fused == 1);
        ParameterAveragingTrainingMaster tm = new ParameterAveragingTrainingMaster.Builder(32)
            .batchSizePerWorker(32).averagingFrequency(1).workerPrefetchNumBatches(0)
            .saveUpdater(true).rngSeed(12345).build();
        SparkDl4jMultiLayer net = new SparkDl4jMultiLayer(sc, conf, tm);
        long start = System.nanoTime();
        for (int e = 0; e < epochs; e++) {
          net.fit(batches);
          if (fused == 1) {
            checkpoints.save(net.getNetwork(), e + 1, java.util.Map.of()).get();
          }
        }
        seconds[fused] = (System.nanoTime() - start) / 1e9;
        accuracy[fused] = Blobs.accuracy(net.getNetwork(), test);
        if (fused == 1) {
          assertEquals("FusedDenseLayerImpl",
              net.getNetwork().getLayer(0).getClass().getSimpleName(), "the fused layer trained");
          Path last = AsyncCheckpointer.latest(dir).orElseThrow();
          MultiLayerNetwork restored = ModelSerializer.restoreMultiLayerNetwork(last.toFile());
          assertEquals(net.getNetwork().params(), restored.params(), "checkpoint " + last);
        }
      }
      System.out.printf(Locale.ROOT, "single %.4f, spark default %.4f (%.2f s), spark fused %.4f"
          + " (%.2f s)%n", reference, accuracy[0], seconds[0], accuracy[1], seconds[1]);
      assertTrue(Math.abs(accuracy[1] - reference) <= 0.01, accuracy[1] + " against "
          + reference);
    }
  }
}
