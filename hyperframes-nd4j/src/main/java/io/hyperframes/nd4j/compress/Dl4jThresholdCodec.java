package io.hyperframes.nd4j.compress;

import static com.google.common.base.Preconditions.checkArgument;

import java.nio.ByteBuffer;
import java.nio.FloatBuffer;
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
  private final EncodingHandler handler =
      new EncodingHandler(new AdaptiveThresholdAlgorithm(), null, null, false);
  private INDArray accumulated;
  private FloatBuffer accumulatedView;
  private int iteration;

  Dl4jThresholdCodec() {
    super("dl4j-threshold", true);
  }

  @Override
  void allocate(int n) {
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
    message.side(encoded);
  }

  @Override
  void decodeAdd(Encoded m, ByteBuffer in, FloatBuffer t, int n) {
    INDArray encoded = (INDArray) m.side();
    if (encoded == null) {
      return;
    }
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
}
