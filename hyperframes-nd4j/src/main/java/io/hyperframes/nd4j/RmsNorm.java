package io.hyperframes.nd4j;

import java.nio.FloatBuffer;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.factory.Nd4j;

/**
 * Root-mean-square layer normalisation of each row (Zhang and Sennrich 2019, "Root Mean Square
 * Layer Normalization", arXiv 1910.07467, eq. 4): {@code y = g ⊙ x / rms(x)}, {@code rms(x) =
 * √(mean(x²) + ε)}, forward and backward, in one pass over a row each way.
 *
 * <p>Precision: the input is FP32 (BF16 is widened first), each row's sums are accumulated in
 * FP64, and the result is FP32 or BF16 (rounded once, to nearest). Against exact arithmetic an FP32
 * output is within a few units of FP32 roundoff of |y| and a BF16 output within 2⁻⁹|y| more;
 * the gradients are FP32 with FP64 row sums. {@code TransformerKernelsTest} checks both against
 * an FP64 reference and the backward pass against the reference's finite differences.
 *
 * <p>Stateless apart from ε: thread-safe.
 */
public final class RmsNorm {
  private final double epsilon;

  /** Normalisation with {@code epsilon} added to the mean square (finite, ≥ 0; 1e-5 or 1e-6 is usual). */
  public RmsNorm(double epsilon) {
    this.epsilon = RowMajor.epsilon(epsilon);
  }

  /** ε. */
  public double epsilon() {
    return epsilon;
  }

  /**
   * The forward pass's results.
   *
   * @param out the normalised rows [T, h], of the requested type
   * @param inverseRms per row, 1 / rms(x), FP32 [T]: what the backward pass needs besides x
   */
  public record Forward(INDArray out, INDArray inverseRms) {}

  /** The gradients with respect to the input, FP32 [T, h], and the gain, FP32 [h]. */
  public record Gradients(INDArray dx, INDArray dGain) {}

  /**
   * The forward pass.
   *
   * @param x rows to normalise [T, h], FP32 or BF16
   * @param gain per-column gain g, FP32 [h] or [1, h]
   * @param outType FLOAT or BFLOAT16
   * @throws IllegalArgumentException naming the argument when a shape or type is wrong
   */
  public Forward forward(INDArray x, INDArray gain, DataType outType) {
    INDArray xs = RowMajor.input("x", x);
    return forward(xs, RowMajor.vector("gain", gain, xs.columns()), null, outType);
  }

  /**
   * The forward pass into arrays the caller holds (nothing is allocated when x is dense FP32):
   * decoding one token at a time reuses them.
   *
   * @param out the normalised rows, dense row-major [T, h], FP32 or BF16
   * @param inverseRms per row, 1 / rms(x), dense FP32 [T]
   * @return {@code out} and {@code inverseRms}
   */
  public Forward forward(INDArray x, INDArray gain, INDArray out, INDArray inverseRms) {
    INDArray xs = RowMajor.input("x", x);
    INDArray inv = RowMajor.vector("inverseRms", inverseRms, xs.rows());
    if (inv != inverseRms) {
      throw new IllegalArgumentException("inverseRms: must be a dense vector (it is written)");
    }
    return forward(xs, RowMajor.vector("gain", gain, xs.columns()), null,
        RowMajor.Output.into("out", out, xs.rows(), xs.columns()), inv);
  }

  /** The forward pass on checked, dense FP32 rows, plus {@code bias} (dense FP32 [h]) if given. */
  Forward forward(INDArray xs, INDArray g, INDArray bias, DataType outType) {
    RowMajor.checkResultType("outType", outType);
    return forward(xs, g, bias, new RowMajor.Output(outType, xs.rows(), xs.columns()),
        Nd4j.createUninitialized(DataType.FLOAT, xs.rows()));
  }

  private Forward forward(INDArray xs, INDArray g, INDArray bias, RowMajor.Output out,
      INDArray inv) {
    int rows = xs.rows();
    int h = xs.columns();
    FloatBuffer xb = Arrays2.floats(xs);
    FloatBuffer ib = Arrays2.floats(inv);
    RowMajor.Scratch scratch = RowMajor.Scratch.get();
    float[] gains = scratch.floats(0, h);
    Arrays2.floats(g).get(0, gains, 0, h);
    float[] biases = bias == null ? null : scratch.floats(1, h);
    if (biases != null) {
      Arrays2.floats(bias).get(0, biases, 0, h);
    }
    float[] row = scratch.floats(2, h);
    short[] halves = scratch.shorts(h);
    for (int t = 0; t < rows; t++) {
      xb.get(t * h, row, 0, h);
      double squares = 0;
      for (int i = 0; i < h; i++) {
        squares += (double) row[i] * row[i];
      }
      double r = 1 / Math.sqrt(squares / h + epsilon);
      ib.put(t, (float) r);
      float rf = (float) r;
      for (int i = 0; i < h; i++) {
        row[i] = gains[i] * (row[i] * rf);
      }
      if (biases != null) {
        for (int i = 0; i < h; i++) {
          row[i] += biases[i];
        }
      }
      out.put(t * h, row, h, halves);
    }
    RowMajor.keep(xs, g, bias, inv);
    return new Forward(out.done(), inv);
  }

  /** The forward pass with an FP32 result. */
  public Forward forward(INDArray x, INDArray gain) {
    return forward(x, gain, DataType.FLOAT);
  }

  /**
   * The backward pass: with {@code s = Σⱼ gⱼ·dyⱼ·xⱼ} and {@code r = 1/rms(x)} per row,
   * {@code dxᵢ = r·gᵢ·dyᵢ − xᵢ·r³·s/h} and {@code dgᵢ = Σ_rows dyᵢ·xᵢ·r}.
   *
   * @param dOut gradient of the loss with respect to the output [T, h], FP32 or BF16
   * @param x the forward pass's input
   * @param gain the forward pass's gain
   * @param forward the forward pass's result (its {@code inverseRms})
   * @throws IllegalArgumentException naming the argument when a shape or type is wrong
   */
  public Gradients backward(INDArray dOut, INDArray x, INDArray gain, Forward forward) {
    INDArray xs = RowMajor.input("x", x);
    INDArray dy = RowMajor.sameShape("dOut", dOut, "x", xs);
    INDArray g = RowMajor.vector("gain", gain, xs.columns());
    if (forward == null) {
      throw new IllegalArgumentException("forward: must be the result of forward(x, gain)");
    }
    return backward(dy, xs, g,
        RowMajor.vector("forward.inverseRms", forward.inverseRms(), xs.rows()));
  }

  /** The backward pass on checked, dense FP32 arrays. */
  Gradients backward(INDArray dy, INDArray xs, INDArray g, INDArray inv) {
    int rows = xs.rows();
    int h = xs.columns();
    INDArray dx = Nd4j.createUninitialized(DataType.FLOAT, rows, h);
    double[] dGain = new double[h];
    FloatBuffer xb = Arrays2.floats(xs);
    FloatBuffer db = Arrays2.floats(dy);
    FloatBuffer ib = Arrays2.floats(inv);
    FloatBuffer ob = Arrays2.floats(dx);
    RowMajor.Scratch scratch = RowMajor.Scratch.get();
    float[] gains = scratch.floats(0, h);
    Arrays2.floats(g).get(0, gains, 0, h);
    float[] row = scratch.floats(1, h);
    float[] d = scratch.floats(2, h);
    for (int t = 0; t < rows; t++) {
      xb.get(t * h, row, 0, h);
      db.get(t * h, d, 0, h);
      double r = ib.get(t);
      double s = 0;
      for (int i = 0; i < h; i++) {
        double dv = (double) d[i] * row[i];
        s += gains[i] * dv;
        dGain[i] += dv * r;
      }
      float rf = (float) r;
      float c = (float) (r * r * r * s / h);
      for (int i = 0; i < h; i++) {
        d[i] = rf * gains[i] * d[i] - row[i] * c;
      }
      ob.put(t * h, d, 0, h);
    }
    RowMajor.keep(xs, dy, g, inv, dx);
    return new Gradients(dx, Nd4j.createFromArray(dGain).castTo(DataType.FLOAT));
  }
}
