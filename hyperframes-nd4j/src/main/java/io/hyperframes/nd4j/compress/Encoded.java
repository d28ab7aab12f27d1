package io.hyperframes.nd4j.compress;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * One encoded gradient: the bytes a worker sends. It belongs to the codec that wrote it and is
 * overwritten by that codec's next {@code encode}; copy {@link #bytes()} bytes of
 * {@link #payload()} to keep it.
 */
public final class Encoded {
  private final String codec;
  private ByteBuffer payload;
  private long elements;
  private Object side;

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
    side = null;
    return payload;
  }

  /** The buffer as written (position = bytes), for the codec's own decoder. */
  ByteBuffer buffer() {
    return payload;
  }

  /** A codec's non-byte companion of the message (DL4J's encoded array), or null. */
  Object side() {
    return side;
  }

  void side(Object value) {
    side = value;
  }
}
