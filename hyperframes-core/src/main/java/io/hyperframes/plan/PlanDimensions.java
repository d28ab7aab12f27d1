package io.hyperframes.plan;

import io.hyperframes.model.DenseStackSpec;
import io.hyperframes.model.ModelSpec;
import io.hyperframes.model.TransformerSpec;
import io.hyperframes.parallel.CpCommType;
import io.hyperframes.parallel.MoeDispatcher;
import io.hyperframes.parallel.Engine;
import io.hyperframes.parallel.Layout;
import io.hyperframes.parallel.PartialLayout;
import io.hyperframes.parallel.Recompute;
import java.util.ArrayList;
import java.util.List;

/**
 * The values the planner's search tries for each dimension of a layout (context, expert and
 * expert tensor parallelism, micro-batches, global batches, virtual stages) and the layout an
 * engine makes of one choice of them: the fixed value when the request fixes one, else the
 * values the pruning rules keep (docs/user-guide.md, "plan"). Part of {@link Planner}.
 */
final class PlanDimensions {
  private PlanDimensions() {}

  /**
   * Tokens a context-parallel rank keeps at least, as the search bounds cp: below it the KV
   * exchange per step has less attention to hide behind than the tokens cost to send (a bound on
   * the search, not a model constant; a request may fix a larger cp).
   */
  static final int CP_MIN_TOKENS_PER_RANK = 4096;

  /**
   * The context-parallel degrees to try: the fixed one, else 1 and, for a Megatron-LM
   * transformer whose sequence is at least twice {@link #CP_MIN_TOKENS_PER_RANK}, each power of
   * two that keeps that many tokens per rank, divides the devices left after tp and gives the
   * sequence the 2·cp chunks of causal load balancing.
   */
  static List<Integer> contextParallel(PartialLayout p, ModelSpec m, int devicesAfterTp,
      Engine engine) {
    if (p.cp() != null) {
      return devicesAfterTp % p.cp() == 0 ? List.of(p.cp()) : List.of();
    }
    List<Integer> out = new ArrayList<>(List.of(1));
    if (m instanceof TransformerSpec t && engine == Engine.MEGATRON) {
      for (int cp = 2; t.seqLen() / cp >= CP_MIN_TOKENS_PER_RANK && cp <= devicesAfterTp;
          cp *= 2) {
        if (devicesAfterTp % cp == 0 && t.seqLen() % (2 * cp) == 0) {
          out.add(cp);
        }
      }
    }
    return out;
  }

  /** Largest micro-batch tried for a dense stack (samples per replica and step). */
  static final int DENSE_MAX_MICRO_BATCH = 8192;

  /** Attention heads, or 1 for a dense stack (no tensor split). */
  static int heads(ModelSpec m) {
    return m instanceof TransformerSpec t ? t.heads() : 1;
  }

  /** Layers a pipeline can split, or 1 for a dense stack (no pipeline). */
  static int layers(ModelSpec m) {
    return m instanceof TransformerSpec t ? t.layers() : 1;
  }

  /** Whether an all-to-all context-parallel exchange, if fixed, splits the heads per rank. */
  static boolean ulyssesSplitsHeads(PartialLayout p, ModelSpec m, int tp, int cp,
      int perNode) {
    if (cp == 1 || p.cpCommType() == null || p.cpCommType() == CpCommType.P2P
        || p.cpCommType() == CpCommType.ALL_GATHER) {
      return true;
    }
    int ranks = p.cpCommType() == CpCommType.A2A ? cp : Math.max(1, Math.min(cp, perNode / tp));
    return (heads(m) / tp) % ranks == 0;
  }

  static List<Integer> microBatches(PartialLayout p, ModelSpec m) {
    if (p.microBatch() != null) {
      return List.of(p.microBatch());
    }
    List<Integer> out = new ArrayList<>();
    for (int mb : LayoutSpace.MICRO_BATCHES) {
      out.add(mb);
    }
    if (m instanceof DenseStackSpec) {
      // A sample is one matmul row: a dense stack wants micro-batches of hundreds of rows.
      for (int mb = 2 * LayoutSpace.MICRO_BATCHES[LayoutSpace.MICRO_BATCHES.length - 1];
          mb <= DENSE_MAX_MICRO_BATCH; mb *= 2) {
        out.add(mb);
      }
    }
    return out;
  }

  /** Global batches to try for (dp, mb); see {@link Planner}, pruning rule 2. */
  static List<Integer> batches(PlanRequest r, int dp, int mb, int pp) {
    long unit = (long) dp * mb;
    int fixed = r.workload().globalBatchSize();
    if (fixed > 0) {
      return fixed % unit == 0 ? List.of(fixed) : List.of();
    }
    long lo = Math.max(1, (Math.max(1, r.minGlobalBatch()) + unit - 1) / unit);
    long hi = r.maxGlobalBatch() / unit;
    if (hi < lo) {
      return List.of();
    }
    List<Integer> out = new ArrayList<>();
    if (r.exhaustive()) {
      for (long m = lo; m <= hi; m++) {
        out.add((int) (m * unit));
      }
      return out;
    }
    for (long m = lo; m <= Math.min(hi, pp - 1); m++) {
      out.add((int) (m * unit));
    }
    if (hi >= pp) {
      long multiple = hi / pp * pp;
      if (multiple >= lo && multiple != hi) {
        out.add((int) (multiple * unit));
      }
      out.add((int) (hi * unit));
    }
    return out;
  }

  /**
   * The layout {@code engine} and the request's sharding fields make of these choices; null when
   * the engine cannot run it ({@link Engine#unsupported}) or a shard group does not divide dp.
   */
  static Layout layout(PartialLayout p, Engine engine, int tp, int pp, int dp, int v,
      int mb, boolean sp, Recompute rc, int zero, int ep, int cp) {
    return layout(p, engine, tp, pp, dp, v, mb, sp, rc, zero, ep, cp,
        p.etp() == null ? engine.defaultExpertTensorParallel(tp, ep) : p.etp());
  }

  /**
   * The expert-parallel degrees the search tries on {@code engine}: those of
   * {@link LayoutSpace#expertParallel}, except that an engine other than Megatron-LM is
   * searched at ep 1 unless the request names it ({@code layout.engine}) or fixes {@code ep}.
   * Expert parallelism on PyTorch FSDP ({@link Engine#runsExpertParallel}) multiplies the
   * candidates of a mixture of experts by the divisors of dp again (DeepSeek-V3 on 256-4096
   * H800: 21.2 to 29.0 million, the search 37 % longer) for a layout the engine-open search has
   * not chosen on the catalog's MoE models; a request that names fsdp gets it searched.
   */
  static List<Integer> expertParallel(PartialLayout p, ModelSpec m, int tp, int dpCp,
      Engine engine) {
    if (p.engine() == null && p.ep() == null && engine != Engine.MEGATRON) {
      return List.of(1);
    }
    return LayoutSpace.expertParallel(p, m instanceof TransformerSpec ts ? ts : null,
        expertRanks(p, tp, dpCp), engine);
  }

  /**
   * The ranks a fixed expert-parallel degree must divide: tp·cp·dp / etp, the expert grid of
   * Megatron-Core (ep·etp divides tp·cp·dp), with etp 1 when it is open (the planner tries 1);
   * for a searched degree, dp·cp (experts split over the data- and context-parallel ranks).
   * {@link #layout} checks the grid with the etp it builds.
   */
  static int expertRanks(PartialLayout p, int tp, int dpCp) {
    if (p.ep() == null) {
      return dpCp;
    }
    int etp = p.etp() != null ? p.etp() : 1;
    return tp % etp == 0 ? dpCp * (tp / etp) : dpCp;
  }

  /**
   * The expert tensor-parallel degrees to try: the fixed one; else, for an expert-parallel
   * layout with tensor parallelism, tp (Megatron-LM's default) and 1 (whole experts, the
   * expert-parallel ranks adjacent); else tp.
   */
  static List<Integer> expertTensorParallel(PartialLayout p, ModelSpec m, int tp,
      int ep, Engine engine) {
    if (p.etp() != null) {
      return List.of(p.etp());
    }
    if (!engine.splitsExperts()) {
      return List.of(engine.defaultExpertTensorParallel(tp, ep));
    }
    return ep > 1 && tp > 1 && m instanceof TransformerSpec t && t.isMoe() ? List.of(tp, 1)
        : List.of(tp);
  }

  static Layout layout(PartialLayout p, Engine engine, int tp, int pp, int dp, int v,
      int mb, boolean sp, Recompute rc, int zero, int ep, int cp, int etp) {
    int group = (zero == 3 || zero == 1) && p.shardGroupSize() != null ? p.shardGroupSize()
        : 0;
    boolean reshard = p.reshardAfterForward() == null || p.reshardAfterForward();
    if ((group > 0 && dp % group != 0)
        || engine.unsupported(pp, v, zero, group, reshard) != null) {
      return null;
    }
    if (!Layout.expertGridFits(tp, cp, dp, ep, etp)
        || p.moeDispatcher() == MoeDispatcher.DEEPEP && ep * etp == 1) {
      return null;
    }
    Layout l = new Layout(tp, pp, dp, v, mb, sp, rc, zero, engine, group, reshard, ep, cp,
        p.cpCommType() == null ? CpCommType.P2P : p.cpCommType(), etp,
        rc == Recompute.SELECTIVE ? p.recomputeModules() : null, p.moeDispatcher());
    l = p.withStageLayersOn(l);
    if (l == null) {
      return null;
    }
    l = p.withDataParallelOverlapOn(l);
    if (l == null) {
      return null;
    }
    if (Boolean.TRUE.equals(p.overlapMoeComm())) {
      return LayoutSpace.overlapUnsupported(l) == null ? l.withOverlapMoeComm(true) : null;
    }
    return l;
  }

  static List<Integer> virtualStages(PartialLayout p, int pp, int perStage, int micro) {
    if (p.virtualStages() != null) {
      int v = p.virtualStages();
      return (v == 1 || (pp > 1 && perStage % v == 0)) ? List.of(v) : List.of();
    }
    List<Integer> out = new ArrayList<>();
    out.add(1);
    if (pp > 1 && micro % pp == 0) {
      for (int v = 2; v <= Math.min(MAX_VIRTUAL_STAGES, perStage); v++) {
        if (perStage % v == 0) {
          out.add(v);
        }
      }
    }
    return out;
  }

  static final int MAX_VIRTUAL_STAGES = 8;
}
