package io.hyperframes.plan;

import static io.hyperframes.plan.TrainingEstimator.exposed;

import static com.google.common.base.Preconditions.checkArgument;
import com.google.common.collect.ImmutableList;
import io.hyperframes.request.EstimateRequest;
import io.hyperframes.hardware.Accelerator;
import io.hyperframes.hardware.Cluster;
import io.hyperframes.hardware.KernelEfficiency;
import io.hyperframes.hardware.StepInterval;
import io.hyperframes.interconnect.Collective;
import io.hyperframes.interconnect.CollectiveGroup;
import io.hyperframes.interconnect.ExpertExchange;
import io.hyperframes.interconnect.InterconnectModel;
import io.hyperframes.memory.MemoryHierarchyModel;
import io.hyperframes.model.Block;
import io.hyperframes.model.DenseStackSpec;
import io.hyperframes.model.ModelSpec;
import io.hyperframes.model.MoeSpec;
import io.hyperframes.model.TransformerSpec;
import io.hyperframes.parallel.CpCommType;
import io.hyperframes.parallel.MoeDispatcher;
import io.hyperframes.parallel.Engine;
import io.hyperframes.parallel.Layout;
import io.hyperframes.parallel.ModelStates;
import io.hyperframes.parallel.ParallelismModel;
import io.hyperframes.parallel.PartialLayout;
import io.hyperframes.parallel.Recompute;
import io.hyperframes.parallel.RecomputeModule;
import io.hyperframes.precision.NumberFormat;
import io.hyperframes.precision.model.PrecisionModel;
import io.hyperframes.precision.PrecisionRecipe;
import io.hyperframes.workload.Attention;
import io.hyperframes.workload.GradientCompression;
import io.hyperframes.workload.Kernels;
import io.hyperframes.workload.TrainingWorkload;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * The activations a layout sends between ranks inside a layer: the context-parallel key/value
 * exchange and the expert-parallel token dispatch and combine, timed by the interconnect model
 * and, where the engine overlaps them, hidden behind the compute they run beside
 * ({@link TrainingEstimator#exposed}). Part of {@link TrainingEstimator}; docs/model-reference.md
 * gives each rule with its source.
 */
final class ActivationExchange {
  private final InterconnectModel interconnect;

  ActivationExchange(InterconnectModel interconnect) {
    this.interconnect = interconnect;
  }

  /**
   * Context-parallel key/value exchange of one layer and micro-batch on one rank, the part not
   * hidden behind attention: forward, backward, and the forward again under full recomputation
   * (Megatron-Core context parallelism through Transformer Engine; {@link CpCommType}). A rank
   * holds {@code sq = s/cp} tokens; its K and V for its heads are {@code 2·sq·b·kv·e/tp} bytes.
   * The ranks are {@code tp} apart (rank order tp-cp-ep-dp-pp), so inside a node while
   * tp·cp fits one.
   * <ul>
   *   <li>p2p (ring attention, Liu et al. 2023 §3): cp − 1 steps, each passing a KV chunk to the
   *       next rank while attending to the held one: per step {@code max(0, p2p − attention/cp)}
   *       exposed (plus the overlap cost); backward passes KV and its gradient, twice the bytes,
   *       behind the backward attention.
   *   <li>all_gather: the sequence's KV gathered before forward attention, gathered again and its
   *       gradient reduce-scattered in backward, none overlapped.
   *   <li>a2a (DeepSpeed-Ulysses, Jacobs et al. 2023 §3.1): an all-to-all of Q, K and V
   *       ({@code sq·b·(q + 2kv)·e/tp} bytes per rank) and one of the output ({@code sq·b·q·e/tp})
   *       forward, the same backward, not overlapped.
   *   <li>a2a+p2p: the all-to-all over the ranks inside the node, the ring over the nodes.
   * </ul>
   */
  double contextParallelLayerSeconds(TransformerSpec m, Cluster cluster, Layout l,
      PrecisionRecipe recipe, double sq, double attnForward, double attnBackward,
      double kappa) {
    int cp = l.cp();
    double e = recipe.activationBytes();
    double tp = l.tp();
    double b = l.microBatch();
    double kvChunk = 2 * sq * b * m.kvDim() * e / tp;
    int inNode = Math.max(1, Math.min(cp, cluster.devicesPerNode() / l.tp()));
    double passes = l.recompute() == Recompute.FULL ? 2 : 1;
    return switch (l.cpCommType()) {
      case P2P -> ring(cluster, cp, inNode >= cp, kvChunk, attnForward, attnBackward, passes,
          kappa);
      case ALL_GATHER -> {
        CollectiveGroup group = new CollectiveGroup(cp, inNode);
        double gather = interconnect.time(cluster, Collective.ALL_GATHER, kvChunk * cp, group)
            .seconds();
        double scatter = interconnect.time(cluster, Collective.REDUCE_SCATTER, kvChunk * cp,
            group).seconds();
        yield passes * gather + gather + scatter;
      }
      case A2A -> passes * ulysses(cluster, m, l, recipe, sq, cp, inNode)
          + ulysses(cluster, m, l, recipe, sq, cp, inNode);
      case A2A_P2P -> {
        int inner = inNode;
        int outer = cp / inner;
        double a2a = (passes + 1) * ulysses(cluster, m, l, recipe, sq, inner, inner);
        yield a2a + (outer > 1 ? ring(cluster, outer, false, kvChunk, attnForward,
            attnBackward, passes, kappa) : 0.0);
      }
    };
  }

  /** Exposed time of a KV ring over {@code n} ranks, forward ({@code passes} times) and backward. */
  private double ring(Cluster cluster, int n, boolean inNode, double kvChunk,
      double attnForward, double attnBackward, double passes, double kappa) {
    CollectiveGroup pair = new CollectiveGroup(2, inNode ? 2 : 1);
    double step = interconnect.time(cluster, Collective.POINT_TO_POINT, kvChunk, pair)
        .seconds();
    double stepBackward = interconnect.time(cluster, Collective.POINT_TO_POINT, 2 * kvChunk,
        pair).seconds();
    return (n - 1) * (passes * exposed(step, attnForward / n, kappa)
        + exposed(stepBackward, attnBackward / n, kappa));
  }

  /** One direction of DeepSpeed-Ulysses over {@code n} ranks: Q, K, V in and the output out. */
  private double ulysses(Cluster cluster, TransformerSpec m, Layout l, PrecisionRecipe recipe,
      double sq, int n, int perNode) {
    double perToken = sq * l.microBatch() * recipe.activationBytes() / l.tp();
    CollectiveGroup group = new CollectiveGroup(n, Math.min(n, perNode));
    return interconnect.time(cluster, Collective.ALL_TO_ALL,
        perToken * (m.qDim() + 2.0 * m.kvDim()), group).seconds()
        + interconnect.time(cluster, Collective.ALL_TO_ALL, perToken * m.valueDim(), group)
            .seconds();
  }

  /**
   * Expert-parallel token exchange of one micro-batch per layer of a stage, averaged over its
   * layers (a stage's is its layers times this): per MoE layer an all-to-all
   * to dispatch the routed tokens to the ranks holding their experts and one to combine the
   * results, forward and again backward (and once more forward under full recomputation),
   * each on the critical path (Megatron-Core's all-to-all dispatcher; Lepikhin et al. 2020,
   * GShard, arXiv 2006.16668, §3.2). Each rank sends its routed token copies,
   * {@code tokens·k·h·e} bytes (÷ tp with sequence parallelism, which splits the tokens over the
   * tensor-parallel ranks; times the capacity factor when set), over the expert-parallel group:
   * its ranks are {@code tp} apart (Megatron's rank order tp-cp-ep-dp-pp), so inside a node when
   * tp·ep fits one, else across nodes at one NIC per rank ({@link InterconnectModel}). With
   * the DeepEP dispatcher a token crosses the network once per destination node and NVLink once
   * per destination rank ({@link InterconnectModel#forwardedExchange}).
   */
  double allToAllSecondsPerLayer(TransformerSpec m, Cluster cluster, Layout l,
      PrecisionRecipe recipe, double tokens) {
    if (l.ep() <= 1 || !m.isMoe()) {
      return 0.0;
    }
    double a2a = exchangeSeconds(m, cluster, l, recipe, tokens);
    // Recomputing the whole MoE layer (--recompute-modules moe) dispatches and combines again.
    int perLayer = l.recompute() == Recompute.FULL || l.recomputes(RecomputeModule.MOE) ? 6 : 4;
    return m.moeLayerShare() * perLayer * a2a;
  }

  /**
   * The exposed expert-parallel exchange of one micro-batch per layer of a stage (averaged over
   * its layers) under Megatron-Core's
   * EP A2A overlap ({@code --overlap-moe-expert-parallel-comm}; the combined 1F1B schedule,
   * {@code megatron/core/models/common/model_chunk_schedule_plan.py} at d98e8a64,
   * {@code TransformerLayerSchedulePlan.run}). The forward of one micro-batch runs layer by layer
   * beside the backward of another, on a communication and a computation stream:
   * <pre>
   * comm: combine_bwd      | dispatch_fwd, dispatch_bwd    | combine_fwd
   * comp: pre_dispatch_fwd | mlp_bwd, mlp_bwd_dw, mlp_fwd  | pre_dispatch_bwd
   * </pre>
   * so a MoE layer's pair exposes {@code exposed(a, A_f) + exposed(2a, M_f + M_b) +
   * exposed(a, A_b)} ({@link #exposed}, with the overlap cost), {@code a} one exchange,
   * {@code A} the attention side (everything but the MLP) and {@code M} the MoE MLP (router,
   * experts, shared experts; backward twice the forward). Only the steady state pairs: the first
   * stage runs {@code 2(pp − 1) + (v − 1)·pp + 1} chunk forwards alone before it (Megatron-LM's
   * interleaved warm-up, one micro-batch more with the overlap: {@code schedules.py} at
   * d98e8a64), and as many backwards alone after; without pipelining the first forward and the
   * last backward. Those pay their four exchanges in full.
   */
  double overlappedAllToAllSecondsPerLayer(TransformerSpec m, Cluster cluster,
      Layout l, PrecisionRecipe recipe, double tokens, double attentionForward,
      double attentionBackward, double moeMlpForward, double kappa, int microBatches) {
    double a = exchangeSeconds(m, cluster, l, recipe, tokens);
    double pair = exposed(a, attentionForward, kappa) + exposed(2 * a, 3 * moeMlpForward, kappa)
        + exposed(a, attentionBackward, kappa);
    double passes = (double) microBatches * l.virtualStages();
    double alone = l.pp() == 1 ? 1.0
        : 2.0 * (l.pp() - 1) + (l.virtualStages() - 1.0) * l.pp() + 1.0;
    double combined = Math.max(0.0, passes - alone) / passes;
    return m.moeLayerShare() * (combined * pair + (1 - combined) * 4 * a);
  }

  /** One dispatch (or combine) of a micro-batch's routed tokens on one rank. */
  private double exchangeSeconds(TransformerSpec m, Cluster cluster, Layout l,
      PrecisionRecipe recipe, double tokens) {
    MoeSpec moe = m.moe();
    double sp = l.sequenceParallel() ? l.tp() : 1.0;
    double bytes = tokens * moe.routedPerToken() * m.hidden() * recipe.activationBytes() / sp;
    // The expert grid orders its ranks etp-ep-dp-pp (megatron/core/parallel_state.py at
    // d98e8a64): an expert-parallel group's ranks are etp apart.
    int perNode = Math.max(1, Math.min(l.ep(), cluster.devicesPerNode() / l.etp()));
    CollectiveGroup group = new CollectiveGroup(l.ep(), perNode);
    double a2a = l.moeDispatcher() == MoeDispatcher.DEEPEP
        ? interconnect.forwardedExchange(cluster, new ExpertExchange(
            tokens / sp * moe.routedPerToken() / moe.topK(),
            m.hidden() * recipe.activationBytes(), moe.experts(), moe.topK(), group,
            moe.groups(), moe.groupTopK())).seconds()
        : interconnect.time(cluster, Collective.ALL_TO_ALL, bytes, group).seconds();
    return a2a;
  }
}
