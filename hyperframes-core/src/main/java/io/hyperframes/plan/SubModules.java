package io.hyperframes.plan;

import static com.google.common.base.Preconditions.checkArgument;

import io.hyperframes.model.TransformerSpec;
import java.util.Arrays;

/**
 * The sub-modules of one transformer layer in forward order, as an engine that fetches
 * parameters sub-module by sub-module sees them ({@link io.hyperframes.parallel.Engine#fetchesPerSubModule}):
 * the attention's input projections (QKV, or latent attention's down and up projections), its
 * output projection, the MLP's first (up, or gate and up) and second (down) matmuls.
 *
 * <p>{@code parameters[j]} is sub-module j's share of the layer's weights (what its gather moves),
 * {@code compute[j]} its share of the layer's forward time: its matmuls' share of the layer's
 * dense matmul time, by active weights, and the attention's core (scores, softmax, values) and
 * the element-wise work with the first sub-module, whose interval they run in (no sub-module
 * between them holds parameters, so no fetch separates them).
 *
 * @param parameters weight share of each sub-module, summing to 1
 * @param compute forward-time share of each sub-module, summing to 1
 */
record SubModules(double[] parameters, double[] compute) {

  SubModules {
    checkArgument(parameters.length == compute.length && parameters.length > 0,
        "subModules: %s parameter shares against %s compute shares", parameters.length,
        compute.length);
    parameters = parameters.clone();
    compute = compute.clone();
  }

  /**
   * The four sub-modules of a layer of {@code m}, where its dense matmuls take {@code denseShare}
   * of the layer's forward time; MoE layers count every expert's weights for the gather and the
   * active experts' for the compute, averaged over the layers.
   */
  static SubModules of(TransformerSpec m, double denseShare) {
    double h = m.hidden();
    double attnOut = (double) m.valueDim() * h;
    double attnIn = m.attentionParametersPerLayer() - attnOut;
    double mlpInShare = m.gatedMlp() ? 2.0 / 3.0 : 0.5;
    double mlp = m.matmulParametersPerLayer() - m.attentionParametersPerLayer();
    double activeMlp = m.activeMatmulParametersPerLayer() - m.attentionParametersPerLayer();
    double[] weights = {attnIn, attnOut, mlp * mlpInShare, mlp * (1 - mlpInShare)};
    double[] active = {attnIn, attnOut, activeMlp * mlpInShare, activeMlp * (1 - mlpInShare)};
    double weightSum = Arrays.stream(weights).sum();
    double activeSum = Arrays.stream(active).sum();
    double share = Math.max(0.0, Math.min(1.0, denseShare));
    double[] p = new double[4];
    double[] c = new double[4];
    for (int j = 0; j < 4; j++) {
      p[j] = weights[j] / weightSum;
      c[j] = share * active[j] / activeSum + (j == 0 ? 1 - share : 0.0);
    }
    return new SubModules(p, c);
  }

  /** Share of the first sub-module's weights: the step's first gather and last reduce-scatter. */
  double first() {
    return parameters[0];
  }

  /**
   * Exposed data-parallel time of one layer and micro-batch: forward, the recomputed forward
   * (where it gathers again) and backward, sub-module by sub-module. In each sub-module's
   * interval its compute hides the collectives the data-parallel group's NCCL stream runs
   * meanwhile ({@link TrainingEstimator#exposed}): forward and recomputed forward the next
   * sub-module's gather (after the recomputed forward's last, the backward's first); backward,
   * from the last sub-module to the first, the gather of the next sub-module to run backward
   * and the reduce-scatter of the gradients of the one before (their bucket is reduced once the
   * next gradient overflows it).
   *
   * @param gather seconds to gather the whole layer's parameters
   * @param gatherBackward seconds of the backward's gathers (0 when parameters stay gathered)
   * @param reduce seconds to reduce-scatter the whole layer's gradients
   * @param forward the layer's forward compute
   * @param regathers whether the recomputed forward gathers the parameters again
   * @param recompute the recomputed forward's compute where it gathers again
   * @param backward the layer's backward compute (with a recomputation that does not gather)
   */
  double unitExposed(double gather, double gatherBackward, double reduce, double forward,
      boolean regathers, double recompute, double backward, double kappa) {
    int n = parameters.length;
    double exposed = 0.0;
    for (int j = 0; j < n; j++) {
      double next = parameters[(j + 1) % n];
      exposed += TrainingEstimator.exposed(gather * next, forward * compute[j], kappa);
      if (regathers) {
        double nextGather = j + 1 < n ? gather * parameters[j + 1]
            : gatherBackward * parameters[n - 1];
        exposed += TrainingEstimator.exposed(nextGather, recompute * compute[j], kappa);
      }
    }
    for (int i = n - 1; i >= 0; i--) {
      double nextGather = i > 0 ? gatherBackward * parameters[i - 1]
          : regathers ? gather * parameters[0] : gatherBackward * parameters[n - 1];
      double previousReduce = reduce * (i < n - 1 ? parameters[i + 1] : parameters[0]);
      exposed += TrainingEstimator.exposed(nextGather + previousReduce, backward * compute[i],
          kappa);
    }
    return exposed;
  }
}
