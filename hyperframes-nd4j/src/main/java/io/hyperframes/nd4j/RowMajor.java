package io.hyperframes.nd4j;

import java.lang.ref.Reference;
import java.nio.FloatBuffer;
import java.nio.ShortBuffer;
import java.util.Arrays;
import java.util.stream.IntStream;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.factory.Nd4j;

/**
 * Dense row-major matrices for the element-wise kernels of the transformer block: FP32 inputs
 * read through a buffer, and results of FP32 or BF16 written element by element (BF16 rounded to
 * nearest, ties to even). The caller keeps each array reachable while its buffer is in use.
 */
final class RowMajor {
  private RowMajor() {}

  /** The matrix checked as {@code name}, as dense row-major FP32 (a copy when it is not). */
  static INDArray input(String name, INDArray a) {
    Arrays2.check2d(name, a, DataType.FLOAT, DataType.BFLOAT16);
    if (a.length() > Integer.MAX_VALUE) {
      throw new IllegalArgumentException(name + ": more than 2^31 elements, shape "
          + Arrays.toString(a.shape()));
    }
    return Arrays2.denseFloat(a);
  }

  /** {@code a} checked as {@code name} to have {@code like}'s shape, as dense FP32. */
  static INDArray sameShape(String name, INDArray a, String likeName, INDArray like) {
    INDArray dense = input(name, a);
    if (a.rows() != like.rows() || a.columns() != like.columns()) {
      throw new IllegalArgumentException(name + ": shape " + Arrays.toString(a.shape())
          + " must be " + likeName + "'s " + Arrays.toString(like.shape()));
    }
    return dense;
  }

  /** A vector of {@code length} FP32 values checked as {@code name} ([n] or [1, n]), dense. */
  static INDArray vector(String name, INDArray a, long length) {
    if (a == null) {
      throw new IllegalArgumentException(name + ": must be given");
    }
    if (a.length() != length || (a.rank() == 2 && a.rows() != 1) || a.rank() > 2) {
      throw new IllegalArgumentException(name + ": must be a vector of " + length
          + " values, got shape " + Arrays.toString(a.shape()));
    }
    if (a.dataType() != DataType.FLOAT) {
      throw new IllegalArgumentException(name + ": must be FP32, got " + a.dataType());
    }
    return Arrays2.isDenseRowMajor(a) ? a : a.dup('c');
  }

  /** ε of a normalisation, checked: finite and ≥ 0. */
  static double epsilon(double epsilon) {
    if (!(epsilon >= 0) || !Double.isFinite(epsilon)) {
      throw new IllegalArgumentException("epsilon: must be finite and >= 0, got " + epsilon);
    }
    return epsilon;
  }

  /** Keeps the arrays (and so their native memory) reachable up to this call. */
  static void keep(INDArray... arrays) {
    Reference.reachabilityFence(arrays);
  }

  /** Requires FP32 or BF16 for a result's type. */
  static void checkResultType(String name, DataType type) {
    if (type != DataType.FLOAT && type != DataType.BFLOAT16) {
      throw new IllegalArgumentException(name + ": must be FLOAT or BFLOAT16, got " + type);
    }
  }

  /**
   * Rows from which {@link #forRows} splits a row loop over the cores. Below it a loop is too
   * short for a second thread to pay (a decoded token is one row).
   */
  static final int PARALLEL_ROWS = 64;

  /** A range of rows of a row loop: [from, to). */
  interface RowRange {
    void run(int from, int to);
  }

  /**
   * Runs {@code body} over rows [0, rows): in one call on this thread below
   * {@link #PARALLEL_ROWS} rows or on one core, else in contiguous ranges, one per core, on the
   * fork-join common pool and this thread. Each range is one call, so scratch arrays made inside
   * {@code body} are its own; ranges must write disjoint rows.
   */
  static void forRows(int rows, RowRange body) {
    int cores = Runtime.getRuntime().availableProcessors();
    int chunks = rows < PARALLEL_ROWS || cores < 2 ? 1 : Math.min(cores, rows / 16);
    if (chunks <= 1) {
      body.run(0, rows);
      return;
    }
    IntStream.range(0, chunks).parallel().forEach(c -> body.run(
        (int) ((long) rows * c / chunks), (int) ((long) rows * (c + 1) / chunks)));
  }

  /**
   * Row arrays kept on each thread from call to call, so that a kernel's row loop allocates
   * nothing once warm (a decoded token calls each kernel once per layer: new rows each call made
   * about 180 KB of garbage a token, and the young collections that followed were the decode
   * latency's tail). A kernel takes its arrays at the start of a row range and calls no other
   * kernel, and nothing that could run another kernel's range on this thread, before it is done
   * with them. The arrays hold stale values: each use writes before it reads.
   */
  static final class Scratch {
    private static final ThreadLocal<Scratch> PER_THREAD = ThreadLocal.withInitial(Scratch::new);

    private final float[][] floats = {new float[0], new float[0], new float[0], new float[0]};
    private short[] shorts = new short[0];

    private Scratch() {}

    /** This thread's arrays. */
    static Scratch get() {
      return PER_THREAD.get();
    }

    /** Float array number {@code slot} (0–3) of at least {@code n} values. */
    float[] floats(int slot, int n) {
      if (floats[slot].length < n) {
        floats[slot] = new float[n];
      }
      return floats[slot];
    }

    /** The short array (BF16 bits) of at least {@code n} values. */
    short[] shorts(int n) {
      if (shorts.length < n) {
        shorts = new short[n];
      }
      return shorts;
    }
  }

  /** A new result matrix and its writer. */
  static final class Output {
    final INDArray array;
    private final FloatBuffer floats;
    private final ShortBuffer halves;

    Output(DataType type, long rows, long cols) {
      this(Nd4j.createUninitialized(type, rows, cols));
    }

    /** Writes into {@code array}: dense row-major FP32 or BF16, checked by the caller. */
    Output(INDArray array) {
      this.array = array;
      long n = array.length();
      boolean fp32 = array.dataType() == DataType.FLOAT;
      floats = fp32 ? Arrays2.floats(Arrays2.address(array), n) : null;
      halves = fp32 ? null : Arrays2.shorts(Arrays2.address(array), n);
    }

    /**
     * A writer into {@code out}, checked as {@code name}: dense row-major FP32 or BF16 of
     * {@code rows} × {@code cols}.
     */
    static Output into(String name, INDArray out, long rows, long cols) {
      Arrays2.check2d(name, out, DataType.FLOAT, DataType.BFLOAT16);
      if (out.rows() != rows || out.columns() != cols || !Arrays2.isDenseRowMajor(out)) {
        throw new IllegalArgumentException(name + ": must be a dense row-major [" + rows + ", "
            + cols + "] array, got shape " + Arrays.toString(out.shape()) + " stride "
            + Arrays.toString(out.stride()));
      }
      return new Output(out);
    }

    /**
     * Writes {@code count} values from {@code values} at element {@code index}, rounding BF16
     * results in the caller's {@code scratch} (at least {@code count} long; {@link Scratch}'s
     * shorts): safe from several threads writing disjoint ranges.
     */
    void put(int index, float[] values, int count, short[] scratch) {
      if (floats != null) {
        floats.put(index, values, 0, count);
      } else {
        halves.put(index, Arrays2.bf16(values, scratch, count), 0, count);
      }
    }

    void put(int index, float value) {
      if (floats != null) {
        floats.put(index, value);
      } else {
        halves.put(index, Arrays2.bf16(value));
      }
    }

    INDArray done() {
      Reference.reachabilityFence(array);
      return array;
    }
  }

  /** The largest of the first {@code n} values (−∞ when n ≤ 0), in four independent lanes. */
  static float rowMax(float[] v, int n) {
    float a = Float.NEGATIVE_INFINITY;
    float b = a;
    float c = a;
    float e = a;
    int i = 0;
    for (; i + 3 < n; i += 4) {
      a = v[i] > a ? v[i] : a;
      b = v[i + 1] > b ? v[i + 1] : b;
      c = v[i + 2] > c ? v[i + 2] : c;
      e = v[i + 3] > e ? v[i + 3] : e;
    }
    for (; i < n; i++) {
      a = v[i] > a ? v[i] : a;
    }
    return Math.max(Math.max(a, b), Math.max(c, e));
  }

  /** The sum of the first {@code n} values, in four independent lanes. */
  static float rowSum(float[] v, int n) {
    float a = 0f;
    float b = 0f;
    float c = 0f;
    float e = 0f;
    int i = 0;
    for (; i + 3 < n; i += 4) {
      a += v[i];
      b += v[i + 1];
      c += v[i + 2];
      e += v[i + 3];
    }
    for (; i < n; i++) {
      a += v[i];
    }
    return (a + b) + (c + e);
  }
}
