package io.hyperframes.inference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.hyperframes.catalog.Catalog;
import io.hyperframes.model.MoeSpec;
import io.hyperframes.model.TransformerSpec;
import java.util.List;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import org.junit.jupiter.api.Test;

/**
 * The expert-parallel groups the serving search tries where the experts span replicas, and the
 * redundant experts a group holds where ep does not divide the routed experts
 * (docs/inference.md, "Disaggregated prefill and decode in a serving plan").
 */
class SpanningSizesTest {

  private static TransformerSpec model(String id) {
    return Catalog.builtIn().model("model", id);
  }

  @Test
  void deepSeekOnNodesOfEightTriesEveryWholeNodeCountUpToSixteenAndThirtyTwo() {
    TransformerSpec ds = model("deepseek-v3");
    assertEquals(List.of(2, 4, 8, 16, 24, 32, 40, 48, 56, 64, 72, 80, 88, 96, 104, 112, 120,
        128, 256), InferencePlanner.spanningSizes(ds, 1, 8));
    // Above the replica's own tp only, and multiples of it.
    assertEquals(List.of(16, 24, 32, 40, 48, 56, 64, 72, 80, 88, 96, 104, 112, 120, 128, 256),
        InferencePlanner.spanningSizes(ds, 8, 8));
    // DeepSeek-V3's 256 experts in 8 router groups: the copies SGLang's EP72 deployment holds.
    assertEquals(0, InferencePlanner.redundantExperts(ds, 16));
    assertEquals(8, InferencePlanner.redundantExperts(ds, 24));
    assertEquals(24, InferencePlanner.redundantExperts(ds, 40));
    assertEquals(32, InferencePlanner.redundantExperts(ds, 72));
    // Mixtral's eight experts: no group wider than its experts, none with copies.
    TransformerSpec mixtral = model("mixtral-8x7b");
    assertEquals(List.of(2, 4, 8), InferencePlanner.spanningSizes(mixtral, 1, 8));
    assertEquals(List.of(8), InferencePlanner.spanningSizes(mixtral, 4, 8));
    assertTrue(InferencePlanner.spanningSizes(mixtral, 1, 8).stream()
        .allMatch(ep -> InferencePlanner.redundantExperts(mixtral, ep) == 0));
  }

  /**
   * The copies are the fewest that make the slots a multiple of ep and of the router's groups:
   * none where both divide the experts, and one step fewer would not do.
   */
  @Property(tries = 1000)
  void theCopiesAreTheFewestThatShareTheSlotsEqually(
      @ForAll @IntRange(min = 8, max = 512) int experts,
      @ForAll @IntRange(min = 1, max = 8) int groupsLog,
      @ForAll @IntRange(min = 2, max = 288) int ep) {
    int groups = 1 << (groupsLog - 1);
    int e = experts * groups;
    TransformerSpec m = withExperts(model("deepseek-v3"), e, groups);
    int r = InferencePlanner.redundantExperts(m, ep);
    assertTrue(r >= 0);
    assertEquals(0, (e + r) % ep, () -> e + " + " + r + " over " + ep);
    assertEquals(0, (e + r) % groups, () -> e + " + " + r + " over " + groups + " groups");
    if (e % ep == 0) {
      assertEquals(0, r);
    }
    for (int fewer = 0; fewer < r; fewer++) {
      assertTrue((e + fewer) % ep != 0 || (e + fewer) % groups != 0, "fewer copies would do");
    }
  }

  private static TransformerSpec withExperts(TransformerSpec m, int experts, int groups) {
    MoeSpec moe = m.moe();
    MoeSpec other = new MoeSpec(experts, moe.topK(), moe.expertFfnHidden(), moe.sharedExperts(),
        moe.sharedExpertFfnHidden(), moe.firstDenseLayers(), moe.layerInterval(),
        moe.capacityFactor(), groups, Math.min(groups, moe.groupTopK()));
    return new TransformerSpec(m.name(), m.layers(), m.hidden(), m.heads(), m.kvHeads(),
        m.ffnHidden(), m.gatedMlp(), m.vocab(), m.seqLen(), m.tiedEmbeddings(), m.headDim(),
        other, m.mla(), m.slidingWindow(), m.mtpLayers());
  }
}
