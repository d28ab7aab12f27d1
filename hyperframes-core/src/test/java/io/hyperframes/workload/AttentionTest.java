package io.hyperframes.workload;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import org.junit.jupiter.api.Test;

/** The causal block count of the fused attention kernel. */
class AttentionTest {

  @Test
  void multiplesOfTheBlockComputeTheLowerTriangleOfBlocks() {
    for (int n = 1; n <= 64; n++) {
      assertEquals((n + 1.0) / (2.0 * n), Attention.causalTileShare(128.0 * n), 1e-12,
          "n = " + n);
    }
    // One partial block: all of it is computed.
    assertEquals(1.0, Attention.causalTileShare(77), 1e-12);
    // 129 tokens: the first block (128 × 128) and the second's one query row over 129 keys.
    assertEquals((128.0 * 128 + 129) / (129.0 * 129), Attention.causalTileShare(129), 1e-12);
  }

  /** The executed pairs, share × s², never fall as the sequence grows (across block edges too). */
  @Property(tries = 2000)
  void executedPairsGrowWithTheSequence(@ForAll @IntRange(min = 1, max = 1 << 17) int s) {
    double here = Attention.causalTileShare(s) * s * s;
    double next = Attention.causalTileShare(s + 1) * (s + 1.0) * (s + 1.0);
    assertTrue(next > here, () -> s + ": " + here + " -> " + next);
    assertTrue(Attention.causalTileShare(s) <= 1 && Attention.causalTileShare(s) > 0.5);
  }

  @Test
  void rejectsAnEmptySequence() {
    var e = assertThrows(IllegalArgumentException.class, () -> Attention.causalTileShare(0));
    assertTrue(e.getMessage().startsWith("tokens:"), e.getMessage());
    assertThrows(IllegalArgumentException.class,
        () -> Attention.causalTileShare(Double.NaN));
  }
}
