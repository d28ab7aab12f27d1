package io.hyperframes;

import io.hyperframes.parallel.Engine;
import io.hyperframes.parallel.Recompute;

/**
 * The fixed part of a parallel layout ({@code "layout"} in JSON); fields left out are chosen by
 * the search. Immutable, each field set at most once, checked when the job runs.
 *
 * <pre>{@code
 * l -> l.tp(8).pp(8).recompute(Recompute.SELECTIVE).engine(Engine.MEGATRON)
 * }</pre>
 */
public final class LayoutSpec {

  final Tree tree;

  private LayoutSpec(Tree tree) {
    this.tree = tree;
  }

  static LayoutSpec empty() {
    return new LayoutSpec(Tree.empty());
  }

  /** {@code tp}: tensor-parallel degree. */
  public LayoutSpec tp(int degree) {
    return new LayoutSpec(tree.with("tp", degree));
  }

  /** {@code pp}: pipeline-parallel degree. */
  public LayoutSpec pp(int degree) {
    return new LayoutSpec(tree.with("pp", degree));
  }

  /** {@code dp}: data-parallel degree. */
  public LayoutSpec dp(int degree) {
    return new LayoutSpec(tree.with("dp", degree));
  }

  /** {@code virtualStages}: model chunks per pipeline rank (interleaved 1F1B). */
  public LayoutSpec virtualStages(int chunks) {
    return new LayoutSpec(tree.with("virtualStages", chunks));
  }

  /** {@code microBatch}: sequences per micro-batch per data-parallel rank. */
  public LayoutSpec microBatch(int sequences) {
    return new LayoutSpec(tree.with("microBatch", sequences));
  }

  /** {@code sequenceParallel}. */
  public LayoutSpec sequenceParallel(boolean on) {
    return new LayoutSpec(tree.with("sequenceParallel", on));
  }

  /** {@code recompute}: activation recomputation policy. */
  public LayoutSpec recompute(Recompute policy) {
    return new LayoutSpec(tree.with("recompute", policy == null ? null : policy.id()));
  }

  /**
   * {@code recomputeModules}: under selective recomputation, the sub-modules whose forward the
   * backward reruns, by Megatron-Core's names ({@code core_attn}, {@code layernorm}, {@code mlp},
   * {@code moe_act}, {@code moe}, {@code shared_experts}, {@code mla_up_proj}); naming them fixes
   * {@code recompute} to selective.
   */
  public LayoutSpec recomputeModules(String... modules) {
    com.fasterxml.jackson.databind.node.ArrayNode array =
        io.hyperframes.json.Json.mapper().createArrayNode();
    for (String m : modules) {
      array.add(m);
    }
    return new LayoutSpec(tree.with("recomputeModules", array));
  }

  /** {@code zeroStage}: 0-3. */
  public LayoutSpec zeroStage(int stage) {
    return new LayoutSpec(tree.with("zeroStage", stage));
  }

  /** {@code cp}: context-parallel degree (each sequence split over cp ranks; Megatron-LM). */
  public LayoutSpec cp(int degree) {
    return new LayoutSpec(tree.with("cp", degree));
  }

  /** {@code cpCommType}: p2p (default), all_gather, a2a or a2a+p2p. */
  public LayoutSpec cpCommType(String type) {
    return new LayoutSpec(tree.with("cpCommType", type));
  }

  /**
   * {@code moeDispatcher}: how routed tokens reach the expert-parallel ranks, {@code alltoall}
   * (Megatron-Core's all-to-all dispatcher, the default) or {@code deepep} (the flex dispatcher
   * with DeepEP's kernels: once per destination node across nodes, forwarded over NVLink).
   */
  public LayoutSpec moeDispatcher(String dispatcher) {
    return new LayoutSpec(tree.with("moeDispatcher", dispatcher));
  }

  /**
   * {@code overlapMoeComm}: run one micro-batch's expert-parallel dispatch and combine beside
   * another's computation (Megatron-Core's {@code --overlap-moe-expert-parallel-comm}).
   */
  public LayoutSpec overlapMoeComm(boolean overlap) {
    return new LayoutSpec(tree.with("overlapMoeComm", overlap));
  }

  /**
   * {@code overlapGradReduce}: whether the step's data-parallel gradient reduction (ZeRO 0 and 1,
   * hybrid sharding's all-reduce across replicas) runs behind the backward pass (Megatron-LM's
   * {@code --overlap-grad-reduce}); default: where the engine runs it (Megatron-LM as launched,
   * FSDP, DeepSpeed without a pipeline). {@code false} costs the reduction after the last
   * backward pass, as Megatron-LM runs with the option off or before it existed
   * (NVIDIA/Megatron-LM 2d5220a4, 2023-08-16); {@code true} where the engine cannot is refused.
   */
  public LayoutSpec overlapGradReduce(boolean overlap) {
    return new LayoutSpec(tree.with("overlapGradReduce", overlap));
  }

  /**
   * {@code overlapParamGather}: under ZeRO-1 and ZeRO-2, whether the updated parameters are
   * gathered behind the next forward pass (Megatron-LM's {@code --overlap-param-gather});
   * default: where the engine does (Megatron-LM as launched, FSDP; not DeepSpeed). Megatron-LM
   * gathers after the optimizer step with the option off or before it existed (f048bf8c,
   * 2023-11-17).
   */
  public LayoutSpec overlapParamGather(boolean overlap) {
    return new LayoutSpec(tree.with("overlapParamGather", overlap));
  }

  /**
   * {@code firstStageLayers} and {@code lastStageLayers}: decoder layers on the first and last
   * pipeline ranks (Megatron-LM's {@code --decoder-first-pipeline-num-layers} and
   * {@code --decoder-last-pipeline-num-layers}); the other ranks share the rest evenly.
   */
  public LayoutSpec stageLayers(int first, int last) {
    return new LayoutSpec(tree.with("firstStageLayers", first).with("lastStageLayers", last));
  }

  /** {@code ep}: expert-parallel degree of a mixture of experts (divides dp). */
  public LayoutSpec ep(int degree) {
    return new LayoutSpec(tree.with("ep", degree));
  }

  /**
   * {@code twoBatchOverlap} of a serving layout whose experts span replicas (ep &gt; tp): each
   * step runs its batch as two halves, one's expert exchange behind the other's computation
   * (docs/inference.md, "Experts over several replicas"); refused with ep &le; tp.
   */
  public LayoutSpec twoBatchOverlap(boolean overlap) {
    return new LayoutSpec(tree.with("twoBatchOverlap", overlap));
  }

  /**
   * {@code redundantExperts} of a serving layout with expert parallelism (ep &gt; 1): copies of
   * busy routed experts held beside them, so that each of the ep ranks holds an equal share of
   * E + R expert slots (vLLM's {@code --num-redundant-experts}, SGLang's
   * {@code --ep-num-redundant-experts}; docs/inference.md, "Experts over several replicas");
   * refused with ep 1 and in a training layout.
   */
  public LayoutSpec redundantExperts(int copies) {
    return new LayoutSpec(tree.with("redundantExperts", copies));
  }

  /**
   * {@code etp}: expert tensor-parallel degree of a mixture of experts (Megatron-Core's
   * {@code --expert-tensor-parallel-size}; tp when not given); ep·etp divides tp·cp·dp.
   */
  public LayoutSpec etp(int degree) {
    return new LayoutSpec(tree.with("etp", degree));
  }

  /** {@code engine}: Megatron-LM, DeepSpeed, FSDP or MaxText. */
  public LayoutSpec engine(Engine engine) {
    return new LayoutSpec(tree.with("engine", engine == null ? null : engine.id()));
  }

  /** {@code shardGroupSize}: hybrid sharding (ZeRO-3 within groups of this many ranks). */
  public LayoutSpec shardGroupSize(int ranks) {
    return new LayoutSpec(tree.with("shardGroupSize", ranks));
  }

  /** {@code reshardAfterForward}: free gathered parameters after forward (ZeRO-3). */
  public LayoutSpec reshardAfterForward(boolean reshard) {
    return new LayoutSpec(tree.with("reshardAfterForward", reshard));
  }
}
