package io.hyperframes.spark;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.apache.spark.SparkConf;
import org.deeplearning4j.nn.conf.MultiLayerConfiguration;
import org.deeplearning4j.nn.multilayer.MultiLayerNetwork;
import org.nd4j.linalg.dataset.DataSet;
import org.nd4j.linalg.factory.Nd4j;

/**
 * The tests' task: the example MLP's shape scaled down (64 features, two hidden layers of 128,
 * 10 classes, Adam 1e-3) on noisy class centres, hard enough that accuracy stays below 100 %.
 */
final class Blobs {
  static final int FEATURES = 64;
  static final int CLASSES = 10;
  static final int HIDDEN = 128;

  private Blobs() {
  }

  /** {@code batches} mini-batches of {@code rows} rows from seed {@code seed}. */
  static List<DataSet> batches(int batches, int rows, long seed) {
    float[][] centres = centres();
    SplittableRandom r = new SplittableRandom(seed);
    List<DataSet> out = new ArrayList<>();
    for (int b = 0; b < batches; b++) {
      float[] x = new float[rows * FEATURES];
      float[] y = new float[rows * CLASSES];
      for (int i = 0; i < rows; i++) {
        int k = r.nextInt(CLASSES);
        for (int j = 0; j < FEATURES; j++) {
          x[i * FEATURES + j] = (float) (centres[k][j] + 1.1 * r.nextGaussian());
        }
        y[i * CLASSES + k] = 1f;
      }
      out.add(new DataSet(Nd4j.create(x, new long[] {rows, FEATURES}, 'c'),
          Nd4j.create(y, new long[] {rows, CLASSES}, 'c')));
    }
    return out;
  }

  private static float[][] centres() {
    SplittableRandom r = new SplittableRandom(20261205);
    float[][] c = new float[CLASSES][FEATURES];
    for (float[] row : c) {
      for (int j = 0; j < FEATURES; j++) {
        row[j] = r.nextDouble() < 0.15 ? 1f : 0f;
      }
    }
    return c;
  }

  /** The MLP, fused (BF16 dense layers and fused Adam through the adapter) or DL4J's own. */
  static MultiLayerConfiguration mlp(boolean fused) {
    return ExampleData.mlp(FEATURES, HIDDEN, CLASSES, fused);
  }

  /**
   * The Spark tests' reference: the fused MLP trained in one process for {@code epochs} epochs
   * on 32 mini-batches of 64 rows from seed 1 (the rows of {@code batches(64, 32, 1)}, two
   * workers' mini-batches a step), and its accuracy on {@code test}.
   */
  static double singleProcessAccuracy(int epochs, List<DataSet> test) {
    MultiLayerNetwork single = new MultiLayerNetwork(mlp(true));
    single.init();
    List<DataSet> global = batches(32, 64, 1);
    for (int e = 0; e < epochs; e++) {
      for (DataSet d : global) {
        single.fit(d);
      }
    }
    return accuracy(single, test);
  }

  /** Share of {@code test} rows the network classifies right. */
  static double accuracy(MultiLayerNetwork net, List<DataSet> test) {
    return ExampleData.accuracy(net, test);
  }

  /**
   * Spark's {@code local-cluster} master: {@code executors} executor processes on this machine,
   * one core and 1.5 GiB each, started with this JVM's class path and Spark's Java 17 options.
   * Spark's launcher needs {@code SPARK_HOME} (a folder with a {@code jars} subfolder, made here)
   * and {@code SPARK_SCALA_VERSION}; the module's build sets both, and the test skips without
   * them.
   */
  static SparkConf localCluster(int executors) throws IOException {
    String home = System.getenv("SPARK_HOME");
    assumeTrue(home != null && System.getenv("SPARK_SCALA_VERSION") != null,
        "local-cluster needs SPARK_HOME and SPARK_SCALA_VERSION (set by the module's build)");
    Files.createDirectories(Path.of(home, "jars"));
    return spark("local-cluster[" + executors + ",1,1536]")
        .set("spark.executor.extraClassPath", System.getProperty("java.class.path"))
        .set("spark.executor.extraJavaOptions", String.join(" ", JvmOptions.SPARK_ON_JAVA_17));
  }

  /** A local Spark configuration on loopback, without the web UI. */
  static SparkConf spark(String master) {
    return new SparkConf().setMaster(master).setAppName("hyperframes-test")
        .set("spark.ui.enabled", "false").set("spark.driver.host", "127.0.0.1")
        .set("spark.driver.bindAddress", "127.0.0.1");
  }
}
