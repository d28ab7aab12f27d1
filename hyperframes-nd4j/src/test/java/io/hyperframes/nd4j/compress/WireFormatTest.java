package io.hyperframes.nd4j.compress;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.nd4j.linalg.factory.Nd4j;

/**
 * Messages on the wire: every codec's message survives {@link Encoded#toBytes} and
 * {@link Encoded#fromBytes} and decodes in another codec exactly as the sender's object does;
 * every malformed message is an {@link IllegalArgumentException} naming the part that is wrong;
 * a non-finite gradient is refused before the residual changes.
 */
class WireFormatTest {

  static final String[] CODECS = {"none", "topk-0.05-ef", "topk-0.05", "randomk-0.05-ef",
      "int8", "int8-tensor", "sign-ef", "bf16", "fp16", "dl4j-threshold"};

  @ParameterizedTest
  @ValueSource(strings = {"none", "topk-0.05-ef", "topk-0.05", "randomk-0.05-ef", "int8",
      "int8-tensor", "sign-ef", "bf16", "fp16", "dl4j-threshold"})
  void aMessageFromBytesDecodesAsTheSendersOwn(String id) {
    int n = 5000;
    float[] g = GradientCodecTest.gaussian(n, 11);
    GradientCodec sender = GradientCodec.named(id);
    Encoded m = sender.encode(Nd4j.createFromArray(g));
    byte[] wire = m.toBytes();
    assertTrue(wire.length - m.bytes() <= 4 + 1 + id.length() + 3 + 3,
        id + ": a header of " + (wire.length - m.bytes()) + " bytes");
    Encoded back = Encoded.fromBytes(wire);
    assertEquals(id, back.codec());
    assertEquals(n, back.elements());
    assertEquals(m.bytes(), back.bytes());
    assertEquals(m.payload(), back.payload());
    float[] expected = GradientCodecTest.decode(sender, m, n);
    assertArrayEquals(expected, GradientCodecTest.decode(GradientCodec.named(id), back, n), id);
    assertArrayEquals(wire, back.toBytes(), id + ": the bytes again");
    if (!id.equals("none") && !id.equals("bf16") && !id.equals("fp16")
        && !id.startsWith("int8")) {
      assertTrue(Arrays.stream(box(expected)).anyMatch(v -> v != 0f), id + " sends something");
    }
  }

  @Test
  void malformedMessagesAreNamed() {
    byte[] good = GradientCodec.named("topk-0.05-ef")
        .encode(Nd4j.createFromArray(GradientCodecTest.gaussian(1000, 3))).toBytes();
    assertRefused(null, "message: bytes must be given");
    assertRefused(new byte[] {'H', 'F'}, "message: not a HyperFrames gradient message");
    byte[] magic = good.clone();
    magic[3] = '2';
    assertRefused(magic, "message: not a HyperFrames gradient message");
    assertRefused(message("zip", 10, new byte[0]), "message.codec: codec: unknown codec 'zip'");
    assertRefused(message("TOPK-0.05-EF", 10, new byte[0]),
        "message.codec: 'TOPK-0.05-EF' is not a codec's own name (topk-0.05-ef)");
    assertRefused(message("none", 0, new byte[0]), "message.elements: must be at least 1");
    assertRefused(Arrays.copyOf(good, good.length - 1), "message.payload:");
    assertRefused(Arrays.copyOf(good, good.length + 1), "message.payload:");
    assertRefused(message("none", 3, floats(1f, 2f)), "message.payload: 8 bytes, 3 FP32 values"
        + " need 12");
    assertRefused(message("none", 2, floats(1f, Float.NaN)), "message.payload: value 1 is NaN");
    // Top-k: one element at index 10 of a gradient of 10; an index twice; a NaN value.
    assertRefused(message("topk-0.05-ef", 10, topk(new int[] {10}, 1f)),
        "message.payload: index 10 is outside the gradient's 10 elements");
    assertRefused(message("topk-0.05-ef", 10, topk(new int[] {3, 0}, 1f, 2f)),
        "message.payload: index 1 repeats index 0");
    assertRefused(message("topk-0.05-ef", 10, topk(new int[] {3}, Float.POSITIVE_INFINITY)),
        "message.payload: value 0 is Infinity");
    assertRefused(message("topk-0.05-ef", 10, topk(new int[] {3, 1}, 1f)),
        "message.payload index gap: the message ends inside it");
    assertRefused(message("int8", 10, new byte[] {0, 0, 0}), "message.payload: 2 bytes after"
        + " the block size, 1 blocks of scale and 10 values need 14");
    assertRefused(message("topk-0.05-ef", 10, new byte[] {(byte) 0x80, (byte) 0x80,
        (byte) 0x80, (byte) 0x80, (byte) 0x80, 1}), "message.payload count: a varint longer"
            + " than 5 bytes");
    assertRefused(message("randomk-0.05-ef", 100, ByteBuffer.allocate(10 + 8)
        .order(ByteOrder.LITTLE_ENDIAN).put((byte) 3).put((byte) 10).putLong(7).array()),
        "message.payload: 3 blocks of 10 do not cover a gradient of 100 elements");
    assertRefused(message("sign-ef", 16, ByteBuffer.allocate(6).order(ByteOrder.LITTLE_ENDIAN)
        .putFloat(-1f).array()), "message.payload: scale -1.0 is not a finite value >= 0");
    assertRefused(message("bf16", 1, new byte[] {(byte) 0x80, (byte) 0x7F}),
        "message.payload: value 0 is not finite");
    // What is left over after a whole message is refused, not ignored.
    byte[] payload = topk(new int[] {3}, 1f);
    byte[] longer = Arrays.copyOf(payload, payload.length + 2);
    assertRefused(message("topk-0.05-ef", 10, longer), "message.payload: 2 bytes left over");
  }

  @Test
  void aNonFiniteGradientIsRefusedAndTheResidualIsUnchanged() {
    float[] g1 = GradientCodecTest.gaussian(2000, 1);
    float[] g2 = GradientCodecTest.gaussian(2000, 2);
    float[] bad = g2.clone();
    bad[1234] = Float.NaN;
    GradientCodec a = GradientCodec.named("topk-0.01-ef");
    GradientCodec b = GradientCodec.named("topk-0.01-ef");
    a.encode(Nd4j.createFromArray(g1));
    b.encode(Nd4j.createFromArray(g1));
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> a.encode(Nd4j.createFromArray(bad)));
    assertTrue(e.getMessage().startsWith("gradient: element 1234 is NaN; a non-finite gradient"
        + " is not encoded and the residual is unchanged"), e.getMessage());
    assertArrayEquals(b.encode(Nd4j.createFromArray(g2)).toBytes(),
        a.encode(Nd4j.createFromArray(g2)).toBytes(), "the refused step left no trace");
  }

  private static void assertRefused(byte[] bytes, String start) {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> Encoded.fromBytes(bytes));
    assertTrue(e.getMessage().startsWith(start), "expected '" + start + "', got '"
        + e.getMessage() + "'");
  }

  /** A message as a sender would write it, with any payload. */
  static byte[] message(String id, int elements, byte[] payload) {
    return withLength(id, elements, payload, payload.length);
  }

  /** The same with any declared payload length. */
  static byte[] withLength(String id, int elements, byte[] payload, int length) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    out.writeBytes(new byte[] {'H', 'F', 'G', '1'});
    varint(out, id.length());
    out.writeBytes(id.getBytes(StandardCharsets.US_ASCII));
    varint(out, elements);
    varint(out, length);
    out.writeBytes(payload);
    return out.toByteArray();
  }

  /** A top-k payload: count, then gap and value per element (gaps as given). */
  private static byte[] topk(int[] gaps, float... values) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    varint(out, gaps.length);
    for (int j = 0; j < values.length; j++) {
      varint(out, gaps[j]);
      out.writeBytes(ByteBuffer.allocate(4).order(ByteOrder.LITTLE_ENDIAN).putFloat(values[j])
          .array());
    }
    return out.toByteArray();
  }

  private static byte[] floats(float... values) {
    ByteBuffer b = ByteBuffer.allocate(4 * values.length).order(ByteOrder.LITTLE_ENDIAN);
    for (float v : values) {
      b.putFloat(v);
    }
    return b.array();
  }

  private static void varint(ByteArrayOutputStream out, int v) {
    while ((v & ~0x7F) != 0) {
      out.write((v & 0x7F) | 0x80);
      v >>>= 7;
    }
    out.write(v);
  }

  private static Float[] box(float[] v) {
    Float[] out = new Float[v.length];
    for (int i = 0; i < v.length; i++) {
      out[i] = v[i];
    }
    return out;
  }
}
