package io.hyperframes.nd4j.compress;

import static com.google.common.base.Preconditions.checkArgument;

import java.nio.ByteBuffer;
import java.nio.FloatBuffer;

/** No compression: the FP32 gradient as it is, 4 bytes an element (the baseline). */
final class IdentityCodec extends AbstractCodec {

  IdentityCodec() {
    super("none", false);
  }

  @Override
  void encode(float[] g, int n) {
    ByteBuffer out = message.begin(n, 4 * n);
    out.asFloatBuffer().put(g, 0, n);
    out.position(4 * n);
  }

  @Override
  void decodeAdd(Encoded m, ByteBuffer in, FloatBuffer t, int n) {
    float[] y = load(t, n);
    for (int i = 0; i < n; i++) {
      y[i] += in.getFloat(4 * i);
    }
    store(t, y, n);
  }

  @Override
  void check(ByteBuffer in, int n) {
    checkArgument(in.remaining() == 4L * n, "message.payload: %s bytes, %s FP32 values need %s",
        in.remaining(), n, 4L * n);
    finiteFloats(in, n);
  }
}
