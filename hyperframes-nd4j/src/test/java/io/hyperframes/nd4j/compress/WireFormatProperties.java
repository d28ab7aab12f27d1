package io.hyperframes.nd4j.compress;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Arrays;
import java.util.SplittableRandom;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.LongRange;
import net.jqwik.api.statistics.Statistics;
import org.nd4j.linalg.api.buffer.DataType;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.factory.Nd4j;

/**
 * Whatever arrives: a message damaged on the way (a byte changed, a run overwritten, cut short,
 * bytes appended, another codec's name, a huge length) is either refused by
 * {@link Encoded#fromBytes} with an {@link IllegalArgumentException}, or is a well-formed
 * message that decodes into finite values without any other exception; and an undamaged one
 * decodes from its bytes exactly as the sender's own message does.
 */
class WireFormatProperties {

  @Property(tries = 1000)
  void fromBytesDecodesAsTheInProcessMessage(@ForAll @IntRange(min = 0, max = 9) int which,
      @ForAll @IntRange(min = 1, max = 3000) int n,
      @ForAll @LongRange(min = 0, max = 1_000_000) long seed,
      @ForAll @IntRange(min = 1, max = 3) int steps) {
    String id = WireFormatTest.CODECS[which];
    GradientCodec sender = GradientCodec.named(id);
    for (int t = 0; t < steps; t++) {
      Encoded m = sender.encode(Nd4j.createFromArray(GradientCodecTest.gaussian(n, seed + t)));
      float[] local = GradientCodecTest.decode(sender, m, n);
      float[] wire = GradientCodecTest.decode(GradientCodec.named(id),
          Encoded.fromBytes(m.toBytes()), n);
      assertTrue(Arrays.equals(local, wire), id + " step " + t);
    }
  }

  @Property(tries = 10_000)
  void aDamagedMessageIsRefusedOrDecodesToFiniteValues(
      @ForAll @IntRange(min = 0, max = 9) int which, @ForAll @IntRange(min = 1, max = 2000) int n,
      @ForAll @LongRange(min = 0, max = 1_000_000) long seed,
      @ForAll @IntRange(min = 0, max = 5) int damage) {
    String id = WireFormatTest.CODECS[which];
    byte[] wire = GradientCodec.named(id).encode(Nd4j.createFromArray(
        GradientCodecTest.gaussian(n, seed))).toBytes();
    SplittableRandom r = new SplittableRandom(seed ^ 0x5eedL);
    byte[] bad = switch (damage) {
      case 0 -> {
        byte[] b = wire.clone();
        b[r.nextInt(b.length)] = (byte) r.nextInt(256);
        yield b;
      }
      case 1 -> {
        byte[] b = wire.clone();
        int from = r.nextInt(b.length);
        for (int i = from; i < Math.min(b.length, from + 1 + r.nextInt(8)); i++) {
          b[i] = (byte) r.nextInt(256);
        }
        yield b;
      }
      case 2 -> Arrays.copyOf(wire, r.nextInt(wire.length));
      case 3 -> {
        // Another codec's name over the same elements and payload.
        String other = WireFormatTest.CODECS[r.nextInt(WireFormatTest.CODECS.length)];
        Encoded m = Encoded.fromBytes(wire);
        byte[] payload = new byte[(int) m.bytes()];
        m.payload().get(payload);
        yield WireFormatTest.message(other, (int) m.elements(), payload);
      }
      case 4 -> {
        // A huge element count or payload length in an otherwise whole message.
        Encoded m = Encoded.fromBytes(wire);
        byte[] payload = new byte[(int) m.bytes()];
        m.payload().get(payload);
        yield r.nextBoolean()
            ? WireFormatTest.message(id, Integer.MAX_VALUE - r.nextInt(1000), payload)
            : WireFormatTest.withLength(id, (int) m.elements(), payload,
                Integer.MAX_VALUE - r.nextInt(1000));
      }
      default -> {
        byte[] b = Arrays.copyOf(wire, wire.length + 1 + r.nextInt(8));
        for (int i = wire.length; i < b.length; i++) {
          b[i] = (byte) r.nextInt(256);
        }
        yield b;
      }
    };
    Encoded m;
    try {
      m = Encoded.fromBytes(bad);
    } catch (IllegalArgumentException refused) {
      assertTrue(refused.getMessage().startsWith("message"), refused.getMessage());
      Statistics.label("outcome").collect("refused");
      return;
    }
    if (m.elements() > 100_000) {
      Statistics.label("outcome").collect("well-formed, too large to decode here");
      return;
    }
    Statistics.label("outcome").collect("well-formed, decoded");
    INDArray out = Nd4j.zeros(DataType.FLOAT, m.elements());
    GradientCodec.named(m.codec()).decodeAdd(m, out);
    float[] v = out.toFloatVector();
    assertEquals(m.elements(), v.length);
    for (int i = 0; i < v.length; i++) {
      assertTrue(Float.isFinite(v[i]), id + ": element " + i + " is " + v[i]);
    }
  }
}
