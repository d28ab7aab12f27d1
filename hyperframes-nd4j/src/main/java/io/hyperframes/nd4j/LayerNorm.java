package io.hyperframes.nd4j;

import java.nio.FloatBuffer;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.factory.Nd4j;

/**
 * Layer normalisation of each row (Ba, Kiros and Hinton 2016, "Layer Normalization", arXiv
 * 1607.06450, eq. 4): {@code y = g ⊙ (x − μ)/σ + b}, {@code σ = √(var(x) + ε)} with the
 * population variance, forward and backward.
 *
 * <p>It is {@link RmsNorm} of the centred row {@code c = x − μ}, since rms(c) = σ, plus the bias;
 * centring is the projection {@code P = I − 11ᵀ/h}, so the backward pass is RMSNorm's followed by
 * P (subtracting each row's mean from the gradient). Precision as {@link RmsNorm}: FP32 input
 * (BF16 widened), FP64 row sums, the centred values rounded to FP32 once, an FP32 or BF16 result,
 * FP32 gradients. {@code TransformerKernelsTest} checks it against an FP64 reference and its
 * finite differences.
 *
 * <p>Stateless apart from ε: thread-safe.
 */
public final class LayerNorm {
  private final RmsNorm rms;

  /** Normalisation with {@code epsilon} added to the variance (finite, ≥ 0; 1e-5 is usual). */
  public LayerNorm(double epsilon) {
    this.rms = new RmsNorm(epsilon);
  }

  /** ε. */
  public double epsilon() {
    return rms.epsilon();
  }

  /**
   * The forward pass's results.
   *
   * @param out the normalised rows [T, h], of the requested type
   * @param mean per row, μ, FP32 [T]
   * @param inverseStd per row, 1/σ, FP32 [T]
   */
  public record Forward(INDArray out, INDArray mean, INDArray inverseStd) {}

  /** The gradients with respect to the input [T, h], the gain [h] and the bias [h], FP32. */
  public record Gradients(INDArray dx, INDArray dGain, INDArray dBias) {}

  /**
   * The forward pass.
   *
   * @param x rows to normalise [T, h], FP32 or BF16
   * @param gain per-column gain g, FP32 [h] or [1, h]
   * @param bias per-column bias b, FP32 [h] or [1, h]
   * @param outType FLOAT or BFLOAT16
   * @throws IllegalArgumentException naming the argument when a shape or type is wrong
   */
  public Forward forward(INDArray x, INDArray gain, INDArray bias, DataType outType) {
    INDArray xs = RowMajor.input("x", x);
    INDArray g = RowMajor.vector("gain", gain, xs.columns());
    INDArray b = RowMajor.vector("bias", bias, xs.columns());
    INDArray means = Nd4j.createUninitialized(DataType.FLOAT, xs.rows());
    RmsNorm.Forward f = rms.forward(centred(xs, means, true), g, b, outType);
    return new Forward(f.out(), means, f.inverseRms());
  }

  /**
   * The backward pass: with x̂ = (x − μ)/σ, {@code dxᵢ = (gᵢ·dyᵢ − mean(g·dy) −
   * x̂ᵢ·mean(g·dy·x̂)) / σ}, {@code dg = Σ_rows dy·x̂}, {@code db = Σ_rows dy}.
   *
   * @param dOut gradient of the loss with respect to the output [T, h], FP32 or BF16
   * @param x the forward pass's input
   * @param gain the forward pass's gain
   * @param forward the forward pass's result (its {@code mean} and {@code inverseStd})
   * @throws IllegalArgumentException naming the argument when a shape or type is wrong
   */
  public Gradients backward(INDArray dOut, INDArray x, INDArray gain, Forward forward) {
    INDArray xs = RowMajor.input("x", x);
    INDArray dy = RowMajor.sameShape("dOut", dOut, "x", xs);
    INDArray g = RowMajor.vector("gain", gain, xs.columns());
    if (forward == null) {
      throw new IllegalArgumentException("forward: must be the result of forward(x, ...)");
    }
    INDArray means = RowMajor.vector("forward.mean", forward.mean(), xs.rows());
    INDArray inv = RowMajor.vector("forward.inverseStd", forward.inverseStd(), xs.rows());
    RmsNorm.Gradients r = rms.backward(dy, centred(xs, means, false), g, inv);
    INDArray dx = centred(r.dx(), Nd4j.createUninitialized(DataType.FLOAT, xs.rows()), true);
    return new Gradients(dx, r.dGain(), dy.sum(0).reshape(xs.columns()));
  }

  /**
   * The rows minus their means, a new FP32 array; with {@code measure} the means (FP64 sums) are
   * written into {@code means} first, else read from it.
   */
  private static INDArray centred(INDArray xs, INDArray means, boolean measure) {
    int rows = xs.rows();
    int h = xs.columns();
    INDArray c = Nd4j.createUninitialized(DataType.FLOAT, rows, h);
    FloatBuffer xb = Arrays2.floats(xs);
    FloatBuffer mb = Arrays2.floats(means);
    FloatBuffer cb = Arrays2.floats(c);
    for (int t = 0; t < rows; t++) {
      int row = t * h;
      if (measure) {
        double sum = 0;
        for (int i = 0; i < h; i++) {
          sum += xb.get(row + i);
        }
        mb.put(t, (float) (sum / h));
      }
      double mu = mb.get(t);
      for (int i = 0; i < h; i++) {
        cb.put(row + i, (float) (xb.get(row + i) - mu));
      }
    }
    RowMajor.keep(xs, means, c);
    return c;
  }
}
