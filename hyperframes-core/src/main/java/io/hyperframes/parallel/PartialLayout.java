package io.hyperframes.parallel;

import static com.google.common.base.Preconditions.checkArgument;

/**
 * A layout in which any field may be left open ({@code null}); the estimator chooses open fields by
 * a small search for the shortest feasible step.
 */
public record PartialLayout(Integer tp, Integer pp, Integer dp, Integer virtualStages,
    Integer microBatch, Boolean sequenceParallel, Recompute recompute, Integer zeroStage,
    Engine engine, Integer shardGroupSize, Boolean reshardAfterForward) {

  /** Nothing fixed. */
  public static final PartialLayout OPEN =
      new PartialLayout(null, null, null, null, null, null, null, null);

  /** A partial layout run by Megatron-LM (engine fixed, sharding over all ranks). */
  public PartialLayout(Integer tp, Integer pp, Integer dp, Integer virtualStages,
      Integer microBatch, Boolean sequenceParallel, Recompute recompute, Integer zeroStage) {
    this(tp, pp, dp, virtualStages, microBatch, sequenceParallel, recompute, zeroStage, null,
        null, null);
  }

  /** These fixed fields with another engine. */
  public PartialLayout withEngine(Engine e) {
    return new PartialLayout(tp, pp, dp, virtualStages, microBatch, sequenceParallel, recompute,
        zeroStage, e, shardGroupSize, reshardAfterForward);
  }

  /** These fixed fields with another ZeRO stage. */
  public PartialLayout withZeroStage(Integer stage) {
    return new PartialLayout(tp, pp, dp, virtualStages, microBatch, sequenceParallel, recompute,
        stage, engine, shardGroupSize, reshardAfterForward);
  }

  /** The engine: the given one, or Megatron-LM (the default). */
  public Engine engineOrDefault() {
    return engine == null ? Engine.MEGATRON : engine;
  }

  public PartialLayout {
    positiveOrNull("layout.tp", tp);
    positiveOrNull("layout.pp", pp);
    positiveOrNull("layout.dp", dp);
    positiveOrNull("layout.virtualStages", virtualStages);
    positiveOrNull("layout.microBatch", microBatch);
    checkArgument(zeroStage == null || (zeroStage >= 0 && zeroStage <= 3),
        "layout.zeroStage: must be 0-3, got %s", zeroStage);
    positiveOrNull("layout.shardGroupSize", shardGroupSize);
    checkArgument(shardGroupSize == null || zeroStage == null || zeroStage == 3,
        "layout.shardGroupSize: %s needs zeroStage 3, got %s", shardGroupSize, zeroStage);
    checkArgument(reshardAfterForward == null || zeroStage == null || zeroStage == 3,
        "layout.reshardAfterForward: needs zeroStage 3, got %s", zeroStage);
    checkArgument(virtualStages == null || virtualStages == 1 || engine == null
        || engine.interleavesPipeline(),
        "layout.virtualStages: %s needs an interleaving engine (megatron), not %s",
        virtualStages, engine == null ? "" : engine.id());
  }

  /** A partial layout that fixes every field of {@code layout}. */
  public static PartialLayout of(Layout layout) {
    return new PartialLayout(layout.tp(), layout.pp(), layout.dp(), layout.virtualStages(),
        layout.microBatch(), layout.sequenceParallel(), layout.recompute(), layout.zeroStage(),
        layout.engine(), layout.shardGroupSize() == 0 ? null : layout.shardGroupSize(),
        layout.reshardAfterForward());
  }

  private static void positiveOrNull(String field, Integer v) {
    checkArgument(v == null || v > 0, "%s: must be > 0, got %s", field, v);
  }
}
