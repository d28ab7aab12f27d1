package io.hyperframes.nd4j;

import java.nio.FloatBuffer;
import java.util.Arrays;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;

/**
 * The keys and values of one attention layer while a sequence is decoded one token at a time,
 * held for up to {@code capacity} positions, and the causal attention of each new token's query
 * over them. Everything is allocated when the cache is made: a step writes the new key and value
 * into place and reads the query, so decoding allocates no array per token.
 *
 * <p>Layout: per head, the keys are held transposed ([headDim, capacity]) and the values as rows
 * ([capacity, headDim]), both FP32, so that the scores {@code q·Kᵀ} and the output {@code p·V}
 * are each a sum of scaled rows ({@code s += qᵢ·Kᵀᵢ}, {@code o += pⱼ·Vⱼ}): loops the JIT
 * vectorises. The softmax subtracts the row's maximum and sums in FP64. The result is the last
 * row of {@link CausalAttention}'s output for the same sequence; {@code KvCacheTest} checks it
 * against an FP64 reference.
 *
 * <p>Multi-head attention: as many key-value heads as query heads. Not thread-safe.
 */
public final class KvCache {
  private final int heads;
  private final int headDim;
  private final int capacity;
  /** Per head: the keys transposed, [headDim][capacity], flattened. */
  private final float[] keys;
  /** Per head: the values, [capacity][headDim], flattened. */
  private final float[] values;
  private final float[] query;
  private final float[] scores;
  private final float[] output;
  private int length;

  /**
   * A cache for {@code heads} heads of {@code headDim} columns and up to {@code capacity}
   * positions, each ≥ 1, holding at most 2³¹ − 1 values per tensor.
   */
  public KvCache(int heads, int headDim, int capacity) {
    if (heads < 1) {
      throw new IllegalArgumentException("heads: must be >= 1, got " + heads);
    }
    if (headDim < 1) {
      throw new IllegalArgumentException("headDim: must be >= 1, got " + headDim);
    }
    if (capacity < 1 || (long) heads * headDim * capacity > Integer.MAX_VALUE) {
      throw new IllegalArgumentException("capacity: must be in [1, 2^31 / (heads · headDim)],"
          + " got " + capacity);
    }
    this.heads = heads;
    this.headDim = headDim;
    this.capacity = capacity;
    keys = new float[heads * headDim * capacity];
    values = new float[heads * headDim * capacity];
    query = new float[heads * headDim];
    scores = new float[capacity];
    output = new float[heads * headDim];
  }

  /** Positions held. */
  public int length() {
    return length;
  }

  /** Positions it can hold. */
  public int capacity() {
    return capacity;
  }

  /** Forgets every position (a new sequence). */
  public void clear() {
    length = 0;
  }

  /** Bytes held for keys and values: 2 · heads · headDim · capacity · 4. */
  public long bytes() {
    return 8L * keys.length;
  }

  /**
   * Appends one position's key and value and writes the attention of its query over every
   * position held, this one included, into {@code out}.
   *
   * @param qkv FP32 [1, 3·heads·headDim], columns adjacent: the queries of every head, then the
   *     keys, then the values (rotary embeddings already applied to queries and keys), as the
   *     fused QKV product of one token gives them
   * @param out dense FP32 or BF16 [1, heads·headDim]: the heads' outputs side by side
   * @param scale the factor on the scores, finite and positive (usually 1/√headDim)
   * @throws IllegalArgumentException naming the argument when a shape, type or value is wrong
   * @throws IllegalStateException when the cache is full
   */
  public void append(INDArray qkv, INDArray out, double scale) {
    int width = heads * headDim;
    Arrays2.check2d("qkv", qkv, DataType.FLOAT);
    if (qkv.rows() != 1 || qkv.columns() != 3L * width || (qkv.columns() > 1
        && qkv.stride(1) != 1)) {
      throw new IllegalArgumentException("qkv: must be one FP32 row of " + 3 * width
          + " adjacent columns, got shape " + Arrays.toString(qkv.shape()));
    }
    RowMajor.Output o = RowMajor.Output.into("out", out, 1, width);
    if (!(scale > 0) || !Double.isFinite(scale)) {
      throw new IllegalArgumentException("scale: must be finite and positive, got " + scale);
    }
    if (length == capacity) {
      throw new IllegalStateException("KV cache full: " + capacity + " positions");
    }
    FloatBuffer in = Arrays2.floats(Arrays2.address(qkv), 3L * width);
    in.get(0, query);
    int t = length;
    for (int head = 0; head < heads; head++) {
      int kBase = head * headDim * capacity;
      int vBase = kBase + t * headDim;
      for (int i = 0; i < headDim; i++) {
        keys[kBase + i * capacity + t] = in.get(width + head * headDim + i);
        values[vBase + i] = in.get(2 * width + head * headDim + i);
      }
    }
    length = t + 1;
    for (int head = 0; head < heads; head++) {
      attend(head, (float) scale);
    }
    for (int i = 0; i < width; i++) {
      o.put(i, output[i]);
    }
    RowMajor.keep(qkv);
    o.done();
  }

  /** One head's output for the query over positions [0, length). */
  private void attend(int head, float scale) {
    int n = length;
    int kBase = head * headDim * capacity;
    int qBase = head * headDim;
    Arrays.fill(scores, 0, n, 0f);
    for (int i = 0; i < headDim; i++) {
      float q = query[qBase + i] * scale;
      int row = kBase + i * capacity;
      for (int j = 0; j < n; j++) {
        scores[j] += q * keys[row + j];
      }
    }
    float max = Float.NEGATIVE_INFINITY;
    for (int j = 0; j < n; j++) {
      max = Math.max(max, scores[j]);
    }
    double sum = 0;
    for (int j = 0; j < n; j++) {
      float e = (float) Math.exp(scores[j] - max);
      scores[j] = e;
      sum += e;
    }
    float inverse = (float) (1 / sum);
    Arrays.fill(output, qBase, qBase + headDim, 0f);
    for (int j = 0; j < n; j++) {
      float p = scores[j] * inverse;
      int row = kBase + j * headDim;
      for (int i = 0; i < headDim; i++) {
        output[qBase + i] += p * values[row + i];
      }
    }
  }
}
