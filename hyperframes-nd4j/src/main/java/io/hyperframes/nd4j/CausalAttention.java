package io.hyperframes.nd4j;

import static org.bytedeco.dnnl.global.dnnl.dnnl_bf16;
import static org.bytedeco.dnnl.global.dnnl.dnnl_f32;

import java.lang.ref.Reference;
import java.nio.FloatBuffer;
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
 * <p>Inputs and outputs may be column ranges of wider matrices (one head of a fused QKV product
 * and of a layer's attention output): inputs are gathered into dense row buffers of T·d
 * elements (oneDNN 2.5's AMX matmul takes dense operands only), outputs accumulate in such a
 * buffer and are copied into their columns at the end. Row buffers and tiles are kept from call
 * to call.
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
   * the forward and backward took 5.3 ms with 64-token tiles and 2.2 ms with 256
   * (docs/performance.md).
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
   * The forward pass, into a new output array.
   *
   * @param q queries [T, d], FP32 or BF16; dense, or a column range of a wider matrix (one head
   *     of a fused QKV product)
   * @param k keys [T, d], of q's type
   * @param v values [T, d], of q's type
   * @param scale the factor on the scores, finite and positive (usually 1/√d)
   * @throws IllegalArgumentException naming the argument when a shape, type or value is wrong
   */
  public Forward forward(INDArray q, INDArray k, INDArray v, double scale) {
    Arrays2.check2d("q", q, DataType.FLOAT, DataType.BFLOAT16);
    return forward(q, k, v, scale, Nd4j.createUninitialized(DataType.FLOAT, q.rows(),
        q.columns()));
  }

  /**
   * The forward pass, written into {@code out}: FP32 [T, d], dense or a column range of a wider
   * FP32 matrix (one head's columns of a layer's attention output), so that a caller running
   * every head of a layer needs no copy of its own. The result's {@link Forward#out()} is
   * {@code out}; it must stay unchanged until the backward pass has read it.
   *
   * @throws IllegalArgumentException naming the argument when a shape, type or value is wrong
   */
  public Forward forward(INDArray q, INDArray k, INDArray v, double scale, INDArray out) {
    workingBytes = 0;
    Inputs in = inputs(q, k, v, scale);
    int n = in.t;
    int d = in.d;
    Rows dst = destination("out", out, n, d);
    INDArray lse = Nd4j.create(DataType.FLOAT, n);
    long acc = accumulator(SLOT_OUT, dst);
    // In FP32 the probabilities overwrite the scores they come from; in BF16 they get a tile.
    long s = scratch(0, DataType.FLOAT);
    long p = in.bf16 ? scratch(2, DataType.BFLOAT16) : s;
    FloatBuffer sb = Arrays2.floats(s, (long) tile * tile);
    FloatBuffer ob = Arrays2.floats(acc, (long) n * d);
    FloatBuffer lb = Arrays2.floats(Arrays2.address(lse), n);
    float[] max = new float[tile];
    float[] sum = new float[tile];
    float[] next = new float[tile];
    float[] values = new float[Math.max(tile, d)];
    workingBytes += 4L * tile * 4 + 4L * Math.max(tile, d);
    int type = in.dnnlType();
    float alpha = (float) scale;
    for (int i0 = 0; i0 < n; i0 += tile) {
      int bq = Math.min(tile, n - i0);
      Arrays.fill(max, Float.NEGATIVE_INFINITY);
      Arrays.fill(sum, 0f);
      for (int j0 = 0; j0 < i0 + bq; j0 += tile) {
        int bk = Math.min(tile, n - j0);
        // S = scale · Q_i · K_jᵀ
        gemm(in.row(in.q, i0), in.tile(bq), in.row(in.k, j0), in.tile(bk).transposed(), s,
            dense(bq, bk, dnnl_f32), alpha, 0f);
        // Each row minus its new running maximum (masked: −∞), then exp on oneDNN's vectorised
        // kernel, then the sums, the BF16 rounding and the rescaling of the output so far.
        for (int r = 0; r < bq; r++) {
          int valid = Math.min(bk, i0 + r - j0 + 1);
          int row = r * bk;
          sb.get(row, values, 0, bk);
          float m = Math.max(max[r], RowMajor.rowMax(values, valid));
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
          float total = RowMajor.rowSum(values, valid);
          if (valid < bk) {
            // oneDNN's exp of −∞ is its smallest normal, not 0: the mask is exact here.
            Arrays.fill(values, Math.max(valid, 0), bk, 0f);
            sb.put(row, values, 0, bk);
          }
          float correction = valid > 0 ? (float) Math.exp(max[r] - next[r]) : 1f;
          if (correction != 1f && j0 > 0) {
            // (Before the first key tile there is no output yet: the product below sets it.)
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
        if (in.bf16) {
          // P rounded to BF16 (to nearest, ties to even) by one oneDNN reorder of the tile.
          copy(s, dense(bq, bk, dnnl_f32), p, dense(bq, bk, dnnl_bf16));
        }
        // O_i = P · V_j for the first key tile, O_i += P · V_j after it
        gemm(p, dense(bq, bk, type), in.row(in.v, j0), in.tile(bk),
            acc + 4L * i0 * d, dense(bq, d, dnnl_f32), 1f, j0 == 0 ? 0f : 1f);
      }
      for (int r = 0; r < bq; r++) {
        int at = (i0 + r) * d;
        float inv = 1f / sum[r];
        ob.get(at, values, 0, d);
        for (int c = 0; c < d; c++) {
          values[c] *= inv;
        }
        ob.put(at, values, 0, d);
        lb.put(i0 + r, max[r] + (float) Math.log(sum[r]));
      }
    }
    writeBack(acc, dst);
    in.keepReachable();
    Reference.reachabilityFence(out);
    Reference.reachabilityFence(lse);
    return new Forward(out, lse);
  }

  /**
   * The backward pass, into new gradient arrays: the gradients for {@code dOut}, the gradient of
   * the loss with respect to the forward pass's output, recomputing each probability tile from
   * the saved log-sum-exp.
   *
   * @param dOut [T, d], FP32 or q's type; dense or a column range of a wider matrix
   * @throws IllegalArgumentException naming the argument when a shape, type or value is wrong,
   *     or when {@code forward} is not of these inputs' shape
   */
  public Gradients backward(INDArray q, INDArray k, INDArray v, Forward forward, INDArray dOut,
      double scale) {
    Arrays2.check2d("q", q, DataType.FLOAT, DataType.BFLOAT16);
    long n = q.rows();
    long d = q.columns();
    return backward(q, k, v, forward, dOut, scale, Nd4j.createUninitialized(DataType.FLOAT, n, d),
        Nd4j.createUninitialized(DataType.FLOAT, n, d),
        Nd4j.createUninitialized(DataType.FLOAT, n, d));
  }

  /**
   * The backward pass, written into {@code dq}, {@code dk} and {@code dv}: each FP32 [T, d],
   * dense or a column range of a wider FP32 matrix (one head's columns of the gradient of a fused
   * QKV product), overwritten. The result holds these arrays.
   *
   * @throws IllegalArgumentException naming the argument when a shape, type or value is wrong,
   *     or when {@code forward} is not of these inputs' shape
   */
  public Gradients backward(INDArray q, INDArray k, INDArray v, Forward forward, INDArray dOut,
      double scale, INDArray dq, INDArray dk, INDArray dv) {
    workingBytes = 0;
    Inputs in = inputs(q, k, v, scale);
    int n = in.t;
    int d = in.d;
    checkBackward(q, forward, dOut);
    Rows dqRows = destination("dq", dq, n, d);
    Rows dkRows = destination("dk", dk, n, d);
    Rows dvRows = destination("dv", dv, n, d);
    // FP32 rows of the output and of its gradient, read in place where they are FP32 with
    // adjacent columns (a column range of a wider matrix included).
    INDArray out = floatRows(forward.out());
    INDArray lse = dense(forward.logSumExp().reshape(n), DataType.FLOAT);
    INDArray dO32 = floatRows(dOut);
    Rows outRows = Rows.of(out);
    Rows gRows = Rows.of(dO32);
    // dO in the products' type, dense: in place, gathered or converted.
    long dO = in.bf16 && dOut.dataType() == DataType.BFLOAT16
        ? gather(SLOT_DOUT, Rows.of(rows(dOut, DataType.BFLOAT16)), DataType.BFLOAT16)
        : gather(SLOT_DOUT, gRows, in.bf16 ? DataType.BFLOAT16 : DataType.FLOAT);
    float[] dot = rowDots(outRows, gRows);
    FloatBuffer lb = Arrays2.floats(Arrays2.address(lse), n);
    long dqAcc = accumulator(SLOT_DQ, dqRows);
    long dkAcc = accumulator(SLOT_DK, dkRows);
    long dvAcc = accumulator(SLOT_DV, dvRows);
    long s = scratch(0, DataType.FLOAT);
    long dp = scratch(1, DataType.FLOAT);
    long pc = in.bf16 ? scratch(2, DataType.BFLOAT16) : s;
    long dsc = in.bf16 ? scratch(3, DataType.BFLOAT16) : dp;
    FloatBuffer sb = Arrays2.floats(s, (long) tile * tile);
    FloatBuffer dpb = Arrays2.floats(dp, (long) tile * tile);
    int type = in.dnnlType();
    float alpha = (float) scale;
    float[] values = new float[tile];
    float[] grads = new float[tile];
    workingBytes += 8L * tile;
    int esize = in.bf16 ? 2 : 4;
    for (int j0 = 0; j0 < n; j0 += tile) {
      int bk = Math.min(tile, n - j0);
      long dkj = dkAcc + 4L * j0 * d;
      long dvj = dvAcc + 4L * j0 * d;
      for (int i0 = j0; i0 < n; i0 += tile) {
        int bq = Math.min(tile, n - i0);
        long dOi = dO + (long) esize * i0 * d;
        // The first contribution to a gradient tile sets it, the others add to it.
        float firstKey = i0 == j0 ? 0f : 1f;
        float firstQuery = j0 == 0 ? 0f : 1f;
        probabilities(in, i0, bq, j0, bk, alpha, s, sb, lb, values);
        if (in.bf16) {
          copy(s, dense(bq, bk, dnnl_f32), pc, dense(bq, bk, dnnl_bf16));
        }
        // dV_j += Pᵀ · dO_i
        gemm(pc, dense(bq, bk, type).transposed(), dOi, dense(bq, d, type), dvj,
            dense(bk, d, dnnl_f32), 1f, firstKey);
        // dP = dO_i · V_jᵀ
        gemm(dOi, dense(bq, d, type), in.row(in.v, j0), in.tile(bk).transposed(), dp,
            dense(bq, bk, dnnl_f32), 1f, 0f);
        // dS = P ∘ (dP − D_i)
        for (int r = 0; r < bq; r++) {
          scoreGradientRow(sb, dpb, r * bk, bk, dot[i0 + r], values, grads);
        }
        if (in.bf16) {
          copy(dp, dense(bq, bk, dnnl_f32), dsc, dense(bq, bk, dnnl_bf16));
        }
        // dQ_i += scale · dS · K_j ; dK_j += scale · dSᵀ · Q_i
        gemm(dsc, dense(bq, bk, type), in.row(in.k, j0), in.tile(bk),
            dqAcc + 4L * i0 * d, dense(bq, d, dnnl_f32), alpha, firstQuery);
        gemm(dsc, dense(bq, bk, type).transposed(), in.row(in.q, i0), in.tile(bq), dkj,
            dense(bk, d, dnnl_f32), alpha, firstKey);
      }
    }
    writeBack(dqAcc, dqRows);
    writeBack(dkAcc, dkRows);
    writeBack(dvAcc, dvRows);
    in.keepReachable();
    Reference.reachabilityFence(out);
    Reference.reachabilityFence(lse);
    Reference.reachabilityFence(dO32);
    Reference.reachabilityFence(dOut);
    Reference.reachabilityFence(dq);
    Reference.reachabilityFence(dk);
    Reference.reachabilityFence(dv);
    return new Gradients(dq, dk, dv);
  }

  /** The backward pass's {@code forward} and {@code dOut} checked against {@code q}. */
  private static void checkBackward(INDArray q, Forward forward, INDArray dOut) {
    long n = q.rows();
    long d = q.columns();
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
  }

  /** {@code D_t = dO_t · O_t}, in FP64 sums (FlashAttention-2, Algorithm 2, line 4). */
  private float[] rowDots(Rows out, Rows dOut) {
    FloatBuffer ob = Arrays2.floats(out.address(), out.span());
    FloatBuffer gb = Arrays2.floats(dOut.address(), dOut.span());
    float[] dot = new float[out.rows()];
    workingBytes += 4L * dot.length;
    for (int t = 0; t < dot.length; t++) {
      long o = t * out.stride();
      long g = t * dOut.stride();
      double acc = 0;
      for (int c = 0; c < out.cols(); c++) {
        acc += (double) gb.get((int) (g + c)) * ob.get((int) (o + c));
      }
      dot[t] = (float) acc;
    }
    return dot;
  }

  /**
   * The probability tile of queries {@code i0..i0+bq} and keys {@code j0..j0+bk} into the FP32
   * tile at {@code s} (read and written through {@code sb}), recomputed from the saved
   * log-sum-exp {@code lse}: S = scale · Q_i · K_jᵀ, P = exp(S − L_i), exactly 0 above the
   * diagonal.
   */
  private void probabilities(Inputs in, int i0, int bq, int j0, int bk, float alpha, long s,
      FloatBuffer sb, FloatBuffer lse, float[] values) {
    gemm(in.row(in.q, i0), in.tile(bq), in.row(in.k, j0), in.tile(bk).transposed(), s,
        dense(bq, bk, dnnl_f32), alpha, 0f);
    for (int r = 0; r < bq; r++) {
      int valid = Math.min(bk, i0 + r - j0 + 1);
      float l = lse.get(i0 + r);
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
      if (valid < bk) {
        // oneDNN's exp of −∞ is its smallest normal, not 0: the mask is exact here.
        sb.get(r * bk, values, 0, bk);
        Arrays.fill(values, Math.max(valid, 0), bk, 0f);
        sb.put(r * bk, values, 0, bk);
      }
    }
  }

  /** One row of {@code dS = P ∘ (dP − D_i)}, written over dP's row at {@code row}. */
  private static void scoreGradientRow(FloatBuffer p, FloatBuffer dp, int row, int bk, float di,
      float[] values, float[] grads) {
    p.get(row, values, 0, bk);
    dp.get(row, grads, 0, bk);
    for (int c = 0; c < bk; c++) {
      grads[c] = values[c] * (grads[c] - di);
    }
    dp.put(row, grads, 0, bk);
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

  /** Row buffers of T·d elements: dense copies of q, k, v and dOut, and outputs to copy out. */
  private static final int SLOT_Q = 0;
  private static final int SLOT_K = 1;
  private static final int SLOT_V = 2;
  private static final int SLOT_DOUT = 3;
  private static final int SLOT_OUT = 4;
  private static final int SLOT_DQ = 5;
  private static final int SLOT_DK = 6;
  private static final int SLOT_DV = 7;
  private final INDArray[] rowBuffers = new INDArray[8];

  /**
   * Row buffer {@code slot} of at least {@code count} elements of {@code type}, made or grown at
   * its use and kept, counted in the working bytes.
   */
  private long scratchRows(int slot, long count, DataType type) {
    INDArray b = rowBuffers[slot];
    if (b == null || b.dataType() != type || b.length() < count) {
      MemoryWorkspace none = Nd4j.getWorkspaceManager().scopeOutOfWorkspaces();
      try {
        b = Nd4j.create(type, count);
      } finally {
        none.close();
      }
      rowBuffers[slot] = b;
    }
    workingBytes += count * (type == DataType.FLOAT ? 4 : 2);
    return Arrays2.address(b);
  }

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

  private record ExpKey(long rows, long cols) {}

  /** exp of the dense FP32 tile [rows, cols] at {@code address}, in place, on oneDNN. */
  private void exp(long address, int rows, int cols) {
    dnnl.runUnary(new ExpKey(rows, cols), () -> dnnl.exp(rows, cols, cols), address, address);
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
   * copy.
   */
  private INDArray rows(INDArray a, DataType type) {
    if (a.dataType() == type && Rows.adjacent(a)) {
      return a;
    }
    return copy(a, type);
  }

  /** FP32 rows of {@code a}: itself when FP32 with adjacent columns, else a dense FP32 copy. */
  private INDArray floatRows(INDArray a) {
    return rows(a, DataType.FLOAT);
  }

  /** An output array: FP32 [t, d] with adjacent columns; names it otherwise. */
  private static Rows destination(String name, INDArray a, int t, int d) {
    Arrays2.check2d(name, a, DataType.FLOAT);
    if (a.rows() != t || a.columns() != d) {
      throw new IllegalArgumentException(name + ": shape " + Arrays.toString(a.shape())
          + " must be [" + t + ", " + d + "]");
    }
    if (!Rows.adjacent(a)) {
      throw new IllegalArgumentException(name + ": columns must be adjacent (dense, or a column"
          + " range of a wider row-major matrix), got strides " + Arrays.toString(a.stride()));
    }
    return Rows.of(a);
  }

  /**
   * The rows as dense rows of {@code type}: their own address when they are dense and of that
   * type, else a copy in row buffer {@code slot} (FP32 to BF16 rounded to nearest, ties to even).
   */
  private long gather(int slot, Rows src, DataType type) {
    boolean bf16 = type == DataType.BFLOAT16;
    if (src.dense() && src.bf16() == bf16) {
      return src.address();
    }
    long dst = scratchRows(slot, (long) src.rows() * src.cols(), type);
    copy(src.address(), src.operand(), dst, dense(src.rows(), src.cols(),
        bf16 ? dnnl_bf16 : dnnl_f32));
    return dst;
  }

  /**
   * Where an FP32 output accumulates: in place when it is dense, else in row buffer
   * {@code slot}, copied into its rows by {@link #writeBack} at the end.
   */
  private long accumulator(int slot, Rows dst) {
    return dst.dense() ? dst.address() : scratchRows(slot, (long) dst.rows() * dst.cols(),
        DataType.FLOAT);
  }

  /** The accumulated rows at {@code acc} into {@code dst}, when they are not already there. */
  private void writeBack(long acc, Rows dst) {
    if (!dst.dense()) {
      copy(acc, dense(dst.rows(), dst.cols(), dnnl_f32), dst.address(), dst.operand());
    }
  }

  private record CopyKey(DnnlKernels.Operand from, DnnlKernels.Operand to) {}

  /**
   * {@code to} = {@code from}, converted where the types differ, in one oneDNN reorder: rows
   * copied one at a time through Java buffers cost more in calls than in bytes.
   */
  private void copy(long from, DnnlKernels.Operand fromOp, long to, DnnlKernels.Operand toOp) {
    dnnl.runUnary(new CopyKey(fromOp, toOp), () -> dnnl.reorder(fromOp, toOp, "attention.copy"),
        from, to);
  }

  private INDArray copy(INDArray a, DataType type) {
    workingBytes += a.length() * (type == DataType.FLOAT ? 4 : 2);
    return a.castTo(type).dup('c');
  }

  /**
   * The checked inputs as dense rows of the computing type: in place when dense, gathered into
   * row buffers when a column range of a wider matrix, copied otherwise.
   */
  private final class Inputs {
    final long q;
    final long k;
    final long v;
    final int t;
    final int d;
    final boolean bf16;
    private final INDArray[] kept;

    Inputs(INDArray q, INDArray k, INDArray v, DataType type) {
      this.bf16 = type == DataType.BFLOAT16;
      INDArray q1 = rows(q, type);
      INDArray k1 = rows(k, type);
      INDArray v1 = rows(v, type);
      this.kept = new INDArray[] {q1, k1, v1};
      this.q = gather(SLOT_Q, Rows.of(q1), type);
      this.k = gather(SLOT_K, Rows.of(k1), type);
      this.v = gather(SLOT_V, Rows.of(v1), type);
      this.t = q.rows();
      this.d = q.columns();
    }

    int dnnlType() {
      return bf16 ? dnnl_bf16 : dnnl_f32;
    }

    /** The address of row {@code row} of the dense q, k or v at {@code base}. */
    long row(long base, int row) {
      return base + (long) (bf16 ? 2 : 4) * row * d;
    }

    /** {@code count} dense rows of q, k or v, as an operand. */
    DnnlKernels.Operand tile(int count) {
      return DnnlKernels.Operand.dense(count, d, dnnlType());
    }

    void keepReachable() {
      Reference.reachabilityFence(kept);
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
