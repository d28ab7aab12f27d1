package io.hyperframes.cli;

import io.hyperframes.nd4j.FusedDense;
import io.hyperframes.nd4j.data.EncodedDataset;
import io.hyperframes.nd4j.data.PrefetchingDataSetIterator;
import io.hyperframes.nd4j.dl4j.Dl4jAdapter;
import io.hyperframes.nd4j.train.FusedMlp;
import io.hyperframes.runtime.StepMeter;
import io.hyperframes.nd4j.train.StepMeterListener;
import java.io.BufferedWriter;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Locale;
import java.util.SplittableRandom;
import org.datavec.api.records.reader.impl.csv.CSVRecordReader;
import org.datavec.api.split.FileSplit;
import org.deeplearning4j.datasets.datavec.RecordReaderDataSetIterator;
import org.deeplearning4j.nn.conf.MultiLayerConfiguration;
import org.deeplearning4j.nn.conf.NeuralNetConfiguration;
import org.deeplearning4j.nn.conf.layers.DenseLayer;
import org.deeplearning4j.nn.conf.layers.OutputLayer;
import org.deeplearning4j.nn.multilayer.MultiLayerNetwork;
import org.deeplearning4j.nn.weights.WeightInit;
import org.nd4j.linalg.activations.Activation;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.dataset.DataSet;
import org.nd4j.linalg.dataset.api.iterator.DataSetIterator;
import org.nd4j.linalg.factory.Nd4j;
import org.nd4j.linalg.learning.config.Adam;
import org.nd4j.linalg.lossfunctions.LossFunctions;
import org.nd4j.linalg.ops.transforms.Transforms;

/**
 * The end-to-end comparison behind {@code hyperframes bench train} and {@code bench infer}: an MLP
 * (784-2048-2048-10, batch 256, Adam 1e-3) on a deterministic synthetic classification set
 * stored as CSV. "default" is DL4J out of the box (CSVRecordReader, RecordReaderDataSetIterator,
 * FP32 DenseLayer/OutputLayer, fit); "hyperframes" is the pre-encoded memory-mapped file, the
 * prefetching iterator and fused BF16 layers in a plain ND4J loop. Every side, DJL's included
 * ({@link DjlBaseline}), trains one untimed step on its first batch before the timed epochs.
 */
final class TrainBench {

  static final int FEATURES = 784;
  static final int CLASSES = 10;
  static final int HIDDEN = 2048;
  static final int BATCH = 256;
  /** Weights of the MLP (FEATURES → HIDDEN → HIDDEN → CLASSES), biases left out. */
  static final long WEIGHTS = (long) FEATURES * HIDDEN + (long) HIDDEN * HIDDEN
      + (long) HIDDEN * CLASSES;

  /** Measured figures of one side. */
  record Side(double samplesPerSecond, double dataWaitShare, double finalLoss, double accuracy,
      StepMeter meter) {}

  private final Path dir;
  private final int trainRows;
  private final int testRows;
  private final INDArray testX;
  private final INDArray testY;
  private final Path csv;

  TrainBench(Path dir, int trainRows, int testRows) throws IOException {
    this.dir = dir;
    this.trainRows = trainRows;
    this.testRows = testRows;
    this.csv = dir.resolve("train.csv");
    float[][] centers = new float[CLASSES][FEATURES];
    SplittableRandom r = new SplittableRandom(20261130);
    for (float[] c : centers) {
      for (int j = 0; j < FEATURES; j++) {
        c[j] = (float) (r.nextDouble() < 0.1 ? 1.0 : 0.0);
      }
    }
    try (BufferedWriter w = Files.newBufferedWriter(csv, StandardCharsets.UTF_8)) {
      StringBuilder b = new StringBuilder(FEATURES * 6);
      for (int i = 0; i < trainRows; i++) {
        b.setLength(0);
        int k = r.nextInt(CLASSES);
        for (int j = 0; j < FEATURES; j++) {
          b.append(String.format(Locale.ROOT, "%.3f", centers[k][j] + 2.2 * r.nextGaussian()))
              .append(',');
        }
        w.write(b.append(k).append('\n').toString());
      }
    }
    float[] x = new float[testRows * FEATURES];
    float[] y = new float[testRows * CLASSES];
    for (int i = 0; i < testRows; i++) {
      int k = r.nextInt(CLASSES);
      for (int j = 0; j < FEATURES; j++) {
        x[i * FEATURES + j] = (float) (centers[k][j] + 2.2 * r.nextGaussian());
      }
      y[i * CLASSES + k] = 1f;
    }
    testX = Nd4j.create(x, new long[] {testRows, FEATURES}, 'c');
    testY = Nd4j.create(y, new long[] {testRows, CLASSES}, 'c');
  }

  /** The training rows as CSV (features, then the class index). */
  Path csv() {
    return csv;
  }

  /** The test features, row-major. */
  float[] testFeatures() {
    return testX.data().asFloat();
  }

  /** The test class indices. */
  int[] testLabels() {
    return testY.argMax(1).toIntVector();
  }

  /** DL4J's own network, as DL4J runs it. */
  static MultiLayerNetwork dl4jNetwork() {
    return dl4jNetwork(HIDDEN);
  }

  /** DL4J's own network with {@code hidden} units in each of its two hidden layers. */
  static MultiLayerNetwork dl4jNetwork(int hidden) {
    return initialised(dl4jConfiguration(hidden));
  }

  /**
   * DL4J's network with its configuration passed through {@link Dl4jAdapter#accelerate} in
   * {@code precision}, so that DL4J's own {@code fit} and {@code output} run fused layers.
   */
  static MultiLayerNetwork acceleratedDl4jNetwork(FusedDense.Precision precision) {
    return initialised(Dl4jAdapter.accelerate(dl4jConfiguration(HIDDEN), precision)
        .configuration());
  }

  private static MultiLayerNetwork initialised(MultiLayerConfiguration conf) {
    MultiLayerNetwork net = new MultiLayerNetwork(conf);
    net.init();
    return net;
  }

  private static MultiLayerConfiguration dl4jConfiguration(int hidden) {
    return new NeuralNetConfiguration.Builder().seed(7)
        .updater(new Adam(1e-3)).weightInit(WeightInit.RELU).list()
        .layer(new DenseLayer.Builder().nIn(FEATURES).nOut(hidden).activation(Activation.RELU)
            .build())
        .layer(new DenseLayer.Builder().nIn(hidden).nOut(hidden).activation(Activation.RELU)
            .build())
        .layer(new OutputLayer.Builder(LossFunctions.LossFunction.MCXENT).nIn(hidden)
            .nOut(CLASSES).activation(Activation.SOFTMAX).build())
        .build();
  }

  /** The fused network, layers in {@code precision}. */
  static FusedMlp fusedNetwork(FusedDense.Precision precision) {
    return new FusedMlp(new int[] {FEATURES, HIDDEN, HIDDEN, CLASSES},
        io.hyperframes.nd4j.Activation.RELU, precision, 1e-3, 7);
  }

  DataSetIterator csvIterator() throws IOException {
    CSVRecordReader reader = new CSVRecordReader();
    try {
      reader.initialize(new FileSplit(csv.toFile()));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IOException(e);
    }
    return new RecordReaderDataSetIterator(reader, BATCH, FEATURES, CLASSES);
  }

  PrefetchingDataSetIterator encodedIterator(EncodedDataset data) {
    return PrefetchingDataSetIterator.builder(data.batches(BATCH, 11)).workers(2).depth(8)
        .batchSize(BATCH).inputColumns(FEATURES).totalOutcomes(CLASSES).build();
  }

  /** DL4J's own fit loop over {@code it}, on DL4J's own network. */
  Side dl4j(DataSetIterator it, int epochs) {
    return dl4j(dl4jNetwork(), it, epochs);
  }

  /** DL4J's own fit loop over {@code it} on {@code net}. */
  Side dl4j(MultiLayerNetwork net, DataSetIterator it, int epochs) {
    // One untimed step, as every side gets (DjlBaseline's too): start-up is not throughput.
    it.reset();
    net.fit(it.next());
    StepMeter meter = new StepMeter();
    StepMeterListener listener = new StepMeterListener(meter);
    net.setListeners(listener);
    DataSetIterator metered = listener.metered(it);
    for (int e = 0; e < epochs; e++) {
      metered.reset();
      net.fit(metered);
    }
    INDArray probs = net.output(testX);
    return new Side(meter.summary().samplesPerSecond(), meter.summary().dataWaitShare(),
        crossEntropy(probs), accuracy(probs), meter);
  }

  /** The fused ND4J loop over {@code it} with layers in {@code precision}. */
  Side fused(DataSetIterator it, int epochs, FusedDense.Precision precision) {
    FusedMlp net = fusedNetwork(precision);
    // One untimed step, as every side gets (DjlBaseline's too): the first builds the oneDNN
    // primitives and the step's buffers, a quarter of a second, which is start-up, not
    // throughput.
    it.reset();
    DataSet first = it.next();
    net.fit(first.getFeatures(), first.getLabels(), null);
    StepMeter meter = new StepMeter();
    for (int e = 0; e < epochs; e++) {
      it.reset();
      while (true) {
        try (StepMeter.Step s = meter.begin()) {
          if (!it.hasNext()) {
            break;
          }
          DataSet ds = it.next();
          s.dataReady(ds.numExamples());
          net.fit(ds.getFeatures(), ds.getLabels(), s);
        }
      }
    }
    INDArray probs = net.output(testX);
    return new Side(meter.summary().samplesPerSecond(), meter.summary().dataWaitShare(),
        crossEntropy(probs), accuracy(probs), meter);
  }

  double crossEntropy(INDArray probs) {
    return -Transforms.log(probs.add(1e-12), false).muli(testY).sumNumber().doubleValue()
        / testRows;
  }

  /** Test-set accuracy of a DL4J network. */
  double accuracy(MultiLayerNetwork net) {
    return accuracy(net.output(testX));
  }

  double accuracy(INDArray probs) {
    return probs.argMax(1).eq(testY.argMax(1)).castTo(DataType.FLOAT).meanNumber()
        .doubleValue();
  }

  Path encode() throws IOException {
    Path out = dir.resolve("train.hfds");
    EncodedDataset.encodeCsv(csv, out, -1, CLASSES, false);
    return out;
  }

  /**
   * Median and 99th percentile of {@code runs} timed calls, after the warm-up of {@link
   * #latencySamples} (the same for each contender).
   */
  static double[] latency(Runnable call, int runs) {
    return percentiles(latencySamples(call, runs));
  }

  /** p50 and p99 of sorted samples. */
  static double[] percentiles(double[] sorted) {
    int runs = sorted.length;
    return new double[] {sorted[runs / 2], sorted[(int) Math.ceil(0.99 * runs) - 1]};
  }

  /** Warm-up calls before timing starts, at least. */
  static final int WARM_UP_CALLS = 200;
  /** The JIT must have compiled nothing for this long before timing starts. */
  static final long JIT_QUIET_NANOS = 1_000_000_000L;
  /** Warm-up stops here whatever the JIT does. */
  static final long WARM_UP_LIMIT_NANOS = 20_000_000_000L;

  /**
   * Every timed call of {@link #latency}, sorted. Timing starts after at least {@link
   * #WARM_UP_CALLS} calls, once the JIT has compiled nothing for {@link #JIT_QUIET_NANOS} (at
   * most {@link #WARM_UP_LIMIT_NANOS}; without compilation-time monitoring, after one second):
   * on two cores a compiler thread that is still at work takes a core from the call, and a
   * fixed one-second warm-up left the fused MLP's batch-1 calls 5-9 ms slow at the 99th
   * percentile for its first ~7 000 calls, against under 1 ms after (docs/performance.md).
   */
  static double[] latencySamples(Runnable call, int runs) {
    java.lang.management.CompilationMXBean jit =
        java.lang.management.ManagementFactory.getCompilationMXBean();
    boolean watch = jit != null && jit.isCompilationTimeMonitoringSupported();
    long start = System.nanoTime();
    long compiled = watch ? jit.getTotalCompilationTime() : 0;
    long quietSince = start;
    for (int i = 0; ; i++) {
      long now = System.nanoTime();
      if (watch) {
        long c = jit.getTotalCompilationTime();
        if (c != compiled) {
          compiled = c;
          quietSince = now;
        }
      }
      boolean quiet = watch ? now - quietSince >= JIT_QUIET_NANOS : now - start >= 1_000_000_000L;
      if ((i >= WARM_UP_CALLS && quiet) || now - start >= WARM_UP_LIMIT_NANOS) {
        break;
      }
      call.run();
    }
    double[] t = new double[runs];
    for (int i = 0; i < runs; i++) {
      long t0 = System.nanoTime();
      call.run();
      t[i] = (System.nanoTime() - t0) / 1e9;
    }
    Arrays.sort(t);
    return t;
  }

  int trainRows() {
    return trainRows;
  }
}
