package io.hyperframes.nd4j.compress;

import static com.google.common.base.Preconditions.checkArgument;

import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * One encoded gradient: the bytes a worker sends. It belongs to the codec that wrote it and is
 * overwritten by that codec's next {@code encode}; copy {@link #bytes()} bytes of
 * {@link #payload()} to keep it, or {@link #toBytes()} to send it whole.
 *
 * <p>On the wire ({@link #toBytes}, {@link #fromBytes}) a message is the magic {@code HFG1}
 * (format 1), the codec id as a varint length and its ASCII bytes, the gradient's elements as a
 * varint, the payload's length as a varint and the payload: what {@link #bytes()} counts plus
 * a header of a few bytes. A receiver rebuilds it with {@link #fromBytes}, which checks every
 * length, index and value before anything is added to a gradient.
 */
public final class Encoded {
  /** The first bytes of a message on the wire: "HFG" and the format, 1. */
  private static final byte[] MAGIC = {'H', 'F', 'G', '1'};
  /** The longest codec id on the wire. */
  private static final int MAX_ID = 64;

  private final String codec;
  private ByteBuffer payload;
  private long elements;

  Encoded(String codec, int capacity) {
    this.codec = codec;
    this.payload = ByteBuffer.allocate(capacity).order(ByteOrder.LITTLE_ENDIAN);
  }

  /** The id of the codec that wrote it. */
  public String codec() {
    return codec;
  }

  /** Elements of the gradient it encodes. */
  public long elements() {
    return elements;
  }

  /** Serialized size in bytes: what goes over the wire. */
  public long bytes() {
    return payload.position();
  }

  /** FP32 bytes of the gradient over the bytes sent (4 · elements / bytes). */
  public double ratio() {
    return bytes() == 0 ? Double.POSITIVE_INFINITY : 4.0 * elements / bytes();
  }

  /** A read-only view of the serialized message, from 0 to {@link #bytes()}. */
  public ByteBuffer payload() {
    return payload.asReadOnlyBuffer().flip();
  }

  /** Starts a message of {@code n} elements, growing the buffer to {@code capacity} if needed. */
  ByteBuffer begin(long n, int capacity) {
    if (payload.capacity() < capacity) {
      payload = ByteBuffer.allocate(capacity).order(ByteOrder.LITTLE_ENDIAN);
    }
    payload.clear();
    elements = n;
    return payload;
  }

  /** The buffer as written (position = bytes), for the codec's own decoder. */
  ByteBuffer buffer() {
    return payload;
  }

  /**
   * The message as the bytes to send (the wire format of the class javadoc). The copy is the
   * caller's: the codec's next {@code encode} does not change it.
   */
  public byte[] toBytes() {
    byte[] id = codec.getBytes(StandardCharsets.US_ASCII);
    int n = (int) bytes();
    ByteBuffer out = ByteBuffer.allocate(MAGIC.length + 5 + id.length + 5 + 5 + n);
    out.put(MAGIC);
    AbstractCodec.putVarint(out, id.length);
    out.put(id);
    AbstractCodec.putVarint(out, (int) elements);
    AbstractCodec.putVarint(out, n);
    out.put(payload.array(), 0, n);
    return Arrays.copyOf(out.array(), out.position());
  }

  /**
   * The message {@code bytes} hold ({@link #toBytes}), checked whole: the magic, the codec id
   * (a codec {@link GradientCodec#named} knows, as it names itself), the elements (1 to 2^31 -
   * 1), the payload's declared length against what is there, and the payload as its codec
   * reads it (every length, every index inside the gradient and in order, every value finite).
   * Any codec of the message's id decodes it.
   *
   * @throws IllegalArgumentException naming the part that is wrong; nothing else is thrown
   */
  public static Encoded fromBytes(byte[] bytes) {
    checkArgument(bytes != null, "message: bytes must be given");
    ByteBuffer in = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN);
    checkArgument(bytes.length >= MAGIC.length
        && Arrays.equals(bytes, 0, MAGIC.length, MAGIC, 0, MAGIC.length),
        "message: not a HyperFrames gradient message (no HFG1 magic in its first %s bytes)",
        Math.min(MAGIC.length, bytes.length));
    in.position(MAGIC.length);
    int idLength = AbstractCodec.checkedVarint(in, "message.codec length");
    checkArgument(idLength >= 1 && idLength <= MAX_ID && idLength <= in.remaining(),
        "message.codec: length %s is not in 1..%s or runs past the message's %s bytes",
        idLength, MAX_ID, bytes.length);
    String id = new String(bytes, in.position(), idLength, StandardCharsets.US_ASCII);
    in.position(in.position() + idLength);
    AbstractCodec decoder;
    try {
      decoder = (AbstractCodec) GradientCodec.named(id);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("message.codec: " + e.getMessage(), e);
    }
    checkArgument(decoder.id().equals(id), "message.codec: '%s' is not a codec's own name"
        + " (%s)", id, decoder.id());
    int n = AbstractCodec.checkedVarint(in, "message.elements");
    checkArgument(n >= 1, "message.elements: must be at least 1, got %s", n);
    int length = AbstractCodec.checkedVarint(in, "message.payload length");
    checkArgument(length == in.remaining(), "message.payload: %s bytes declared, %s present",
        length, in.remaining());
    Encoded m = new Encoded(id, Math.max(1, length));
    m.elements = n;
    m.payload.put(bytes, in.position(), length);
    ByteBuffer view = m.payload.duplicate().order(ByteOrder.LITTLE_ENDIAN).flip();
    try {
      decoder.check(view, n);
    } catch (BufferUnderflowException e) {
      throw new IllegalArgumentException("message.payload: ends early (" + length + " bytes"
          + " for " + n + " elements of " + id + ")", e);
    }
    checkArgument(!view.hasRemaining(), "message.payload: %s bytes left over after the %s"
        + " message of %s elements", view.remaining(), id, n);
    return m;
  }
}
