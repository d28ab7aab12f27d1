package io.hyperframes.parallel;

import static com.google.common.base.Preconditions.checkArgument;

import io.hyperframes.hardware.Checks;

/**
 * A fully resolved parallel layout of a training job.
 *
 * @param tp tensor-parallel degree (Shoeybi et al. 2019, arXiv 1909.08053)
 * @param pp pipeline-parallel degree (1F1B schedule; Narayanan et al. 2021, arXiv 2104.04473)
 * @param dp data-parallel degree
 * @param virtualStages model chunks per pipeline rank (interleaved 1F1B; 1 = plain 1F1B)
 * @param microBatch sequences per micro-batch per data-parallel rank
 * @param sequenceParallel sequence parallelism over the tensor-parallel group (Korthikanti 2022)
 * @param recompute activation recomputation policy
 * @param zeroStage ZeRO stage 0-3 (Rajbhandari et al. 2020); 1 is Megatron's distributed optimizer
 */
public record Layout(int tp, int pp, int dp, int virtualStages, int microBatch,
    boolean sequenceParallel, Recompute recompute, int zeroStage) {

  public Layout {
    Checks.positive("layout.tp", tp);
    Checks.positive("layout.pp", pp);
    Checks.positive("layout.dp", dp);
    Checks.positive("layout.virtualStages", virtualStages);
    Checks.positive("layout.microBatch", microBatch);
    checkArgument(recompute != null, "layout.recompute: must be given");
    checkArgument(zeroStage >= 0 && zeroStage <= 3, "layout.zeroStage: must be 0-3, got %s",
        zeroStage);
    checkArgument(virtualStages == 1 || pp > 1,
        "layout.virtualStages: %s needs pipeline parallelism (pp > 1)", virtualStages);
  }

  /** Devices the layout occupies: tp · pp · dp. */
  public long devices() {
    return (long) tp * pp * dp;
  }
}
