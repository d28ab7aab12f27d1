package io.hyperframes.nd4j.compress;

import static com.google.common.base.Preconditions.checkArgument;
import static com.google.common.base.Preconditions.checkState;

import java.nio.ByteBuffer;
import java.nio.FloatBuffer;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;

/**
 * What every built-in codec shares: the gradient's length (fixed at the first call), FP32 access
 * to contiguous ND4J vectors without copies (the view of the last array seen is kept, so a
 * training loop that hands in the same gradient array every step allocates nothing), the error
 * feedback residual, and the message buffer.
 */
abstract class AbstractCodec implements GradientCodec {
  private final String id;
  final boolean errorFeedback;
  long length = -1;
  float[] residual;
  /** The gradient of the current call, copied from the ND4J buffer in one bulk read. */
  float[] input;
  private float[] dense;
  final Encoded message;
  /** Gradients encoded so far: the step counter that per-step draws are derived from. */
  long encodes;

  private INDArray lastIn;
  private FloatBuffer lastInView;
  private INDArray lastOut;
  private FloatBuffer lastOutView;

  AbstractCodec(String id, boolean errorFeedback) {
    this.id = id;
    this.errorFeedback = errorFeedback;
    this.message = new Encoded(id, 64);
  }

  @Override
  public final String id() {
    return id;
  }

  @Override
  public final Encoded encode(INDArray gradient) {
    FloatBuffer g = input(gradient);
    int n = g.remaining();
    if (length < 0) {
      length = n;
      residual = new float[n];
      input = new float[n];
      allocate(n);
    }
    checkArgument(n == length, "gradient: %s elements, but this codec encodes %s", n, length);
    g.get(0, input, 0, n);
    for (int i = 0; i < n; i++) {
      if (!Float.isFinite(input[i])) {
        throw new IllegalArgumentException("gradient: element " + i + " is " + input[i]
            + "; a non-finite gradient is not encoded and the residual is unchanged (with loss"
            + " scaling, skip this step and lower the scale, as LossScale does)");
      }
    }
    encode(input, n);
    encodes++;
    return message;
  }

  /** The first bytes of {@link #state()}: "HFC" and the format, 1. */
  private static final int STATE_MAGIC = 0x31434648;

  @Override
  public byte[] state() {
    checkState(restorable(), "codec %s: its state lives in DL4J's encoder and cannot be saved",
        id);
    byte[] name = id.getBytes(java.nio.charset.StandardCharsets.US_ASCII);
    boolean withResidual = errorFeedback && length >= 0;
    ByteBuffer out = ByteBuffer.allocate(4 + 4 + name.length + 8 + 8 + 1
        + (withResidual ? 4 * (int) length : 0)).order(java.nio.ByteOrder.LITTLE_ENDIAN);
    out.putInt(STATE_MAGIC).putInt(name.length).put(name).putLong(length).putLong(encodes)
        .put((byte) (withResidual ? 1 : 0));
    if (withResidual) {
      out.asFloatBuffer().put(residual, 0, (int) length);
    }
    return out.array();
  }

  @Override
  public void restore(byte[] state) {
    checkState(restorable(), "codec %s: its state lives in DL4J's encoder and cannot be"
        + " restored", id);
    checkArgument(state != null, "state: must be given");
    ByteBuffer in = ByteBuffer.wrap(state).order(java.nio.ByteOrder.LITTLE_ENDIAN);
    try {
      checkArgument(in.getInt() == STATE_MAGIC, "state: not a codec state (no HFC1 magic)");
      int nameLength = in.getInt();
      checkArgument(nameLength >= 1 && nameLength <= in.remaining(), "state: codec name length"
          + " %s", nameLength);
      byte[] name = new byte[nameLength];
      in.get(name);
      String of = new String(name, java.nio.charset.StandardCharsets.US_ASCII);
      checkArgument(of.equals(id), "state: saved by codec %s, not %s", of, id);
      long n = in.getLong();
      long count = in.getLong();
      boolean withResidual = in.get() == 1;
      checkArgument(n >= -1 && n <= Integer.MAX_VALUE && count >= 0, "state: %s elements after"
          + " %s encodes is not a codec's state", n, count);
      checkArgument(withResidual == (errorFeedback && n >= 0), "state: the residual is %s",
          withResidual ? "present, but this codec keeps none" : "missing");
      checkArgument(in.remaining() == (withResidual ? 4 * n : 0), "state: %s bytes left for a"
          + " residual of %s elements", in.remaining(), n);
      if (n >= 0) {
        if (length != n) {
          length = n;
          residual = new float[(int) n];
          input = new float[(int) n];
          allocate((int) n);
        }
        if (withResidual) {
          in.asFloatBuffer().get(residual, 0, (int) n);
        } else {
          java.util.Arrays.fill(residual, 0f);
        }
      } else {
        length = -1;
        residual = null;
        input = null;
      }
      encodes = count;
    } catch (java.nio.BufferUnderflowException e) {
      throw new IllegalArgumentException("state: ends early (" + state.length + " bytes)", e);
    }
  }

  /** Whether {@link #state()} captures everything an encode depends on (DL4J's does not). */
  boolean restorable() {
    return true;
  }

  /**
   * A 64-bit draw for this encode, from {@code salt} and the encode counter (SplitMix64, Steele,
   * Lea and Flood 2014): a restored codec draws what the saved one would have.
   */
  final long draw(long salt) {
    return mix(salt + (encodes + 1) * GOLDEN);
  }

  static final long GOLDEN = 0x9E3779B97F4A7C15L;

  static long mix(long z) {
    z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
    z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
    return z ^ (z >>> 31);
  }

  @Override
  public final void decodeAdd(Encoded m, INDArray target) {
    checkArgument(m != null && target != null, "message and target: must be given");
    checkArgument(m.codec().equals(id), "message: written by %s, not %s", m.codec(), id);
    FloatBuffer t = output(target);
    checkArgument(t.remaining() == m.elements(), "target: %s elements, the message has %s",
        t.remaining(), m.elements());
    ByteBuffer b = m.buffer().duplicate().order(m.buffer().order());
    b.flip();
    decodeAdd(m, b, t, t.remaining());
  }

  /** Sizes the codec's buffers for gradients of {@code n} elements (first call). */
  void allocate(int n) {}

  /** Encodes {@code g} (n elements) into {@link #message}. */
  abstract void encode(float[] g, int n);

  /**
   * The target's elements in a heap array (one bulk read), for a dense decoder to add into and
   * hand back to {@link #store}.
   */
  final float[] load(FloatBuffer t, int n) {
    if (dense == null || dense.length < n) {
      dense = new float[n];
    }
    t.get(0, dense, 0, n);
    return dense;
  }

  /** Writes the array {@link #load} returned back into the target (one bulk write). */
  static void store(FloatBuffer t, float[] values, int n) {
    t.put(0, values, 0, n);
  }

  /**
   * The residual with {@code g} added (error feedback), or {@code g} copied into it (without):
   * the values a sparsifying codec chooses from and zeroes once sent.
   */
  final float[] accumulate(float[] g, int n) {
    float[] r = residual;
    if (errorFeedback) {
      for (int i = 0; i < n; i++) {
        r[i] += g[i];
      }
    } else {
      System.arraycopy(g, 0, r, 0, n);
    }
    return r;
  }

  /** Elements a sparsifier keeps of {@code n}: ⌈fraction · n⌉, at least 1, at most n. */
  static int kept(double fraction, int n) {
    return (int) Math.min(n, Math.max(1, Math.ceil(fraction * n)));
  }

  /** {@code x} rounded to the nearest integer, ties to even, for |x| < 2^22 (no branch). */
  static int roundToInt(float x) {
    return Float.floatToRawIntBits(x + 12582912f) - 0x4B400000;
  }

  /** Adds the message read from {@code in} into {@code t} (absolute indices 0..n-1). */
  abstract void decodeAdd(Encoded m, ByteBuffer in, FloatBuffer t, int n);

  /**
   * Reads a payload of {@code n} elements from {@code in} as {@link #decodeAdd} would, to its
   * end, writing nothing ({@link Encoded#fromBytes}).
   *
   * @throws IllegalArgumentException naming what is wrong
   * @throws java.nio.BufferUnderflowException when it ends early (the caller names it)
   */
  abstract void check(ByteBuffer in, int n);

  /** {@code count} FP32 values from {@code in}, each finite. */
  static void finiteFloats(ByteBuffer in, long count) {
    for (long j = 0; j < count; j++) {
      float v = in.getFloat();
      checkArgument(Float.isFinite(v), "message.payload: value %s is %s", j, Float.valueOf(v));
    }
  }

  /** A finite scale of at least 0, named {@code what}. */
  static void scale(float v, String what) {
    checkArgument(Float.isFinite(v) && v >= 0, "message.payload: %s %s is not a finite value"
        + " >= 0", what, v);
  }

  /**
   * A varint of at most 5 bytes whose value fits an int at least 0.
   *
   * @throws IllegalArgumentException naming {@code what} when it is longer, negative or the
   *     bytes end inside it
   */
  static int checkedVarint(ByteBuffer b, String what) {
    long v = 0;
    for (int shift = 0; shift < 35; shift += 7) {
      checkArgument(b.hasRemaining(), "%s: the message ends inside it", what);
      byte x = b.get();
      v |= (long) (x & 0x7F) << shift;
      if (x >= 0) {
        checkArgument(v <= Integer.MAX_VALUE, "%s: %s is more than 2^31 - 1", what, v);
        return (int) v;
      }
    }
    throw new IllegalArgumentException(what + ": a varint longer than 5 bytes");
  }

  private FloatBuffer input(INDArray a) {
    if (a != lastIn) {
      lastInView = view(a, "gradient");
      lastIn = a;
    }
    return lastInView;
  }

  private FloatBuffer output(INDArray a) {
    if (a != lastOut) {
      lastOutView = view(a, "target");
      lastOut = a;
    }
    return lastOutView;
  }

  /** A zero-based FP32 view of a contiguous vector's elements. */
  static FloatBuffer view(INDArray a, String what) {
    checkArgument(a != null, "%s: must be given", what);
    checkArgument(a.dataType() == DataType.FLOAT, "%s: must be FP32, got %s", what,
        a.dataType());
    checkArgument(a.isVectorOrScalar(), "%s: must be a vector, got shape %s", what,
        java.util.Arrays.toString(a.shape()));
    checkArgument(a.length() == 1 || a.elementWiseStride() == 1, "%s: must be contiguous",
        what);
    checkArgument(a.length() <= Integer.MAX_VALUE, "%s: more than 2^31 elements", what);
    FloatBuffer all = a.data().asNioFloat();
    int off = (int) a.offset();
    all.position(off).limit(off + (int) a.length());
    return all.slice();
  }

  static void putVarint(ByteBuffer b, int v) {
    while ((v & ~0x7F) != 0) {
      b.put((byte) ((v & 0x7F) | 0x80));
      v >>>= 7;
    }
    b.put((byte) v);
  }

  static int getVarint(ByteBuffer b) {
    int v = 0;
    int shift = 0;
    while (true) {
      byte x = b.get();
      v |= (x & 0x7F) << shift;
      if (x >= 0) {
        return v;
      }
      shift += 7;
    }
  }
}
