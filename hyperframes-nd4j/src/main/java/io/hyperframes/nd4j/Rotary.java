package io.hyperframes.nd4j;

import java.nio.FloatBuffer;
import java.util.Arrays;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;

/**
 * Rotary position embeddings (Su et al. 2021, "RoFormer: Enhanced Transformer with Rotary
 * Position Embedding", arXiv 2104.09864, §3.4.2), applied in place to the query or key rows of
 * one sequence. Each head of {@code headDim} columns is rotated pair by pair: column {@code i}
 * with column {@code i + headDim/2} (the "rotate half" pairing of GPT-NeoX and of Hugging Face's
 * Llama, {@code x·cos + rotate_half(x)·sin}), by the angle {@code p·θᵢ}, {@code θᵢ =
 * base^(−2i/headDim)}, where p is the row's position. The backward pass is the inverse rotation
 * (a rotation's transpose), applied to the gradient.
 *
 * <p>The cosines and sines are computed once, in FP64, for positions 0 to {@code maxPositions −
 * 1} and kept in FP32; each rotated value is then within about 2⁻²³ of its magnitude
 * ({@code TransformerKernelsTest}). Immutable: thread-safe on different arrays.
 */
public final class Rotary {
  private final int headDim;
  private final int maxPositions;
  private final double base;
  private final float[] cos;
  private final float[] sin;

  /**
   * Rotations for heads of {@code headDim} columns (even, ≥ 2) at positions up to
   * {@code maxPositions − 1} (≥ 1), with frequency base {@code base} (&gt; 1; 10 000 in RoFormer and
   * Llama 2, 500 000 in Llama 3).
   */
  public Rotary(int headDim, int maxPositions, double base) {
    if (headDim < 2 || headDim % 2 != 0) {
      throw new IllegalArgumentException("headDim: must be even and >= 2, got " + headDim);
    }
    if (maxPositions < 1 || (long) maxPositions * headDim / 2 > Integer.MAX_VALUE) {
      throw new IllegalArgumentException("maxPositions: must be in [1, 2^32 / headDim], got "
          + maxPositions);
    }
    if (!(base > 1) || !Double.isFinite(base)) {
      throw new IllegalArgumentException("base: must be finite and > 1, got " + base);
    }
    this.headDim = headDim;
    this.maxPositions = maxPositions;
    this.base = base;
    int half = headDim / 2;
    cos = new float[maxPositions * half];
    sin = new float[maxPositions * half];
    for (int i = 0; i < half; i++) {
      double theta = Math.pow(base, -2.0 * i / headDim);
      for (int p = 0; p < maxPositions; p++) {
        cos[p * half + i] = (float) Math.cos(p * theta);
        sin[p * half + i] = (float) Math.sin(p * theta);
      }
    }
  }

  /** Columns of a head. */
  public int headDim() {
    return headDim;
  }

  /** Positions the tables cover. */
  public int maxPositions() {
    return maxPositions;
  }

  /** The frequency base. */
  public double base() {
    return base;
  }

  /**
   * Rotates, in place, rows [T, heads·headDim] of one sequence, row {@code t} at position
   * {@code firstPosition + t}.
   *
   * @param x FP32, rows at any stride, columns adjacent (a column range of a wider dense matrix,
   *     as the query and key columns of a fused QKV product, is fine)
   * @throws IllegalArgumentException naming the argument when the type or shape does not fit or
   *     a position is past the tables
   */
  public void rotate(INDArray x, int firstPosition) {
    apply("x", x, firstPosition, 1f);
  }

  /**
   * The backward pass of {@link #rotate}, in place: the gradient with respect to the rotated
   * rows becomes the gradient with respect to the rows before rotation (the inverse rotation).
   */
  public void rotateBack(INDArray dx, int firstPosition) {
    apply("dx", dx, firstPosition, -1f);
  }

  private void apply(String name, INDArray x, int firstPosition, float direction) {
    Arrays2.check2d(name, x, DataType.FLOAT);
    long rows = x.rows();
    long cols = x.columns();
    if (cols % headDim != 0) {
      throw new IllegalArgumentException(name + ": " + cols + " columns are not whole heads of "
          + headDim);
    }
    if (cols > 1 && x.stride(1) != 1) {
      throw new IllegalArgumentException(name + ": columns must be adjacent (stride "
          + Arrays.toString(x.stride()) + ")");
    }
    if (firstPosition < 0 || firstPosition + rows > maxPositions) {
      throw new IllegalArgumentException("firstPosition: rows at positions " + firstPosition
          + " to " + (firstPosition + rows - 1) + " are outside [0, " + maxPositions + ")");
    }
    long rowStride = rows > 1 ? x.stride(0) : cols;
    FloatBuffer b = Arrays2.floats(Arrays2.address(x), (rows - 1) * rowStride + cols);
    int half = headDim / 2;
    for (int t = 0; t < rows; t++) {
      int row = (int) (t * rowStride);
      int table = (firstPosition + t) * half;
      for (int head = row; head < row + cols; head += headDim) {
        for (int i = 0; i < half; i++) {
          float c = cos[table + i];
          float s = direction * sin[table + i];
          float a = b.get(head + i);
          float z = b.get(head + half + i);
          b.put(head + i, a * c - z * s);
          b.put(head + half + i, z * c + a * s);
        }
      }
    }
    RowMajor.keep(x);
  }
}
