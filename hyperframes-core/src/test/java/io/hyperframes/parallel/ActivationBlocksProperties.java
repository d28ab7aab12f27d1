package io.hyperframes.parallel;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.hyperframes.model.MlaSpec;
import io.hyperframes.model.MoeSpec;
import io.hyperframes.model.SlidingWindowSpec;
import io.hyperframes.model.TransformerSpec;
import io.hyperframes.precision.PrecisionRecipe;
import java.util.EnumSet;
import java.util.Set;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import org.junit.jupiter.api.Test;

/**
 * The activations a layer stores, summed over its blocks ({@code TransformerSpec#blocks}), equal
 * the closed form Megatron's parallelism model used before the blocks (kept below as the oracle,
 * as it was at f5c2e0f) for every layout and recomputation policy; and, GPT style without
 * parallelism, Korthikanti et al. 2022 (arXiv 2205.05198) §4.1's sbh(34 + 5as/h).
 */
class ActivationBlocksProperties {

  private static final ParallelismModel MEGATRON = ParallelismModel.megatron();

  @Provide
  Arbitrary<TransformerSpec> models() {
    Arbitrary<MoeSpec> moe = Combinators.combine(Arbitraries.of(1, 8, 64),
        Arbitraries.integers().between(1, 8), Arbitraries.of(0, 1), Arbitraries.of(0, 1, 3),
        Arbitraries.of(1, 2), Arbitraries.of(0.0, 1.25))
        .as((e, k, shared, first, interval, cf) -> new MoeSpec(e, Math.min(k, e), 512, shared,
            shared > 0 ? 1024 : 0, first, interval, cf)).injectNull(0.4);
    Arbitrary<MlaSpec> mla = Arbitraries.of(new MlaSpec(1536, 512, 128, 64, 128)).injectNull(0.7);
    Arbitrary<SlidingWindowSpec> window = Arbitraries.of(new SlidingWindowSpec(128, 2))
        .injectNull(0.7);
    return Combinators.combine(Arbitraries.of(2, 8, 24), Arbitraries.of(8, 16, 32),
        Arbitraries.of(1, 4), Arbitraries.of(true, false), Arbitraries.of(512, 4096), moe, mla,
        window).as((l, a, kd, gated, s, m, la, w) -> new TransformerSpec("m", l, 128 * a, a,
            la != null ? a : Math.max(1, a / kd), TransformerSpec.defaultFfnHidden(128 * a,
                gated), gated, 32000, s, false, 0, m, la, w, 0));
  }

  @Provide
  Arbitrary<Layout> layouts() {
    Arbitrary<Set<RecomputeModule>> modules = Arbitraries.of(RecomputeModule.class).set()
        .ofMinSize(1).ofMaxSize(4).map(EnumSet::copyOf);
    return Combinators.combine(Arbitraries.of(1, 2, 4, 8), Arbitraries.of(1, 2, 4),
        Arbitraries.of(true, false), Arbitraries.of(Recompute.class), modules,
        Arbitraries.of(1, 2), Arbitraries.of(1, 2)).as((tp, mb, sp, r, mods, cp, etpDiv) ->
            new Layout(tp, 1, 8, 1, mb, sp && tp > 1, r, 1, Engine.MEGATRON, 0, true, 1, cp,
                CpCommType.P2P, Math.max(1, tp / etpDiv),
                r == Recompute.SELECTIVE ? mods : Set.of(), MoeDispatcher.ALL_TO_ALL, false));
  }

  @Property(tries = 1000)
  void theBlocksSumToTheClosedForm(@ForAll("models") TransformerSpec m,
      @ForAll("layouts") Layout l, @ForAll boolean fp8) {
    PrecisionRecipe p = PrecisionRecipe.named("precision", fp8 ? "fp8-mixed" : "bf16-mixed");
    double expected = oracle(m, l, p);
    assertEquals(expected, MEGATRON.activationBytesPerLayer(m, l, p), 1e-12 * expected);
  }

  @Test
  void gptStyleWithoutParallelismIsKorthikanti() {
    int s = 2048;
    int h = 12288;
    int a = 96;
    int b = 1;
    TransformerSpec gpt3 = new TransformerSpec("gpt3", 96, h, a, a, 4 * h, false, 51200, s,
        true);
    Layout none = new Layout(1, 1, 1, 1, b, false, Recompute.NONE, 0, Engine.MEGATRON, 0, true,
        1, 1, CpCommType.P2P, 1, Set.of(), MoeDispatcher.ALL_TO_ALL, false);
    PrecisionRecipe p = PrecisionRecipe.named("precision", "fp16-mixed");
    double sbh = (double) s * b * h;
    assertEquals(sbh * (34 + 5.0 * a * s / h), MEGATRON.activationBytesPerLayer(gpt3, none, p),
        1e-12 * sbh * 34);
  }

  /** The closed form as it was at f5c2e0f, before the blocks. */
  static double oracle(TransformerSpec m, Layout l, PrecisionRecipe precision) {
    double s = m.seqLen();
    // Context parallelism: each rank keeps the activations of its s/cp tokens, and its queries'
    // scores over the whole sequence (Megatron-Core context parallelism).
    double sq = s / l.cp();
    double b = l.microBatch();
    double h = m.hidden();
    double f = m.activeFfnHidden();
    double t = l.tp();
    double kv = m.kvDim();
    double e = precision.activationBytes();
    double sp = l.sequenceParallel() ? t : 1.0;
    double sb = sq * b;
    if (l.recompute() == Recompute.FULL) {
      return e * sb * h / sp;
    }
    boolean dropout = !m.gatedMlp();
    // Replicated across the tensor-parallel group unless sequence parallelism shards them.
    double replicated = sb * h * (e /* LN1 input */ + e /* QKV input */ + e /* LN2 input */
        + e /* MLP input */ + (dropout ? 2.0 : 0.0) /* two dropout masks */);
    // Sharded by tensor parallelism.
    double q = m.qDim();
    double attention = sb * (e * q /* Q */ + e * kv /* K */ + e * kv /* V */ + e * q /* proj in */);
    double mlp = m.gatedMlp() ? sb * f * e * 3 : sb * f * e * 2;
    double sharded = attention + mlp;
    // A routed MoE layer's experts store their first matmul's input for its weight gradient
    // (Korthikanti et al. 2022 §4.1: each linear layer keeps its input): the dispatched token
    // copies, k·h per token, not the normalised input the dense MLP's first matmul shares with
    // the router. A rank holds the copies of the tokens its expert tensor-parallel group routes:
    // etp/tp of the tensor-parallel group's (Megatron-Core's dispatcher; as the expert matmuls'
    // rows in TrainingEstimator). Without routing (E = 1) the input is the normalised one.
    double dispatched = m.isMoe() && m.moe().routed()
        ? e * sb * m.moe().routedPerToken() * h * m.moeLayers() / m.layers()
            * l.etp() / t : 0.0;
    if (!l.recomputeModules().isEmpty()
        && !l.recomputeModules().equals(RecomputeModule.DEFAULT)) {
      replicated -= droppedReplicated(m, l, sb, e);
      sharded -= droppedSharded(m, l, sb, e);
    }
    double core = 0.0;
    if (!l.recomputes(RecomputeModule.CORE_ATTN)) {
      // softmax output (e), dropout mask (1) and dropout output (e) per score; no dropout: e.
      double perScore = dropout ? 2 * e + 1 : e;
      core = perScore * m.heads() * sq * s * b;
    }
    if (l.recomputes(RecomputeModule.MOE)) {
      // The whole MoE layer reruns from its input: its dispatched copies are rebuilt too.
      dispatched = 0.0;
    }
    return replicated / sp + (sharded + core) / t + dispatched;
  }

  /**
   * Replicated bytes per layer (averaged over the layers) that the selectively recomputed
   * modules do not store: with {@code layernorm} the two normalisations' outputs (Korthikanti's
   * "QKV input" and "MLP input", 2sbh each in 16 bits), rebuilt from the stored residual; with
   * {@code mla_up_proj} nothing replicated (the latents it keeps are counted below).
   */
  private static double droppedReplicated(TransformerSpec m, Layout l, double sb, double e) {
    double dropped = 0.0;
    if (l.recomputes(RecomputeModule.LAYERNORM)) {
      dropped += sb * m.hidden() * 2 * e;
    }
    if (l.recomputes(RecomputeModule.MLA_UP_PROJ) && m.mla() != null) {
      // The query and key-value latents (and the shared rotary key) stay stored as the
      // up-projections' inputs: negative drop, kept on every tensor-parallel rank.
      dropped -= sb * e * (m.mla().qLoraRank() + m.mla().kvLoraRank() + m.mla().qkRopeHeadDim());
    }
    return dropped;
  }

  /**
   * Tensor-parallel-sharded bytes per layer (averaged over the layers) that the selectively
   * recomputed modules do not store, from the MLP's 3sbf (gated: gate, up and their product; 2sbf
   * plain) split into the dense layers', the routed experts' (k·f_e per token) and the shared
   * experts' parts: {@code mlp} drops the dense layers' part, {@code moe} the routed and shared
   * parts, {@code moe_act} the routed experts' activation output (sbf_e·k, the second matmul's
   * input), {@code shared_experts} the shared part; {@code mla_up_proj} drops Q, K and V.
   */
  private static double droppedSharded(TransformerSpec m, Layout l, double sb, double e) {
    double passes = m.gatedMlp() ? 3 : 2;
    double layers = m.layers();
    double dropped = 0.0;
    if (l.recomputes(RecomputeModule.MLP)) {
      dropped += passes * e * sb * m.ffnHidden() * m.denseLayers() / layers;
    }
    if (m.isMoe()) {
      double share = m.moeLayers() / layers;
      double routed = m.moe().routedPerToken() * m.moe().expertFfnHidden();
      double shared = m.moe().sharedExperts() * (double) m.moe().sharedExpertFfnHidden();
      if (l.recomputes(RecomputeModule.MOE)) {
        dropped += passes * e * sb * (routed + shared) * share;
      } else {
        if (l.recomputes(RecomputeModule.MOE_ACT)) {
          dropped += e * sb * routed * share;
        }
        if (l.recomputes(RecomputeModule.SHARED_EXPERTS)) {
          dropped += passes * e * sb * shared * share;
        }
      }
    }
    if (l.recomputes(RecomputeModule.MLA_UP_PROJ) && m.mla() != null) {
      dropped += sb * e * (m.qDim() + 2.0 * m.kvDim());
    }
    return dropped;
  }
}
