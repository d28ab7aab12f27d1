package io.hyperframes.nd4j.compress;

import static com.google.common.base.Preconditions.checkArgument;

import java.nio.ByteBuffer;
import java.nio.FloatBuffer;
import java.util.Arrays;
import org.deeplearning4j.optimize.solvers.accumulation.EncodingHandler;
import org.deeplearning4j.optimize.solvers.accumulation.encoding.threshold.AdaptiveThresholdAlgorithm;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.factory.Nd4j;

/**
 * DL4J's own scheme, for comparison: threshold encoding (Strom 2015, "Scalable Distributed DNN
 * Training Using Commodity GPU Cloud Computing", Interspeech) through DL4J's
 * {@link EncodingHandler} with its default {@link AdaptiveThresholdAlgorithm}, the pair DL4J's
 * {@code EncodedGradientsAccumulator} uses for {@code ParallelWrapper}'s shared gradients. Every
 * element whose accumulated magnitude passes the threshold is sent as ±threshold and the rest
 * stays in the residual (DL4J's residual is the accumulated array itself); the handler switches
 * to a bitmap encoding when too many pass. The message is ND4J's encoded INT32 array (header
 * word 3: 0 = sparse indices, 1 = bitmap), sent as its 4 bytes an element. Unlike the other
 * codecs it allocates: DL4J's encoder returns a new array per call and its decoders write into
 * an ND4J array, so each decode creates a dense one.
 */
final class Dl4jThresholdCodec extends AbstractCodec {
  /** DL4J's encoder, made at the first encode: a codec that only decodes or checks needs none. */
  private EncodingHandler handler;
  private INDArray accumulated;
  private FloatBuffer accumulatedView;
  private int iteration;

  Dl4jThresholdCodec() {
    super("dl4j-threshold", true);
  }

  @Override
  boolean restorable() {
    return false;
  }

  @Override
  void allocate(int n) {
    handler = new EncodingHandler(new AdaptiveThresholdAlgorithm(), null, null, false);
    accumulated = Nd4j.zeros(DataType.FLOAT, n);
    accumulatedView = view(accumulated, "residual");
  }

  @Override
  void encode(float[] g, int n) {
    for (int i = 0; i < n; i++) {
      accumulatedView.put(i, accumulatedView.get(i) + g[i]);
    }
    INDArray encoded = handler.encodeUpdates(iteration++, 0, accumulated);
    int words = encoded == null ? 0 : (int) encoded.length();
    ByteBuffer out = message.begin(n, 4 * words + 4);
    for (int w = 0; w < words; w++) {
      out.putInt(encoded.getInt(w));
    }
  }

  @Override
  void decodeAdd(Encoded m, ByteBuffer in, FloatBuffer t, int n) {
    // The message's bytes, not an in-memory object: a message rebuilt from the wire decodes
    // as the sender's own does.
    int[] words = new int[in.remaining() / 4];
    if (words.length == 0) {
      return;
    }
    in.asIntBuffer().get(words);
    INDArray encoded = Nd4j.createFromArray(words);
    INDArray target = Nd4j.create(DataType.FLOAT, n);
    int kind = encoded.data().getInt(3);
    checkArgument(kind == 0 || kind == 1, "message: unknown DL4J encoding %s", kind);
    if (kind == 0) {
      Nd4j.getExecutioner().thresholdDecode(encoded, target);
    } else {
      Nd4j.getExecutioner().bitmapDecode(encoded, target);
    }
    FloatBuffer d = view(target, "decoded");
    for (int i = 0; i < n; i++) {
      t.put(i, t.get(i) + d.get(i));
    }
  }

  /** DL4J keeps its residual in the accumulated array, not in {@link #residual}. */
  float[] residualCopy() {
    float[] out = new float[(int) length];
    accumulatedView.get(0, out);
    return out;
  }

  /**
   * ND4J's INT32 message as its native decoders read it (libnd4j at the commit nd4j-native
   * 1.0.0-M2.1 was built from, 3a87acef; ops/declarable/generic/compression/threshold.cpp and
   * bitmap.cpp, loops/impl/type_conversions.cpp, ops/impl/specials_single.hpp): a header of
   * four ints, [0] the indices that follow (threshold) or n (bitmap), [1] n, [2] the threshold's
   * float bits, [3] the kind, 0 threshold or 1 bitmap; then, for a threshold message, one
   * 1-based index per element sent, negative for -threshold; for a bitmap, n/16 + 1 words of
   * 16 elements, bit b for a step and bit b + 16 for its sign. Neither native decoder checks an
   * index against the target, so every index and every bit is checked here.
   */
  @Override
  void check(ByteBuffer in, int n) {
    checkArgument(in.remaining() % 4 == 0, "message.payload: %s bytes are not whole INT32"
        + " words", in.remaining());
    int words = in.remaining() / 4;
    if (words == 0) {
      return; // nothing passed the threshold
    }
    checkArgument(words >= 4, "message.payload: %s words, shorter than the 4 of the header",
        words);
    int count = in.getInt();
    int length = in.getInt();
    float threshold = Float.intBitsToFloat(in.getInt());
    int kind = in.getInt();
    checkArgument(length == n, "message.payload: the header's length %s is not the message's"
        + " %s elements", length, n);
    checkArgument(Float.isFinite(threshold) && threshold > 0, "message.payload: threshold %s"
        + " is not a finite value > 0", threshold);
    if (kind == 0) {
      checkArgument(count == words - 4, "message.payload: the header counts %s indices, %s"
          + " follow", count, words - 4);
      int[] at = new int[count];
      for (int j = 0; j < count; j++) {
        int v = in.getInt();
        checkArgument(v != 0 && v != Integer.MIN_VALUE && Math.abs(v) <= n, "message.payload:"
            + " index %s is %s, outside 1..%s and -%s..-1", j, v, n, n);
        at[j] = Math.abs(v);
      }
      Arrays.sort(at);
      for (int j = 1; j < count; j++) {
        checkArgument(at[j] != at[j - 1], "message.payload: element %s is sent twice",
            at[j] - 1);
      }
    } else {
      checkArgument(kind == 1, "message.payload: unknown DL4J encoding %s (0 threshold, 1"
          + " bitmap)", kind);
      checkArgument(count == n && words == n / 16 + 5, "message.payload: a bitmap of %s"
          + " elements is %s words, got %s (header count %s)", n, n / 16 + 5, words, count);
      for (int w = 0; w < words - 4; w++) {
        int bits = in.getInt();
        int valid = Math.min(16, n - 16 * w);
        int mask = valid <= 0 ? 0 : (1 << valid) - 1;
        checkArgument((bits & ~(mask | mask << 16)) == 0, "message.payload: bitmap word %s"
            + " flags elements past the gradient's %s", w, n);
      }
    }
  }
}
