package io.hyperframes.nd4j.train;

import static com.google.common.base.Preconditions.checkArgument;

import io.hyperframes.nd4j.Activation;
import io.hyperframes.nd4j.FusedDense;
import io.hyperframes.runtime.StepMeter;
import java.util.ArrayList;
import java.util.List;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.memory.MemoryWorkspace;
import org.nd4j.linalg.api.memory.conf.WorkspaceConfiguration;
import org.nd4j.linalg.api.memory.enums.AllocationPolicy;
import org.nd4j.linalg.api.memory.enums.LearningPolicy;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.factory.Nd4j;
import org.nd4j.linalg.ops.transforms.Transforms;

/**
 * A multi-layer perceptron for classification built from {@link FusedDense} layers: hidden
 * layers with an activation, a linear output layer, softmax with cross-entropy, and Adam (Kingma
 * and Ba 2015, Algorithm 1; {@link FusedAdam}) on FP32 master weights. A plain ND4J training loop for the end-to-end
 * benchmark; with {@link FusedDense.Precision#BF16} the matmuls run in BF16 where the CPU has it.
 *
 * <p>Not thread-safe.
 */
public final class FusedMlp {

  private final List<FusedDense> layers = new ArrayList<>();
  private final List<INDArray> weights = new ArrayList<>();
  private final List<INDArray> biases = new ArrayList<>();
  private final List<FusedAdam> updaters = new ArrayList<>();
  private final boolean bf16;
  /**
   * With BF16 compute, the BF16 rounding of each weight for {@link #output}, made on the first
   * call after an update: inference then reads half the bytes and skips the kernels' per-call
   * conversion of the FP32 master weights. Null when stale.
   */
  private List<INDArray> inferenceWeights;
  /** Per-layer buffers reused across steps of the same batch size: y, z, dX, dW, db. */
  private final List<INDArray[]> buffers = new ArrayList<>();
  private long bufferRows = -1;

  /**
   * Layer sizes {@code sizes[0]} (inputs) to {@code sizes[n]} (classes); He initialisation from
   * {@code seed}.
   */
  public FusedMlp(int[] sizes, Activation hidden, FusedDense.Precision precision,
      double learningRate, long seed) {
    checkArgument(sizes != null && sizes.length >= 2, "sizes: need inputs and classes");
    checkArgument(learningRate > 0 && Double.isFinite(learningRate),
        "learningRate: must be > 0, got %s", learningRate);
    checkArgument(precision != null, "precision: must be given");
    this.bf16 = precision == FusedDense.Precision.BF16;
    Nd4j.getRandom().setSeed(seed);
    for (int i = 0; i + 1 < sizes.length; i++) {
      checkArgument(sizes[i] > 0 && sizes[i + 1] > 0, "sizes: must be > 0");
      boolean last = i + 2 == sizes.length;
      layers.add(FusedDense.of(last ? Activation.IDENTITY : hidden, precision));
      INDArray w = Nd4j.randn(DataType.FLOAT, sizes[i], sizes[i + 1])
          .muli(Math.sqrt(2.0 / sizes[i]));
      weights.add(w);
      biases.add(Nd4j.zeros(DataType.FLOAT, 1, sizes[i + 1]));
      updaters.add(FusedAdam.of(w, learningRate));
      updaters.add(FusedAdam.of(biases.get(i), learningRate));
    }
  }

  /** Class probabilities for a batch of rows. */
  public INDArray output(INDArray x) {
    List<INDArray> w = weights;
    if (bf16) {
      if (inferenceWeights == null) {
        List<INDArray> rounded = new ArrayList<>();
        weights.forEach(full -> rounded.add(full.castTo(DataType.BFLOAT16)));
        inferenceWeights = rounded;
      }
      w = inferenceWeights;
    }
    INDArray a = x;
    for (int i = 0; i < layers.size(); i++) {
      a = layers.get(i).forward(a, w.get(i), biases.get(i), null);
    }
    return Transforms.softmax(a, false);
  }

  /**
   * One training step on a batch; returns the mean cross-entropy before the update. The optional
   * {@code meter} step is marked when forward and backward are done.
   */
  public double fit(INDArray x, INDArray labels, StepMeter.Step meter) {
    int n = layers.size();
    long rows = x.rows();
    if (rows != bufferRows) {
      buffers.clear();
      for (int i = 0; i < n; i++) {
        INDArray w = weights.get(i);
        buffers.add(new INDArray[] {
            Nd4j.createUninitialized(DataType.FLOAT, rows, w.columns()),
            Nd4j.createUninitialized(DataType.FLOAT, rows, w.columns()),
            i > 0 ? Nd4j.createUninitialized(DataType.FLOAT, rows, w.rows()) : null,
            Nd4j.createUninitialized(DataType.FLOAT, w.rows(), w.columns()),
            Nd4j.createUninitialized(DataType.FLOAT, 1, w.columns()),
            // The layer's input and weights in the compute format (BF16 layers only).
            bf16 ? Nd4j.createUninitialized(DataType.BFLOAT16, rows, w.rows()) : null,
            bf16 ? Nd4j.createUninitialized(DataType.BFLOAT16, w.rows(), w.columns()) : null});
      }
      bufferRows = rows;
    }
    // Step temporaries (softmax, loss, output gradient) live in a workspace that is reused from
    // step to step, so that native memory does not wait for the garbage collector.
    MemoryWorkspace ws = Nd4j.getWorkspaceManager().getAndActivateWorkspace(WORKSPACE,
        "hyperframes-fused-mlp");
    try {
      return step(x, labels, meter, n, rows);
    } finally {
      ws.close();
    }
  }

  private static final WorkspaceConfiguration WORKSPACE = WorkspaceConfiguration.builder()
      .policyAllocation(AllocationPolicy.STRICT).policyLearning(LearningPolicy.FIRST_LOOP)
      .build();

  private double step(INDArray x, INDArray labels, StepMeter.Step meter, int n, long rows) {
    List<INDArray> inputs = new ArrayList<>(n);
    List<INDArray> pre = new ArrayList<>(n);
    INDArray a = x;
    // Each operand is converted to the compute format once a step, here, instead of once in
    // the forward and again in the backward (docs/performance.md, "Where the step goes"): the
    // weights do not change until the optimizer runs after both.
    List<INDArray> computeWeights = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      INDArray[] buf = buffers.get(i);
      a = layers.get(i).toCompute(a, buf[5]);
      inputs.add(a);
      INDArray w = layers.get(i).toCompute(weights.get(i), buf[6]);
      computeWeights.add(w);
      FusedDense.Forward f = layers.get(i).forwardTrainingInto(a, w, biases.get(i),
          null, buf[0], buf[1]);
      pre.add(f.preActivation());
      a = f.output();
    }
    INDArray probs = Transforms.softmax(a, true);
    double loss = -Transforms.log(probs.add(1e-12), false).muli(labels).sumNumber()
        .doubleValue() / rows;
    INDArray grad = probs.subi(labels).divi(rows);
    INDArray[][] grads = new INDArray[n][];
    for (int i = n - 1; i >= 0; i--) {
      INDArray[] buf = buffers.get(i);
      FusedDense.Gradients g = layers.get(i).backwardInto(inputs.get(i), computeWeights.get(i),
          pre.get(i), grad, buf[2], buf[3], buf[4]);
      grads[i] = new INDArray[] {g.weights(), g.bias()};
      grad = g.input();
    }
    if (meter != null) {
      meter.computeDone();
    }
    // Adam in one vectorised pass per parameter array (FusedAdam: ND4J's native Adam op was
    // 40 % of the step).
    inferenceWeights = null;
    for (int i = 0; i < n; i++) {
      updaters.get(2 * i).update(grads[i][0]);
      updaters.get(2 * i + 1).update(grads[i][1]);
    }
    return loss;
  }

  /** Fraction of rows whose most probable class is the labelled one. */
  public double accuracy(INDArray x, INDArray labels) {
    INDArray predicted = output(x).argMax(1);
    INDArray truth = labels.argMax(1);
    return predicted.eq(truth).castTo(DataType.FLOAT).meanNumber().doubleValue();
  }
}
