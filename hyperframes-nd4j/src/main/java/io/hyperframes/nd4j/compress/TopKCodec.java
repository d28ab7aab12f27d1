package io.hyperframes.nd4j.compress;

import static com.google.common.base.Preconditions.checkArgument;

import java.nio.ByteBuffer;
import java.nio.FloatBuffer;
import java.util.Arrays;

/**
 * Top-k sparsification: the k = ⌈F·n⌉ elements of largest magnitude (Aji and Heafield 2017,
 * "Sparse Communication for Distributed Gradient Descent", arXiv 1704.05021; Lin et al. 2018,
 * "Deep Gradient Compression", arXiv 1712.01887, §3.1), with error feedback when asked.
 *
 * <p>Selection in two passes without sorting n values: the magnitude threshold is estimated
 * from a strided sample of 8 192 elements at a quantile that lets through about 1.5·k
 * candidates; one pass collects the candidates (in index order); an exact quickselect on their
 * magnitudes then keeps exactly k (ties by index). Should the estimate let through fewer than k
 * or more than the candidate buffer, the pass repeats with the threshold moved; elements equal
 * to the threshold are taken only while fewer than k are collected, so many equal magnitudes
 * (zeros of a sparse gradient) cannot make the search oscillate. Wire format:
 * varint k, then per element a varint gap to the previous index and an FP32 value.
 */
final class TopKCodec extends AbstractCodec {
  private static final int SAMPLE = 8192;
  private final double fraction;
  private float[] sample;
  private int[] candidates;
  private float[] magnitudes;
  private int k;

  TopKCodec(String id, double fraction, boolean errorFeedback) {
    super(id, errorFeedback);
    this.fraction = fraction;
  }

  @Override
  void allocate(int n) {
    k = kept(fraction, n);
    sample = new float[Math.min(n, SAMPLE)];
    candidates = new int[Math.min(n, 2 * k + 64)];
    magnitudes = new float[candidates.length];
  }

  @Override
  void encode(float[] g, int n) {
    float[] r = accumulate(g, n);
    int c = collect(r, n);
    // Exact k-th largest magnitude among the candidates, then keep the largest k in index order.
    for (int j = 0; j < c; j++) {
      magnitudes[j] = Math.abs(r[candidates[j]]);
    }
    float kth = c > k ? select(magnitudes, c, c - k) : 0f;
    int above = 0;
    for (int j = 0; j < c; j++) {
      if (Math.abs(r[candidates[j]]) > kth) {
        above++;
      }
    }
    int ties = k - above;
    ByteBuffer out = message.begin(n, 10 + 9 * k);
    putVarint(out, k);
    int previous = 0;
    for (int j = 0; j < c; j++) {
      int i = candidates[j];
      float m = Math.abs(r[i]);
      if (m > kth || m == kth && ties-- > 0) {
        putVarint(out, i - previous);
        out.putFloat(r[i]);
        previous = i;
        r[i] = 0f;
      }
    }
    if (!errorFeedback) {
      Arrays.fill(r, 0f);
    }
  }

  /** Collects at least k candidate indices (ascending) whose magnitude passes a threshold. */
  private int collect(float[] r, int n) {
    if (k == n) {
      for (int i = 0; i < n; i++) {
        candidates[i] = i;
      }
      return n;
    }
    int m = sample.length;
    long stride = Math.max(1, n / m);
    long start = stride > 1 ? Math.floorMod(draw(0x70c4L), stride) : 0;
    for (int j = 0; j < m; j++) {
      sample[j] = Math.abs(r[(int) Math.min(n - 1, start + j * stride)]);
    }
    Arrays.sort(sample);
    double keep = 1.5 * k / n;
    for (int attempt = 0; attempt < 60; attempt++) {
      int q = (int) Math.max(0, Math.min(m - 1, Math.floor(m * (1 - keep))));
      float t = attempt >= 59 ? 0f : sample[q];
      int c = 0;
      boolean overflow = false;
      for (int i = 0; i < n; i++) {
        float a = Math.abs(r[i]);
        if (a > t) {
          if (c == candidates.length) {
            overflow = true;
            break;
          }
          candidates[c++] = i;
        } else if (a == t && c < k) {
          // Ties at the threshold fill up to k only: strictly larger ones keep their room.
          candidates[c++] = i;
        }
      }
      if (overflow) {
        keep = keep / 1.3;
      } else if (c < k) {
        keep = Math.min(1.0, keep * 2);
      } else {
        return c;
      }
    }
    throw new AssertionError("top-k: no threshold collected between k and the buffer");
  }

  /** The element that would be at {@code rank} (0-based, ascending) if a[0..n) were sorted. */
  private static float select(float[] a, int n, int rank) {
    int lo = 0;
    int hi = n - 1;
    while (lo < hi) {
      float pivot = a[(lo + hi) >>> 1];
      int i = lo;
      int j = hi;
      while (i <= j) {
        while (a[i] < pivot) {
          i++;
        }
        while (a[j] > pivot) {
          j--;
        }
        if (i <= j) {
          float x = a[i];
          a[i] = a[j];
          a[j] = x;
          i++;
          j--;
        }
      }
      if (rank <= j) {
        hi = j;
      } else if (rank >= i) {
        lo = i;
      } else {
        return a[rank];
      }
    }
    return a[rank];
  }

  @Override
  void decodeAdd(Encoded m, ByteBuffer in, FloatBuffer t, int n) {
    int count = getVarint(in);
    int i = 0;
    for (int j = 0; j < count; j++) {
      i += getVarint(in);
      t.put(i, t.get(i) + in.getFloat());
    }
  }

  @Override
  void check(ByteBuffer in, int n) {
    int count = checkedVarint(in, "message.payload count");
    checkArgument(count <= n, "message.payload: %s elements sent of a gradient of %s", count, n);
    long i = 0;
    for (int j = 0; j < count; j++) {
      int gap = checkedVarint(in, "message.payload index gap");
      checkArgument(j == 0 || gap >= 1, "message.payload: index %s repeats index %s", j, j - 1);
      i += gap;
      checkArgument(i < n, "message.payload: index %s is outside the gradient's %s elements",
          i, n);
      float v = in.getFloat();
      checkArgument(Float.isFinite(v), "message.payload: value %s is %s", j, Float.valueOf(v));
    }
  }
}
