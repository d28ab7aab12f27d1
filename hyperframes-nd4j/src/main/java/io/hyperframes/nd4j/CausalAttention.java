package io.hyperframes.nd4j;

import static org.bytedeco.dnnl.global.dnnl.dnnl_bf16;
import static org.bytedeco.dnnl.global.dnnl.dnnl_f32;

import java.lang.ref.Reference;
import java.nio.FloatBuffer;
import java.nio.ShortBuffer;
import java.util.Arrays;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.memory.MemoryWorkspace;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.factory.Nd4j;

/**
 * Causal scaled dot-product attention of one sequence and one head, forward and backward,
 * tiled as FlashAttention-2 (Dao 2023, "FlashAttention-2: Faster Attention with Better
 * Parallelism and Work Partitioning", arXiv 2307.08691, Algorithms 1 and 2):
 * {@code out = softmax(scale · q·kᵀ + causal mask) · v}.
 *
 * <p>The scores are computed for a tile of queries against a tile of keys at a time, with a
 * running maximum and sum per query (the online softmax of Milakov and Gimelshein 2018, arXiv
 * 1805.02867), so the T×T score and probability matrices are never held. Working memory beside
 * the inputs and outputs is a few tile² buffers and O(T) statistics ({@link #workingBytes()}
 * reports what a call allocated). Key tiles above the diagonal are skipped; the diagonal tile is
 * masked. The forward pass keeps, per query, the log-sum-exp of its scores, from which the
 * backward pass recomputes each probability tile instead of storing it.
 *
 * <p>Precision: {@code q}, {@code k} and {@code v} are FP32 or BF16, all the same. The five
 * products per tile pair run on oneDNN's matmul with FP32 accumulation. With BF16 inputs the
 * probabilities and the score gradients are rounded to BF16 (to nearest, ties to even) before
 * they enter a product, as FlashAttention's half-precision kernels do; the softmax statistics,
 * the output and every gradient are FP32. Each output element is a convex combination of values,
 * so its error against exact arithmetic is bounded by about (2u + d·2⁻²⁴)·max|v| plus the
 * rounding of the probabilities, u = 2⁻⁸ for BF16 and 2⁻²⁴ for FP32 (Higham 2002, §3.1);
 * {@code CausalAttentionTest} checks the bounds against an FP64 reference.
 *
 * <p>Needs oneDNN (every product runs there): {@link #available()} says whether it loaded. An
 * instance owns its tile buffers and is not thread-safe: use one per thread.
 */
public final class CausalAttention {

  /**
   * The default tile: 256 queries by 256 keys. Each tile pair costs a few oneDNN calls whose
   * fixed cost dominates small tiles on 2 cores: at T = 512, d = 64 (BF16, AttentionBenchmark)
   * the forward and backward took 5.3 ms with 64-token tiles and 2.2 ms with 256 (docs/performance.md).
   */
  public static final int DEFAULT_TILE = 256;

  private final int tile;
  private final DnnlKernels dnnl;
  private long workingBytes;

  /** Attention with tiles of {@code tile} queries by {@code tile} keys, in [8, 1024]. */
  public CausalAttention(int tile) {
    if (tile < 8 || tile > 1024) {
      throw new IllegalArgumentException("tile: must be in [8, 1024], got " + tile);
    }
    if (!available()) {
      throw new IllegalStateException("CausalAttention needs oneDNN: "
          + Kernels.cpu().fallbackReason());
    }
    this.tile = tile;
    this.dnnl = Kernels.cpu().dnnl();
  }

  /** Attention with {@link #DEFAULT_TILE}. */
  public CausalAttention() {
    this(DEFAULT_TILE);
  }

  /** Whether oneDNN loaded, which every product of this kernel runs on. */
  public static boolean available() {
    return Kernels.cpu().dnnl() != null;
  }

  /**
   * The forward pass's results.
   *
   * @param out the attention output, FP32 [T, d]
   * @param logSumExp per query, the log of the sum of its exponentiated scaled scores, FP32 [T]:
   *     what the backward pass needs besides the inputs and the output
   */
  public record Forward(INDArray out, INDArray logSumExp) {}

  /** The gradients of a loss with respect to q, k and v, each FP32 [T, d]. */
  public record Gradients(INDArray dq, INDArray dk, INDArray dv) {}

  /**
   * The forward pass.
   *
   * @param q queries [T, d], FP32 or BF16
   * @param k keys [T, d], of q's type
   * @param v values [T, d], of q's type
   * @param scale the factor on the scores, finite and positive (usually 1/√d)
   * @throws IllegalArgumentException naming the argument when a shape, type or value is wrong
   */
  public Forward forward(INDArray q, INDArray k, INDArray v, double scale) {
    workingBytes = 0;
    Inputs in = inputs(q, k, v, scale);
    int n = in.t;
    int d = in.d;
    INDArray out = Nd4j.zeros(DataType.FLOAT, n, d);
    INDArray lse = Nd4j.create(DataType.FLOAT, n);
    // In FP32 the probabilities overwrite the scores they come from; in BF16 they get a tile.
    long s = scratch(0, DataType.FLOAT);
    long p = in.bf16 ? scratch(2, DataType.BFLOAT16) : s;
    FloatBuffer sb = Arrays2.floats(s, (long) tile * tile);
    ShortBuffer ph = in.bf16 ? Arrays2.shorts(p, (long) tile * tile) : null;
    FloatBuffer ob = Arrays2.floats(Arrays2.address(out), (long) n * d);
    FloatBuffer lb = Arrays2.floats(Arrays2.address(lse), n);
    float[] max = new float[tile];
    float[] sum = new float[tile];
    float[] next = new float[tile];
    float[] values = new float[Math.max(tile, d)];
    short[] halves = new short[tile];
    workingBytes += 4L * tile * 4 + 2L * tile + 4L * Math.max(tile, d);
    int type = in.dnnlType();
    float alpha = (float) scale;
    for (int i0 = 0; i0 < n; i0 += tile) {
      int bq = Math.min(tile, n - i0);
      Arrays.fill(max, Float.NEGATIVE_INFINITY);
      Arrays.fill(sum, 0f);
      for (int j0 = 0; j0 < i0 + bq; j0 += tile) {
        int bk = Math.min(tile, n - j0);
        // S = scale · Q_i · K_jᵀ
        gemm(in.row(in.q, i0), in.tile(in.q, bq), in.row(in.k, j0),
            in.tile(in.k, bk).transposed(), s, dense(bq, bk, dnnl_f32), alpha, 0f);
        // Each row minus its new running maximum (masked: −∞), then exp on oneDNN's vectorised
        // kernel, then the sums, the BF16 rounding and the rescaling of the output so far.
        for (int r = 0; r < bq; r++) {
          int valid = Math.min(bk, i0 + r - j0 + 1);
          int row = r * bk;
          sb.get(row, values, 0, bk);
          float m = Math.max(max[r], rowMax(values, valid));
          for (int c = 0; c < bk; c++) {
            values[c] = c < valid ? values[c] - m : Float.NEGATIVE_INFINITY;
          }
          sb.put(row, values, 0, bk);
          next[r] = valid > 0 ? m : max[r];
        }
        exp(s, bq, bk);
        for (int r = 0; r < bq; r++) {
          int valid = Math.min(bk, i0 + r - j0 + 1);
          int row = r * bk;
          sb.get(row, values, 0, bk);
          float total = rowSum(values, valid);
          if (valid < bk) {
            // oneDNN's exp of −∞ is its smallest normal, not 0: the mask is exact here.
            Arrays.fill(values, Math.max(valid, 0), bk, 0f);
            if (ph == null) {
              sb.put(row, values, 0, bk);
            }
          }
          if (ph != null) {
            ph.put(row, Arrays2.bf16(values, halves, bk), 0, bk);
          }
          float correction = valid > 0 ? (float) Math.exp(max[r] - next[r]) : 1f;
          if (correction != 1f) {
            int at = (i0 + r) * d;
            ob.get(at, values, 0, d);
            for (int c = 0; c < d; c++) {
              values[c] *= correction;
            }
            ob.put(at, values, 0, d);
          }
          sum[r] = sum[r] * correction + total;
          max[r] = next[r];
        }
        // O_i += P · V_j
        gemm(p, dense(bq, bk, type), in.row(in.v, j0), in.tile(in.v, bk),
            Arrays2.address(out) + 4L * i0 * d, dense(bq, d, dnnl_f32), 1f, 1f);
      }
      for (int r = 0; r < bq; r++) {
        int at = (i0 + r) * d;
        float inv = 1f / sum[r];
        for (int c = 0; c < d; c++) {
          ob.put(at + c, ob.get(at + c) * inv);
        }
        lb.put(i0 + r, max[r] + (float) Math.log(sum[r]));
      }
    }
    in.keepReachable();
    Reference.reachabilityFence(out);
    Reference.reachabilityFence(lse);
    return new Forward(out, lse);
  }

  /**
   * The backward pass: the gradients for {@code dOut}, the gradient of the loss with respect to
   * the forward pass's output, recomputing each probability tile from the saved log-sum-exp.
   *
   * @param dOut [T, d], FP32 or q's type
   * @throws IllegalArgumentException naming the argument when a shape, type or value is wrong,
   *     or when {@code forward} is not of these inputs' shape
   */
  public Gradients backward(INDArray q, INDArray k, INDArray v, Forward forward, INDArray dOut,
      double scale) {
    workingBytes = 0;
    Inputs in = inputs(q, k, v, scale);
    int n = in.t;
    int d = in.d;
    if (forward == null || forward.out() == null || forward.logSumExp() == null) {
      throw new IllegalArgumentException("forward: must be the result of forward(q, k, v)");
    }
    if (forward.out().rows() != n || forward.out().columns() != d
        || forward.logSumExp().length() != n) {
      throw new IllegalArgumentException("forward: out " + Arrays.toString(forward.out().shape())
          + " and logSumExp " + Arrays.toString(forward.logSumExp().shape()) + " do not fit q "
          + Arrays.toString(q.shape()));
    }
    Arrays2.check2d("dOut", dOut, DataType.FLOAT, DataType.BFLOAT16);
    if (dOut.rows() != n || dOut.columns() != d) {
      throw new IllegalArgumentException("dOut: shape " + Arrays.toString(dOut.shape())
          + " must be q's " + Arrays.toString(q.shape()));
    }
    INDArray out = dense(forward.out(), DataType.FLOAT);
    INDArray lse = dense(forward.logSumExp().reshape(n), DataType.FLOAT);
    INDArray dO32 = dense(dOut, DataType.FLOAT);
    INDArray dOc = in.bf16 ? copy(dOut, DataType.BFLOAT16) : dO32;
    // D_t = dO_t · O_t (FlashAttention-2, Algorithm 2, line 4)
    FloatBuffer ob = Arrays2.floats(Arrays2.address(out), (long) n * d);
    FloatBuffer gb = Arrays2.floats(Arrays2.address(dO32), (long) n * d);
    FloatBuffer lb = Arrays2.floats(Arrays2.address(lse), n);
    float[] dot = new float[n];
    workingBytes += 4L * n;
    for (int t = 0; t < n; t++) {
      double acc = 0;
      for (int c = 0; c < d; c++) {
        acc += (double) gb.get(t * d + c) * ob.get(t * d + c);
      }
      dot[t] = (float) acc;
    }
    INDArray dq = Nd4j.zeros(DataType.FLOAT, n, d);
    INDArray dk = Nd4j.zeros(DataType.FLOAT, n, d);
    INDArray dv = Nd4j.zeros(DataType.FLOAT, n, d);
    long s = scratch(0, DataType.FLOAT);
    long dp = scratch(1, DataType.FLOAT);
    long pc = in.bf16 ? scratch(2, DataType.BFLOAT16) : s;
    long dsc = in.bf16 ? scratch(3, DataType.BFLOAT16) : dp;
    FloatBuffer sb = Arrays2.floats(s, (long) tile * tile);
    FloatBuffer dpb = Arrays2.floats(dp, (long) tile * tile);
    ShortBuffer pcb = in.bf16 ? Arrays2.shorts(pc, (long) tile * tile) : null;
    ShortBuffer dsb = in.bf16 ? Arrays2.shorts(dsc, (long) tile * tile) : null;
    int type = in.dnnlType();
    float alpha = (float) scale;
    long dO = Arrays2.address(dOc);
    float[] values = new float[tile];
    float[] grads = new float[tile];
    short[] halves = new short[tile];
    workingBytes += 8L * tile + 2L * tile;
    int esize = in.bf16 ? 2 : 4;
    for (int j0 = 0; j0 < n; j0 += tile) {
      int bk = Math.min(tile, n - j0);
      long dkj = Arrays2.address(dk) + 4L * j0 * d;
      long dvj = Arrays2.address(dv) + 4L * j0 * d;
      for (int i0 = j0; i0 < n; i0 += tile) {
        int bq = Math.min(tile, n - i0);
        long dOi = dO + (long) esize * i0 * d;
        // S = scale · Q_i · K_jᵀ, P = exp(S − L_i), masked above the diagonal
        gemm(in.row(in.q, i0), in.tile(in.q, bq), in.row(in.k, j0),
            in.tile(in.k, bk).transposed(), s, dense(bq, bk, dnnl_f32), alpha, 0f);
        for (int r = 0; r < bq; r++) {
          int valid = Math.min(bk, i0 + r - j0 + 1);
          float l = lb.get(i0 + r);
          int row = r * bk;
          sb.get(row, values, 0, bk);
          for (int c = 0; c < bk; c++) {
            values[c] = c < valid ? values[c] - l : Float.NEGATIVE_INFINITY;
          }
          sb.put(row, values, 0, bk);
        }
        exp(s, bq, bk);
        for (int r = 0; r < bq; r++) {
          int valid = Math.min(bk, i0 + r - j0 + 1);
          if (valid < bk || pcb != null) {
            sb.get(r * bk, values, 0, bk);
            if (valid < bk) {
              Arrays.fill(values, Math.max(valid, 0), bk, 0f);
              sb.put(r * bk, values, 0, bk);
            }
            if (pcb != null) {
              pcb.put(r * bk, Arrays2.bf16(values, halves, bk), 0, bk);
            }
          }
        }
        // dV_j += Pᵀ · dO_i
        gemm(pc, dense(bq, bk, type).transposed(), dOi, dense(bq, d, type), dvj,
            dense(bk, d, dnnl_f32), 1f, 1f);
        // dP = dO_i · V_jᵀ
        gemm(dOi, dense(bq, d, type), in.row(in.v, j0), in.tile(in.v, bk).transposed(), dp,
            dense(bq, bk, dnnl_f32), 1f, 0f);
        // dS = P ∘ (dP − D_i)
        for (int r = 0; r < bq; r++) {
          float di = dot[i0 + r];
          int row = r * bk;
          sb.get(row, values, 0, bk);
          dpb.get(row, grads, 0, bk);
          for (int c = 0; c < bk; c++) {
            grads[c] = values[c] * (grads[c] - di);
          }
          if (dsb != null) {
            dsb.put(row, Arrays2.bf16(grads, halves, bk), 0, bk);
          } else {
            dpb.put(row, grads, 0, bk);
          }
        }
        // dQ_i += scale · dS · K_j ; dK_j += scale · dSᵀ · Q_i
        gemm(dsc, dense(bq, bk, type), in.row(in.k, j0), in.tile(in.k, bk),
            Arrays2.address(dq) + 4L * i0 * d, dense(bq, d, dnnl_f32), alpha, 1f);
        gemm(dsc, dense(bq, bk, type).transposed(), in.row(in.q, i0), in.tile(in.q, bq), dkj,
            dense(bk, d, dnnl_f32), alpha, 1f);
      }
    }
    in.keepReachable();
    Reference.reachabilityFence(out);
    Reference.reachabilityFence(lse);
    Reference.reachabilityFence(dO32);
    Reference.reachabilityFence(dOc);
    Reference.reachabilityFence(dq);
    Reference.reachabilityFence(dk);
    Reference.reachabilityFence(dv);
    return new Gradients(dq, dk, dv);
  }

  /**
   * The bytes the last call allocated beyond its inputs and its results: the tile buffers, the
   * per-query statistics and the copies of inputs it had to make (q, k or v not of the computing
   * type or without adjacent columns, and dOut or the forward's results when not dense FP32, are
   * copied once; q, k and v may be column ranges of a wider matrix). Linear in T for a fixed
   * tile.
   */
  public long workingBytes() {
    return workingBytes;
  }

  /** The tile. */
  public int tile() {
    return tile;
  }

  // -------------------------------------------------------------------------------------------

  /** The tile buffers: two FP32, two BF16, each made at its first use and kept. */
  private final INDArray[] tiles = new INDArray[4];

  /** Tile buffer {@code slot} (0 and 1 FP32, 2 and 3 BF16), counted in the working bytes. */
  private long scratch(int slot, DataType type) {
    if (tiles[slot] == null) {
      // Kept from call to call, so never in the caller's workspace (which a step resets).
      MemoryWorkspace none = Nd4j.getWorkspaceManager().scopeOutOfWorkspaces();
      try {
        tiles[slot] = Nd4j.create(type, (long) tile * tile);
      } finally {
        none.close();
      }
    }
    workingBytes += (long) tile * tile * (type == DataType.FLOAT ? 4 : 2);
    return Arrays2.address(tiles[slot]);
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

  private record ExpKey(long rows, long cols) {}

  /** exp of the dense FP32 tile [rows, cols] at {@code address}, in place, on oneDNN. */
  private void exp(long address, int rows, int cols) {
    dnnl.run(new ExpKey(rows, cols), () -> {
      DnnlKernels.Plan p = new DnnlKernels.Plan();
      p.add(dnnl.exp(rows, cols, cols));
      return p;
    }, p -> {
      NativePrimitive k = p.primitives.get(0);
      k.bind(0, address);
      k.bind(1, address);
      k.execute();
    });
  }

  private void gemm(long a, DnnlKernels.Operand opA, long b, DnnlKernels.Operand opB, long c,
      DnnlKernels.Operand opC, float alpha, float beta) {
    Matmul.gemmAt(dnnl, a, opA, b, opB, c, opC, alpha, beta);
  }

  private static DnnlKernels.Operand dense(long rows, long cols, int type) {
    return DnnlKernels.Operand.dense(rows, cols, type);
  }

  /** The array when it is dense row-major of {@code type} and not a view, else a copy. */
  private INDArray dense(INDArray a, DataType type) {
    if (a.dataType() == type && !a.isView() && Arrays2.isDenseRowMajor(a)) {
      return a;
    }
    return copy(a, type);
  }

  /**
   * The array itself when it is of {@code type} with adjacent columns and rows at any stride
   * (a column range of a wider matrix, such as one head of a fused QKV product), else a dense
   * copy: the products read it through its row stride.
   */
  private INDArray rows(INDArray a, DataType type) {
    boolean adjacent = a.columns() == 1 || a.stride(1) == 1;
    if (a.dataType() == type && adjacent && (a.rows() == 1 || a.stride(0) >= a.columns())) {
      return a;
    }
    return copy(a, type);
  }

  /** Elements from one row of {@code a} to the next. */
  private static long rowStride(INDArray a) {
    return a.rows() > 1 ? a.stride(0) : a.columns();
  }

  private INDArray copy(INDArray a, DataType type) {
    workingBytes += a.length() * (type == DataType.FLOAT ? 4 : 2);
    return a.castTo(type).dup('c');
  }

  /** The checked inputs, dense, with their row addresses. */
  private final class Inputs {
    final INDArray q;
    final INDArray k;
    final INDArray v;
    final int t;
    final int d;
    final boolean bf16;
    final DataType type;

    Inputs(INDArray q, INDArray k, INDArray v, DataType type) {
      this.type = type;
      this.bf16 = type == DataType.BFLOAT16;
      this.q = rows(q, type);
      this.k = rows(k, type);
      this.v = rows(v, type);
      this.t = q.rows();
      this.d = q.columns();
    }

    int dnnlType() {
      return bf16 ? dnnl_bf16 : dnnl_f32;
    }

    long row(INDArray a, int row) {
      return Arrays2.address(a) + (long) (bf16 ? 2 : 4) * row * rowStride(a);
    }

    /** {@code count} rows of q, k or v from the row {@link #row} addressed, as an operand. */
    DnnlKernels.Operand tile(INDArray a, int count) {
      return new DnnlKernels.Operand(count, d, rowStride(a), 1, dnnlType());
    }

    void keepReachable() {
      Reference.reachabilityFence(q);
      Reference.reachabilityFence(k);
      Reference.reachabilityFence(v);
    }
  }

  private static void likeQ(String name, INDArray a, INDArray q) {
    if (a.dataType() != q.dataType()) {
      throw new IllegalArgumentException(name + ": data type " + a.dataType()
          + " differs from q's " + q.dataType());
    }
    if (a.rows() != q.rows() || a.columns() != q.columns()) {
      throw new IllegalArgumentException(name + ": shape " + Arrays.toString(a.shape())
          + " must be q's " + Arrays.toString(q.shape()));
    }
  }

  private Inputs inputs(INDArray q, INDArray k, INDArray v, double scale) {
    Arrays2.check2d("q", q, DataType.FLOAT, DataType.BFLOAT16);
    Arrays2.check2d("k", k, DataType.FLOAT, DataType.BFLOAT16);
    Arrays2.check2d("v", v, DataType.FLOAT, DataType.BFLOAT16);
    if (q.dataType() != DataType.FLOAT && q.dataType() != DataType.BFLOAT16) {
      throw new IllegalArgumentException("q: must be FP32 or BF16, got " + q.dataType());
    }
    likeQ("k", k, q);
    likeQ("v", v, q);
    if (q.rows() > Integer.MAX_VALUE / Math.max(1, q.columns())) {
      throw new IllegalArgumentException("q: more than 2^31 elements, shape "
          + Arrays.toString(q.shape()));
    }
    if (!(scale > 0) || !Double.isFinite(scale)) {
      throw new IllegalArgumentException("scale: must be finite and positive, got " + scale);
    }
    return new Inputs(q, k, v, q.dataType());
  }
}
