package io.hyperframes.bench;

import io.hyperframes.catalog.Catalog;
import io.hyperframes.hardware.Cluster;
import io.hyperframes.model.TransformerSpec;
import io.hyperframes.parallel.Layout;
import io.hyperframes.parallel.Recompute;
import io.hyperframes.plan.TrainingEstimate;
import io.hyperframes.plan.TrainingEstimator;
import io.hyperframes.precision.Optimizer;
import io.hyperframes.precision.PrecisionRecipe;
import io.hyperframes.workload.TrainingWorkload;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Time of one training-layout evaluation: GPT-3 175B on 1024 A100 (tp 8, pp 8, dp 16, interleaved,
 * selective recomputation with sequence parallelism), the inner loop of the planner's search; and
 * of a mixture of experts (Mixtral 8x7B on 64 H100).
 *
 * <p>Run: {@code mvn -B -q package -DskipTests && java -jar hyperframes-bench/target/benchmarks.jar
 * EstimatorBenchmark -f 1 -wi 3 -i 5}
 */
@State(Scope.Benchmark)
@BenchmarkMode({Mode.SampleTime})
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class EstimatorBenchmark {

  private TrainingEstimator estimator;
  private TransformerSpec model;
  private Cluster cluster;
  private TrainingWorkload workload;
  private Layout layout;
  private TransformerSpec moe;
  private Cluster moeCluster;
  private TrainingWorkload moeWorkload;
  private Layout moeLayout;

  @Setup
  public void setUp() {
    Catalog catalog = Catalog.builtIn();
    estimator = TrainingEstimator.analytical();
    model = catalog.model("model", "gpt3-175b");
    cluster = cluster(catalog, "a100-sxm-80gb", 1024);
    workload = bf16(1536, 300e9);
    layout = new Layout(8, 8, 16, 3, 1, true, Recompute.SELECTIVE, 1);
    // A mixture of experts: Mixtral 8x7B on 64 H100 (tp 4, dp 16, SP, ZeRO-3: the plan of
    // docs/planning.md, feasible, so no reason is formatted), its 8 experts
    // timed as a grouped GEMM per layer.
    moe = catalog.model("model", "mixtral-8x7b");
    moeCluster = cluster(catalog, "h100-sxm-80gb", 64);
    moeWorkload = bf16(128, 1e11);
    moeLayout = new Layout(4, 1, 16, 1, 1, true, Recompute.NONE, 3);
  }

  /** {@code devices} of a catalog accelerator in 8-device nodes of its default template. */
  private static Cluster cluster(Catalog catalog, String accelerator, int devices) {
    var acc = catalog.accelerator("accelerator", accelerator);
    return new Cluster(acc, devices, 8, acc.intraNode(),
        catalog.node("node", acc.defaultNode()).interNode());
  }

  /** BF16 mixed-precision Adam training of {@code batch} sequences over {@code tokens}. */
  private static TrainingWorkload bf16(int batch, double tokens) {
    return new TrainingWorkload(PrecisionRecipe.named("precision", "bf16-mixed"),
        Optimizer.ADAM, batch, tokens);
  }

  /** One layout evaluation (memory, step time, derived figures). */
  @Benchmark
  public double evaluateLayout() {
    TrainingEstimate e = estimator.evaluate(model, cluster, workload, layout);
    return e.stepSeconds() + e.memory().totalBytes() + e.mfu();
  }

  /** One layout evaluation of a mixture of experts. */
  @Benchmark
  public double evaluateMoeLayout() {
    TrainingEstimate e = estimator.evaluate(moe, moeCluster, moeWorkload, moeLayout);
    return e.stepSeconds() + e.memory().totalBytes() + e.mfu();
  }
}
