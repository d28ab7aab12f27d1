package io.hyperframes.nd4j;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.factory.Nd4j;
import org.nd4j.linalg.indexing.NDArrayIndex;

/**
 * Mixed-precision matmul against an FP64 reference over a shape matrix (M, N, K in {1, 7, 64,
 * 255, 1024, 4096} where memory and time allow), input types, transposes and views.
 *
 * <p>Bound (Higham 2002, Theorem 3.5 for an FP32 accumulation of length K; inputs are exact in
 * their format so the reference uses the same values): |c − ĉ| ≤ γ_K · Σ|a||b| with
 * γ_K = K·2^-24 / (1 − K·2^-24), plus 2^-8 relative when the output is BF16. Checked on up to 64
 * sampled elements per case (the FP64 reference of every element of a 4096³ product would take
 * minutes).
 */
class MatmulCorrectnessTest {

  static final int[] SIZES = {1, 7, 64, 255, 1024, 4096};
  static final double U32 = Math.scalb(1.0, -24);

  static Stream<Arguments> cases() {
    List<Arguments> out = new ArrayList<>();
    for (int m : SIZES) {
      for (int n : SIZES) {
        for (int k : SIZES) {
          double work = (double) m * n * k;
          boolean fits = work <= (1L << 28) && (double) m * k <= (1 << 24)
              && (double) k * n <= (1 << 24) && (double) m * n <= (1 << 24);
          if (!fits) {
            continue;
          }
          DataType type = switch ((m + n + k) % 3) {
            case 0 -> DataType.FLOAT;
            case 1 -> DataType.BFLOAT16;
            default -> DataType.FLOAT16;
          };
          out.add(Arguments.of(m, n, k, type, (m + k) % 2 == 0, (n + k) % 2 == 1,
              (m * n) % 2 == 0));
        }
      }
    }
    return out.stream();
  }

  @ParameterizedTest(name = "{0}x{1}x{2} {3} transA={4} transB={5} view={6}")
  @MethodSource("cases")
  void matchesFp64Reference(int m, int n, int k, DataType type, boolean transA, boolean transB,
      boolean view) {
    Random rnd = new Random(31L * m + 17L * n + k);
    Nd4j.getRandom().setSeed(rnd.nextLong());
    INDArray a = operand(transA ? k : m, transA ? m : k, type, view, rnd);
    INDArray b = operand(transB ? n : k, transB ? k : n, type, view, rnd);
    INDArray c = Nd4j.createUninitialized(DataType.FLOAT, m, n);
    Matmul.gemm(a, transA, b, transB, c, 1f, 0f);
    double[][] av = Fp64.values(transA ? a.transpose() : a);
    double[][] bv = Fp64.values(transB ? b.transpose() : b);
    double gamma = k * U32 / (1 - k * U32);
    for (int s = 0; s < Math.min(64, m * n); s++) {
      int i = rnd.nextInt(m);
      int j = rnd.nextInt(n);
      double exact = Fp64.dot(av, bv, i, j);
      double got = c.getDouble(i, j);
      double bound = gamma * Fp64.absDot(av, bv, i, j) + 1e-30;
      assertTrue(Math.abs(got - exact) <= bound, String.format(
          "c[%d,%d] = %s, FP64 %s, |error| %.3g > bound %.3g", i, j, got, exact,
          Math.abs(got - exact), bound));
    }
  }

  /** Uniform(−1, 1) values; as a view inside a larger array when {@code view}. */
  static INDArray operand(int rows, int cols, DataType type, boolean view, Random rnd) {
    INDArray base = Nd4j.rand(DataType.FLOAT, view ? rows + 3 : rows, view ? cols + 5 : cols)
        .muli(2).subi(1);
    INDArray a = view ? base.get(NDArrayIndex.interval(2, 2 + rows),
        NDArrayIndex.interval(3, 3 + cols)) : base;
    if (type == DataType.FLOAT) {
      return a;
    }
    INDArray converted = Nd4j.create(type, view ? rows + 3 : rows, view ? cols + 5 : cols);
    converted.assign(base);
    return view ? converted.get(NDArrayIndex.interval(2, 2 + rows),
        NDArrayIndex.interval(3, 3 + cols)) : converted;
  }
}
