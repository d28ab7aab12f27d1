package io.hyperframes;

import io.hyperframes.request.EstimateRequest;
import io.hyperframes.request.Requests;
import io.hyperframes.catalog.Catalog;
import io.hyperframes.plan.TrainingEstimate;
import java.util.function.UnaryOperator;

/**
 * An estimate of one training layout ({@link HyperFrames#estimate()}); open layout fields are
 * chosen by a small search.
 *
 * <pre>{@code
 * TrainingEstimate e = HyperFrames.estimate()
 *     .model("gpt3-175b").accelerator("a100-sxm-80gb").devices(1024)
 *     .training(t -> t.precision("bf16-mixed").globalBatchSize(1536).tokens(3e11))
 *     .layout(l -> l.tp(8).pp(8).dp(16))
 *     .run();
 * }</pre>
 */
public final class EstimateBuilder extends JobBuilder<EstimateBuilder> {

  EstimateBuilder(Tree tree, Catalog catalog, Models models) {
    super(tree, catalog, models);
  }

  @Override
  EstimateBuilder copy(Tree t, Catalog c, Models m) {
    return new EstimateBuilder(t, c, m);
  }

  /** {@code workload}: the training job. */
  public EstimateBuilder training(UnaryOperator<TrainingSpec> fields) {
    return withTraining(fields);
  }

  /**
   * Runs the estimate.
   *
   * @throws IllegalArgumentException naming the field and the value when the request is wrong
   */
  public TrainingEstimate run() {
    return modelsOrDefault().trainingEstimator().estimate(request());
  }

  /** The request this builder describes, checked. */
  EstimateRequest request() {
    return Requests.fromJson(tree.json(), catalogOrDefault());
  }
}
