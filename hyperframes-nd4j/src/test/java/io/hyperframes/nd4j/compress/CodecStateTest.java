package io.hyperframes.nd4j.compress;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Arrays;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.nd4j.linalg.factory.Nd4j;

/**
 * A codec's saved state continues it exactly: a fresh codec restored from {@link
 * GradientCodec#state()} sends, for the next gradients, the very bytes the saved one sends; bad
 * states are named.
 */
class CodecStateTest {

  @ParameterizedTest
  @ValueSource(strings = {"none", "topk-0.05-ef", "topk-0.05", "randomk-0.05-ef",
      "randomk-0.05", "int8", "int8-tensor", "sign-ef", "bf16", "fp16"})
  void aRestoredCodecSendsWhatTheSavedOneSends(String id) {
    int n = 20_000;
    GradientCodec saved = GradientCodec.named(id);
    GradientCodec fresh = GradientCodec.named(id);
    fresh.restore(saved.state());
    for (int step = 0; step < 3; step++) {
      saved.encode(Nd4j.createFromArray(GradientCodecTest.gaussian(n, 40 + step)));
    }
    byte[] state = saved.state();
    GradientCodec restored = GradientCodec.named(id);
    restored.restore(state);
    assertArrayEquals(state, restored.state(), id + ": the state again");
    for (int step = 3; step < 6; step++) {
      float[] g = GradientCodecTest.gaussian(n, 40 + step);
      byte[] expected = saved.encode(Nd4j.createFromArray(g)).toBytes();
      assertArrayEquals(expected, restored.encode(Nd4j.createFromArray(g)).toBytes(),
          id + ": step " + step);
    }
    if (id.endsWith("-ef")) {
      // The residual is carried: a codec that starts fresh at step 3 sends something else.
      GradientCodec forgetful = GradientCodec.named(id);
      byte[] a = saved.encode(Nd4j.createFromArray(GradientCodecTest.gaussian(n, 9))).toBytes();
      byte[] b = forgetful.encode(Nd4j.createFromArray(GradientCodecTest.gaussian(n, 9)))
          .toBytes();
      assertTrue(!Arrays.equals(a, b), id + ": the residual matters");
    }
  }

  @Test
  void dl4jThresholdHasNoSavableState() {
    GradientCodec c = GradientCodec.named("dl4j-threshold");
    IllegalStateException e = assertThrows(IllegalStateException.class, c::state);
    assertTrue(e.getMessage().contains("dl4j-threshold"), e.getMessage());
  }

  @Test
  void badStatesAreNamed() {
    GradientCodec topk = GradientCodec.named("topk-0.05-ef");
    topk.encode(Nd4j.createFromArray(GradientCodecTest.gaussian(1000, 1)));
    byte[] state = topk.state();
    assertRefused("sign-ef", state, "state: saved by codec topk-0.05-ef");
    assertRefused("topk-0.05-ef", Arrays.copyOf(state, state.length - 3), "state:");
    assertRefused("topk-0.05-ef", new byte[] {1, 2, 3}, "state:");
    byte[] bad = state.clone();
    bad[0] = 'X';
    assertRefused("topk-0.05-ef", bad, "state: not a codec state");
    assertRefused("topk-0.05-ef", null, "state: must be given");
  }

  private static void assertRefused(String id, byte[] state, String start) {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> GradientCodec.named(id).restore(state));
    assertTrue(e.getMessage().startsWith(start), e.getMessage());
  }
}
