package io.hyperframes.parallel;

import static com.google.common.base.Preconditions.checkArgument;

/**
 * A layout in which any field may be left open ({@code null}); the estimator chooses open fields by
 * a small search for the shortest feasible step.
 */
public record PartialLayout(Integer tp, Integer pp, Integer dp, Integer virtualStages,
    Integer microBatch, Boolean sequenceParallel, Recompute recompute, Integer zeroStage) {

  /** Nothing fixed. */
  public static final PartialLayout OPEN =
      new PartialLayout(null, null, null, null, null, null, null, null);

  public PartialLayout {
    positiveOrNull("layout.tp", tp);
    positiveOrNull("layout.pp", pp);
    positiveOrNull("layout.dp", dp);
    positiveOrNull("layout.virtualStages", virtualStages);
    positiveOrNull("layout.microBatch", microBatch);
    checkArgument(zeroStage == null || (zeroStage >= 0 && zeroStage <= 3),
        "layout.zeroStage: must be 0-3, got %s", zeroStage);
  }

  /** A partial layout that fixes every field of {@code layout}. */
  public static PartialLayout of(Layout layout) {
    return new PartialLayout(layout.tp(), layout.pp(), layout.dp(), layout.virtualStages(),
        layout.microBatch(), layout.sequenceParallel(), layout.recompute(), layout.zeroStage());
  }

  private static void positiveOrNull(String field, Integer v) {
    checkArgument(v == null || v > 0, "%s: must be > 0, got %s", field, v);
  }
}
