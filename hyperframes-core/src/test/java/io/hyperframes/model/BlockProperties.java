package io.hyperframes.model;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

/**
 * A model is the sum of its blocks ({@link Block}): over random dense, mixture-of-experts,
 * latent-attention, windowed and multi-token-prediction transformers, the block sums equal the
 * closed forms the estimators used before the blocks (written out here layer by layer, as
 * Narayanan et al. 2021 §5.1 count a layer), so every figure built on them is unchanged.
 */
class BlockProperties {

  @Provide
  Arbitrary<TransformerSpec> models() {
    Arbitrary<int[]> shape = Combinators.combine(Arbitraries.of(1, 2, 4, 8, 24, 61),
        Arbitraries.of(8, 16, 32, 64), Arbitraries.of(1, 2, 4, 8), Arbitraries.of(0, 64, 128),
        Arbitraries.of(256, 4096, 32768), Arbitraries.of(1000, 32000, 129280))
        .as((l, a, kd, d, s, v) -> new int[] {l, a, kd, d, s, v});
    Arbitrary<MoeSpec> moe = Combinators.combine(Arbitraries.of(1, 2, 8, 64, 256),
        Arbitraries.integers().between(1, 8), Arbitraries.of(0, 1, 2), Arbitraries.of(0, 1, 3),
        Arbitraries.of(1, 2), Arbitraries.of(0.0, 1.25))
        .as((e, k, shared, first, interval, cf) -> new MoeSpec(e, Math.min(k, e), 512, shared,
            shared > 0 ? 1024 : 0, first, interval, cf)).injectNull(0.4);
    Arbitrary<MlaSpec> mla = Arbitraries.of(new MlaSpec(1536, 512, 128, 64, 128),
        new MlaSpec(0, 512, 128, 64, 128)).injectNull(0.7);
    Arbitrary<SlidingWindowSpec> window = Arbitraries.of(new SlidingWindowSpec(128, 2),
        new SlidingWindowSpec(4096, 6), new SlidingWindowSpec(8192, 4, true),
        new SlidingWindowSpec(1024, 0)).injectNull(0.6);
    return Combinators.combine(shape, Arbitraries.of(true, false), Arbitraries.of(true, false),
        moe, mla, window, Arbitraries.of(0, 1, 2)).as((sh, gated, tied, m, la, w, mtp) -> {
          int heads = sh[1];
          int headDim = la != null ? 0 : sh[3];
          int hidden = 64 * heads;
          int kvHeads = la != null ? heads : Math.max(1, heads / sh[2]);
          return new TransformerSpec("m", sh[0], hidden, heads, kvHeads,
              TransformerSpec.defaultFfnHidden(hidden, gated), gated, sh[5], sh[4], tied,
              headDim, m, la, w, m != null ? mtp : 0);
        });
  }

  @Property(tries = 1000)
  void theTotalsAreTheSumsOfTheBlocks(@ForAll("models") TransformerSpec m) {
    List<Block> blocks = m.blocks();
    double h = m.hidden();
    double l = m.layers();
    // Closed forms: per layer attention, MLP (the dense layers' and the MoE layers' averaged),
    // norms and biases; embedding and positions, untied output, final norm.
    double attention = m.attentionParametersPerLayer();
    double moeAll = 0.0;
    double moeActive = 0.0;
    if (m.isMoe()) {
      MoeSpec e = m.moe();
      double router = e.routed() ? h * e.experts() : 0.0;
      double shared = e.sharedExperts() * m.mlpParameters(e.sharedExpertFfnHidden());
      moeAll = e.experts() * m.mlpParameters(e.expertFfnHidden()) + shared + router;
      moeActive = e.topK() * m.mlpParameters(e.expertFfnHidden()) + shared + router;
    }
    double dense = m.denseLayers() * m.mlpParameters(m.ffnHidden());
    double embedding = m.vocab() * h + (m.gatedMlp() ? 0.0 : m.seqLen() * h)
        + (m.tiedEmbeddings() ? 0.0 : m.vocab() * h);
    double finalNorm = m.gatedMlp() ? h : 2 * h;
    double total = l * (attention + m.smallParametersPerLayer()) + dense
        + m.moeLayers() * moeAll + embedding + finalNorm;
    double active = total - m.moeLayers() * (moeAll - moeActive);
    assertEquals(total, m.parameters(), 1e-12 * total);
    assertEquals(active, m.activeParameters(), 1e-12 * total);
    assertTrue(m.activeParameters() <= m.parameters() * (1 + 1e-12));

    // Forward FLOPs: two per weight a token uses, the score and value products over the pairs
    // each layer's window keeps, the logits, and the MTP modules (projection, a layer like the
    // last with the average attention, their own logits).
    double scores = m.mla() != null ? 2.0 * m.seqLen() * (m.qDim() + m.valueDim())
        : 4.0 * m.seqLen() * m.qDim();
    double attentionFlops = scores * m.attentionPairShare(m.seqLen());
    double layerFlops = 2.0 * (attention + (dense + m.moeLayers() * moeActive) / l)
        + attentionFlops;
    assertEquals(layerFlops, m.forwardFlopsPerTokenPerLayer(), 1e-12 * layerFlops);
    double logits = 2.0 * h * m.vocab();
    double mtp = 0.0;
    double mtpParameters = 0.0;
    if (m.mtpLayers() > 0) {
      boolean lastMoe = m.moe().isMoeLayer(m.layers() - 1);
      double lastAll = attention + (lastMoe ? moeAll : m.mlpParameters(m.ffnHidden()));
      double lastActive = attention + (lastMoe ? moeActive : m.mlpParameters(m.ffnHidden()));
      mtp = m.mtpLayers() * (4 * h * h + 2 * lastActive + attentionFlops + logits);
      mtpParameters = m.mtpLayers() * (2 * h * h + lastAll + m.smallParametersPerLayer() + 2 * h);
    }
    double training = 3 * (l * layerFlops + logits + mtp);
    assertEquals(training, m.trainingFlopsPerToken(), 1e-12 * training);
    assertEquals(mtpParameters, m.mtpParameters(), 1e-12 * Math.max(1, mtpParameters));

    // Every layer has one attention, one norm set and one MLP (dense or MoE).
    int attentionLayers = 0;
    int mlpLayers = 0;
    for (Block b : blocks) {
      assertTrue(b.count() > 0, b.toString());
      assertTrue(b.parameters() >= b.activeParameters() && b.activeParameters() >= 0,
          b.toString());
      assertTrue(b.forwardFlopsPerToken() >= 0, b.toString());
      if (b instanceof Block.Attention) {
        attentionLayers += b.count();
      } else if (b instanceof Block.Mlp || b instanceof Block.Moe) {
        mlpLayers += b.count();
      } else if (b instanceof Block.Norms) {
        assertEquals(m.layers(), b.count());
      }
    }
    assertEquals(m.layers(), attentionLayers);
    assertEquals(m.layers(), mlpLayers);
    assertEquals(m.mtpLayers() > 0, blocks.get(blocks.size() - 1) instanceof Block.Mtp);
  }

  @Property(tries = 1000)
  void aMixtureOfOneExpertHasTheDenseModelsBlocksSums(@ForAll("models") TransformerSpec m) {
    // E = k = 1 with the dense MLP's size, no shared experts, every layer: no router, the
    // dense layer's weights and FLOPs.
    TransformerSpec dense = new TransformerSpec(m.name(), m.layers(), m.hidden(), m.heads(),
        m.kvHeads(), m.ffnHidden(), m.gatedMlp(), m.vocab(), m.seqLen(), m.tiedEmbeddings(),
        m.headDim(), null, m.mla(), m.slidingWindow(), 0);
    TransformerSpec one = new TransformerSpec(m.name(), m.layers(), m.hidden(), m.heads(),
        m.kvHeads(), m.ffnHidden(), m.gatedMlp(), m.vocab(), m.seqLen(), m.tiedEmbeddings(),
        m.headDim(), new MoeSpec(1, 1, m.ffnHidden(), 0, 0, 0, 1, 0), m.mla(),
        m.slidingWindow(), 0);
    assertEquals(dense.parameters(), one.parameters(), 1e-12 * dense.parameters());
    assertEquals(dense.activeParameters(), one.activeParameters(), 1e-12 * dense.parameters());
    assertEquals(dense.trainingFlopsPerToken(), one.trainingFlopsPerToken(),
        1e-12 * dense.trainingFlopsPerToken());
  }
}
