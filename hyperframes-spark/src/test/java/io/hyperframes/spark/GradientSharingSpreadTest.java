package io.hyperframes.spark;

import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.hyperframes.nd4j.FusedDense;
import java.util.ArrayList;
import java.util.DoubleSummaryStatistics;
import java.util.List;
import java.util.Locale;
import org.apache.spark.api.java.JavaSparkContext;
import org.deeplearning4j.nn.multilayer.MultiLayerNetwork;
import org.deeplearning4j.spark.impl.multilayer.SparkDl4jMultiLayer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;
import org.nd4j.linalg.dataset.DataSet;

/**
 * The spread of DL4J's gradient sharing over repeated runs, with the fused layers' matmuls in BF16
 * and in FP32 (docs/distributed.md, "DL4J's gradient sharing with the fused network"): the same
 * task, settings and seeds as {@link GradientSharingTest}, run {@code hyperframes.sharingRuns}
 * times per precision, the two precisions alternating so that the machine's drift falls on both.
 * A measurement, not part of the build: it takes about a minute a run (forty runs took 47 min on
 * two cores, each Spark context slower than the one before), so it runs only when asked,
 * {@code mvn -B -q -pl hyperframes-spark test -Dtest=GradientSharingSpreadTest
 * -Dhyperframes.sharingRuns=20}, and prints every run and each precision's summary.
 */
class GradientSharingSpreadTest {

  @Test
  @EnabledIfSystemProperty(named = "hyperframes.sharingRuns", matches = "[1-9][0-9]*",
      disabledReason = "a measurement of about a minute a run: -Dhyperframes.sharingRuns=N")
  void accuracyOverRepeatedRunsInBf16AndFp32() throws Exception {
    int runs = Integer.getInteger("hyperframes.sharingRuns");
    var conf = Blobs.localCluster(2);
    int epochs = 8;
    List<DataSet> train = Blobs.batches(64, 32, 1);
    List<DataSet> test = Blobs.batches(16, 128, 2);
    double reference = Blobs.singleProcessAccuracy(epochs, test);
    List<FusedDense.Precision> precisions = List.of(FusedDense.Precision.BF16,
        FusedDense.Precision.FP32);
    List<List<Double>> accuracies = new ArrayList<>();
    precisions.forEach(p -> accuracies.add(new ArrayList<>()));
    for (int run = 0; run < runs; run++) {
      for (int i = 0; i < precisions.size(); i++) {
        FusedDense.Precision precision = precisions.get((run + i) % precisions.size());
        try (JavaSparkContext sc = new JavaSparkContext(conf)) {
          MultiLayerNetwork start = new MultiLayerNetwork(ExampleData.fusedMlp(Blobs.FEATURES,
              Blobs.HIDDEN, Blobs.CLASSES, precision));
          start.init();
          double initial = start.params().sumNumber().doubleValue();
          SparkDl4jMultiLayer net = new SparkDl4jMultiLayer(sc, start,
              GradientSharing.on("127.0.0.1").batchSizePerWorker(32).build());
          var batches = sc.parallelize(train, 2);
          for (int e = 0; e < epochs; e++) {
            net.fit(batches);
          }
          MultiLayerNetwork trained = net.getNetwork();
          assertNotEquals(initial, trained.params().sumNumber().doubleValue(), "it trained");
          double accuracy = Blobs.accuracy(trained, test);
          accuracies.get(precisions.indexOf(precision)).add(accuracy);
          System.out.printf(Locale.ROOT, "run %d %s: %.4f (single process %.4f)%n", run + 1,
              precision, accuracy, reference);
          assertTrue(accuracy > 0.2, precision + " run " + (run + 1) + ": " + accuracy
              + ", twice chance (10 classes) at least");
        }
      }
    }
    for (int i = 0; i < precisions.size(); i++) {
      DoubleSummaryStatistics s = accuracies.get(i).stream().mapToDouble(Double::doubleValue)
          .summaryStatistics();
      double squares = accuracies.get(i).stream().mapToDouble(a -> (a - s.getAverage())
          * (a - s.getAverage())).sum();
      System.out.printf(Locale.ROOT, "%s over %d runs: mean %.4f, standard deviation %.4f, min"
          + " %.4f, max %.4f; single process %.4f%n", precisions.get(i), s.getCount(),
          s.getAverage(), Math.sqrt(squares / Math.max(1, s.getCount() - 1)), s.getMin(),
          s.getMax(), reference);
    }
  }
}
