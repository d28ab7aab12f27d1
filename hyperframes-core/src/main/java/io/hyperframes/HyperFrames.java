package io.hyperframes;

import io.hyperframes.request.EstimateRequest;
import io.hyperframes.request.Requests;
import io.hyperframes.plan.TrainingEstimate;
import io.hyperframes.plan.TrainingEstimator;

/**
 * The front door: one builder per job, in the vocabulary of the JSON requests.
 *
 * <pre>{@code
 * // How many cards, how long, how much: search layouts and device counts.
 * Plan plan = HyperFrames.plan()
 *     .model("llama2-70b")
 *     .accelerator("h100-sxm-80gb").devices(64, 512)
 *     .training(t -> t.precision("bf16-mixed").tokens(2e12))
 *     .minimize(Objective.COST)
 *     .run();
 *
 * // One layout, open fields searched.
 * TrainingEstimate e = HyperFrames.estimate()
 *     .model("gpt3-175b").accelerator("a100-sxm-80gb").devices(1024)
 *     .training(t -> t.precision("bf16-mixed").globalBatchSize(1536))
 *     .layout(l -> l.tp(8).pp(8))
 *     .run();
 *
 * // Serving under load, an SLO at p95.
 * InferenceResult s = HyperFrames.serve()
 *     .model("llama2-7b").accelerator("h100-sxm-80gb").devices(1)
 *     .precision("fp16").batch(32).prompt(1024).output(256)
 *     .arrivalRate(10).latencySlo(Duration.ofSeconds(2), 95)
 *     .run();
 *
 * // The models against your own measurements.
 * ValidationReport r = HyperFrames.validate().cases(Path.of("my-runs.json")).run();
 * }</pre>
 *
 * <p>Every builder is immutable, sets each field once, and checks everything when the job runs,
 * with the messages of the JSON form (field path and value, {@link IllegalArgumentException});
 * {@code toJson()} writes the request as the JSON the command line reads. {@code .models(...)}
 * swaps any of the four models for every figure the job computes ({@link Models}).
 */
public final class HyperFrames {
  private HyperFrames() {}

  private static final TrainingEstimator ESTIMATOR = TrainingEstimator.analytical();

  /** A plan: layouts, device counts and batches searched for an objective. */
  public static PlanBuilder plan() {
    return new PlanBuilder(Tree.empty(), null, null);
  }

  /** An estimate of one training layout. */
  public static EstimateBuilder estimate() {
    return new EstimateBuilder(Tree.empty(), null, null);
  }

  /** A serving estimate: latency, memory, devices for an SLO. */
  public static ServeBuilder serve() {
    return ServeBuilder.empty();
  }

  /**
   * A replay of a GPU cluster trace: allocation under a placement policy
   * ({@code HyperFrames.schedule().trace(pods).cluster(nodes).policy("fgd").inflate(1.3).run()}),
   * jobs in time under a queue policy ({@code .trace(philly).cluster(100, 8).queue(QueuePolicy
   * .easyBackfill()).replay()}), with inference services beside them ({@code .serving(service,
   * azureTrace).colocate()}), or goodput rounds ({@code .trace(workload).applications(index)
   * .goodput()}); see {@link io.hyperframes.schedule.Schedule.Builder} and docs/scheduling.md.
   */
  public static io.hyperframes.schedule.Schedule.Builder schedule() {
    return io.hyperframes.schedule.Schedule.builder();
  }

  /** A validation of the models against measured cases. */
  public static ValidateBuilder validate() {
    return new ValidateBuilder(null, null, null);
  }

  /**
   * Estimates one training layout with the analytical models; open layout fields are chosen by a
   * small search (see {@link TrainingEstimator#estimate}).
   *
   * @throws IllegalArgumentException naming the field and value when the request is inconsistent
   */
  public static TrainingEstimate estimate(EstimateRequest request) {
    return ESTIMATOR.estimate(request);
  }

  /** Parses a JSON request (see {@link Requests}) and estimates it. */
  public static TrainingEstimate estimate(String requestJson) {
    return estimate(Requests.parse(requestJson));
  }

  /** Library version from the jar manifest, or "dev" when run from classes. */
  public static String version() {
    String v = HyperFrames.class.getPackage().getImplementationVersion();
    return v == null ? "dev" : v;
  }
}
