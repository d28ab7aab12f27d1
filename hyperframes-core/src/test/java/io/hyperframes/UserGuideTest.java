package io.hyperframes;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.hyperframes.catalog.Catalog;
import io.hyperframes.inference.InferenceResult;
import io.hyperframes.parallel.Engine;
import io.hyperframes.parallel.Recompute;
import io.hyperframes.plan.Objective;
import io.hyperframes.plan.Plan;
import io.hyperframes.plan.TrainingEstimate;
import io.hyperframes.validate.ValidationReport;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The Java examples of docs/user-guide.md's "From Java" section, run; fails when that section
 * shows a line not run here.
 */
class UserGuideTest {

  @Test
  void examples() {
    Path casesFile = Path.of("..", "docs", "validation", "training-cases.json");
    Plan plan = HyperFrames.plan()                       // hyperframes plan
        .model("llama2-70b")                             // model.catalog (or .model(TransformerSpec))
        .accelerator("h100-sxm-80gb").devices(64, 512)   // cluster.accelerator, cluster.devices "64-512"
        .training(t -> t.precision("bf16-mixed").tokens(2e12))   // workload
        .layout(l -> l.engine(Engine.MEGATRON))           // layout: fields to fix, the rest searched
        .minimize(Objective.COST)                        // objective
        .deadlineDays(60)                                // constraints.deadlineDays
        .run();                                          // also run(listener), run(pool, listener)
    assertTrue(plan.best() != null);

    TrainingEstimate e = HyperFrames.estimate()           // hyperframes estimate
        .model("gpt3-175b").accelerator("a100-sxm-80gb").devices(1024)
        .training(t -> t.precision("bf16-mixed").globalBatchSize(1536))
        .layout(l -> l.tp(8).pp(8).recompute(Recompute.SELECTIVE))
        .run();
    assertTrue(e.stepSeconds() > 0);

    InferenceResult s = HyperFrames.serve()               // estimate with an inference workload
        .model("llama2-7b").accelerator("h100-sxm-80gb").devices(1)
        .precision("fp16").batch(32).prompt(1024).output(256)
        .arrivalRate(10).latencySlo(Duration.ofSeconds(2), 95)
        .run();
    assertTrue(s.p99LatencySeconds() > 0);

    ValidationReport r = HyperFrames.validate()           // hyperframes validate
        .cases(casesFile)                                // a Path to your runs (published-runs.json format)
        .catalog(Catalog.builtIn())                      // or Catalog.builtIn().withOverrides(calibrated)
        .run();
    assertTrue(r.meanAbsRelativeError() > 0);
  }

  @Test
  void everyGuideLineIsRunHere() throws IOException {
    String all = Files.readString(Path.of("..", "docs", "user-guide.md"),
        StandardCharsets.UTF_8);
    // the section on the Java front door (runtime examples live with the nd4j module)
    int from = all.indexOf("## From Java");
    String guide = all.substring(from, all.indexOf("\n## ", from + 1));
    List<String> missing = DocSnippets.notRunBy(guide, "UserGuideTest");
    assertTrue(DocSnippets.javaLines(guide) > 20, "the document has its Java examples");
    assertTrue(missing.isEmpty(), "guide lines not run by this test: " + missing);
  }
}
