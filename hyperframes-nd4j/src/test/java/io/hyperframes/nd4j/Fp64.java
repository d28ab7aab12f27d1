package io.hyperframes.nd4j;

import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;

/** FP64 reference computations on the exact values held by ND4J arrays. */
final class Fp64 {
  private Fp64() {}

  /** The array's values as doubles, row-major (respects views and strides). */
  static double[][] values(INDArray a) {
    INDArray d = a.castTo(DataType.DOUBLE);
    double[][] out = new double[a.rows()][a.columns()];
    for (int i = 0; i < out.length; i++) {
      for (int j = 0; j < out[i].length; j++) {
        out[i][j] = d.getDouble(i, j);
      }
    }
    return out;
  }

  static double[][] transpose(double[][] a) {
    double[][] t = new double[a[0].length][a.length];
    for (int i = 0; i < a.length; i++) {
      for (int j = 0; j < a[0].length; j++) {
        t[j][i] = a[i][j];
      }
    }
    return t;
  }

  /** Σ_k a[i][k]·b[k][j]. */
  static double dot(double[][] a, double[][] b, int i, int j) {
    double s = 0;
    for (int k = 0; k < b.length; k++) {
      s += a[i][k] * b[k][j];
    }
    return s;
  }

  /** Σ_k |a[i][k]·b[k][j]|: the scale of rounding errors of the dot product. */
  static double absDot(double[][] a, double[][] b, int i, int j) {
    double s = 0;
    for (int k = 0; k < b.length; k++) {
      s += Math.abs(a[i][k] * b[k][j]);
    }
    return s;
  }

  /** Rounds to the nearest BF16 value (round to nearest even), as oneDNN's conversion does. */
  static double bf16(double v) {
    int bits = Float.floatToRawIntBits((float) v);
    int rounding = 0x7FFF + ((bits >> 16) & 1);
    return Float.intBitsToFloat((bits + rounding) & 0xFFFF0000);
  }
}
