package io.hyperframes.inference;

import io.hyperframes.diagnose.Finding;
import io.hyperframes.diagnose.Severity;
import io.hyperframes.hardware.Cluster;
import io.hyperframes.model.TransformerSpec;
import io.hyperframes.precision.NumberFormat;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;

/**
 * The serving search's replicas of pipeline stages over nodes, tried where no replica within a
 * node (nor an expert-parallel group) holds the model, and the finding where none of those
 * holds it either ({@link InferencePlanner}; docs/inference.md, "A dense model no node holds").
 */
final class PipelineReplicas {
  private PipelineReplicas() {}

  /**
   * The most pipeline stages (nodes) of a replica the search tries where no node holds the model
   * (a bound of the search, not fitted).
   */
  static final int MAX_PIPELINE_STAGES = 8;

  /** The id of the finding that no replica the search tries fits the model's memory. */
  static final String NO_REPLICA_FITS = "no-replica-fits";

  /**
   * Replicas of pp pipeline stages over nodes, for a model that no replica within a node holds:
   * tp the largest that divides the heads up to a node, each stage on a node of its own, pp from
   * 2 to {@link #MAX_PIPELINE_STAGES} (at most the layers), with the expert-parallel splits
   * within a stage; those whose replica fits one sequence. Served as vLLM runs pipeline
   * parallelism, one batch in flight a stage ({@link ServingLoads#loadToFit}).
   */
  static List<InferencePlanner.Replica> search(TransformerSpec model, Cluster cluster,
      InferenceWorkload w, List<NumberFormat> weights, List<NumberFormat> kvs,
      InferenceEstimator estimator) {
    List<InferencePlanner.Replica> out = new ArrayList<>();
    List<InferenceWorkload> bases = InferencePlanner.bases(cluster, w, weights, kvs);
    int tp = widestTp(model, cluster);
    for (int pp = 2; pp <= Math.min(MAX_PIPELINE_STAGES, model.layers()); pp++) {
      InferencePlanner.addFeasible(out, model, cluster.withDevices(tp * pp), tp, pp, bases,
          estimator);
    }
    return out;
  }

  /** The largest tp up to a node that divides the heads. */
  private static int widestTp(TransformerSpec model, Cluster cluster) {
    int tp = cluster.devicesPerNode();
    while (tp > 1 && model.heads() % tp != 0) {
      tp--;
    }
    return tp;
  }

  /**
   * Why the search had no replica to try, where memory is the reason: the estimate of the
   * widest replica it tries (tp the largest that divides the heads up to a node, the most
   * expert parallelism within it, {@link #MAX_PIPELINE_STAGES} pipeline stages over nodes, at
   * most the layers) in the weight and KV formats of fewest bytes, at one sequence, is
   * infeasible; its reasons are the evidence. Null where that replica fits (the formats are
   * then the reason, or nothing).
   */
  static Finding noneFits(TransformerSpec model, Cluster cluster,
      InferenceWorkload w, List<NumberFormat> weights, List<NumberFormat> kvs,
      InferenceEstimator estimator) {
    InferenceWorkload smallest = InferencePlanner.bases(cluster, w, weights, kvs).stream()
        .min(Comparator.comparingDouble((InferenceWorkload b) -> b.weights().bytes())
            .thenComparingDouble(b -> b.kvCache().bytes()))
        .orElse(null);
    if (smallest == null) {
      return null;
    }
    int tp = widestTp(model, cluster);
    int pp = Math.min(MAX_PIPELINE_STAGES, model.layers());
    List<Integer> eps = InferencePlanner.expertParallelSizes(model, tp);
    InferenceEstimate widest = estimator.estimate(model, cluster.withDevices(tp * pp), smallest,
        tp, eps.get(eps.size() - 1), pp, 1);
    if (widest.feasible()) {
      return null;
    }
    boolean experts = model.isMoe() && model.moe().routed();
    return new Finding(NO_REPLICA_FITS, Severity.CRITICAL, String.format(Locale.ROOT,
        "no replica of up to %d nodes of %d × %s (tp %d, pp up to %d)%s holds %s in %s weights",
        pp, cluster.devicesPerNode(), cluster.accelerator().id(), tp, pp, experts
            ? ", nor any expert-parallel group of up to " + InferencePlanner.MAX_SPANNING_EP
                + " devices," : "",
        model.name(), smallest.weights().id()), String.join("; ", widest.reasons()),
        "quantise the weights (fp8, or int4 weight-only) or use an accelerator with more"
            + " memory");
  }
}
