package io.hyperframes;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.hyperframes.parallel.Engine;
import io.hyperframes.plan.Objective;
import io.hyperframes.plan.Plan;
import io.hyperframes.plan.TrainingEstimate;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The README's five-minute tour, run: {@link #tour()} holds its code, and
 * {@link #everyReadmeLineIsInTheTour()} fails when the README shows a line this test does not run.
 */
class ReadmeTourTest {

  @Test
  void tour() {
    // One layout: GPT-3 175B on 1024 A100; fields the layout leaves open are searched.
    TrainingEstimate e = HyperFrames.estimate()
        .model("gpt3-175b").accelerator("a100-sxm-80gb").devices(1024)
        .training(t -> t.precision("bf16-mixed").globalBatchSize(1536).tokens(3e11))
        .layout(l -> l.tp(8).pp(8).dp(16))
        .run();
    e.feasible();                    // false + e.reasons() when it does not fit
    e.memory().totalBytes();         // per device, largest pipeline stage, broken down
    e.time().stepSeconds();          // compute, recompute, exposed comm by kind, bubble, optimizer
    e.stepSecondsLow(); e.stepSecondsHigh();  // 90 % interval from out-of-sample residuals
    e.mfu(); e.commShare(); e.trainingDays(); e.gpuHours();
    assertTrue(e.feasible() && e.stepSecondsLow() < e.stepSeconds()
        && e.stepSeconds() < e.stepSecondsHigh(), e.toString());

    // How many cards and how long: search device counts, layouts and batches for an objective.
    Plan plan = HyperFrames.plan()
        .model("llama2-13b").accelerator("h100-sxm-80gb").devices(64, 512)
        .training(t -> t.precision("bf16-mixed").tokens(2e12))
        .minimize(Objective.COST)
        .run();
    plan.best().estimate().layout(); plan.best().cost().totalUsd(); plan.goldenParameters();
    assertTrue(plan.feasible() && !plan.goldenParameters().isEmpty());

    // ZeRO-3 under PyTorch FSDP with hybrid sharding inside each node.
    TrainingEstimate fsdp = HyperFrames.estimate()
        .model("llama2-70b").accelerator("a100-sxm-80gb").devices(128)
        .training(t -> t.precision("bf16-mixed").globalBatchSize(256))
        .layout(l -> l.tp(1).pp(1).zeroStage(3).engine(Engine.FSDP).shardGroupSize(8))
        .run();
    assertTrue(fsdp.layout().shardRanks() == 8 && fsdp.stepSeconds() > 0);

    // Serving: latency under 10 requests/s, time to first token checked at p95.
    var served = HyperFrames.serve()
        .model("llama2-7b").accelerator("h100-sxm-80gb").devices(1)
        .precision("fp16").batch(32).prompt(1024).output(256)
        .arrivalRate(10).latencySlo(java.time.Duration.ofSeconds(2), 95)
        .run();
    served.p99LatencySeconds(); served.devicesNeeded();
    assertTrue(served.p99LatencySeconds() > 0);
  }

  /**
   * The README's headline answer is what {@code plan --request examples/10b-on-2t.json} prints:
   * its devices, days, interval, GPU-hours, cost and engine, from the plan's JSON.
   */
  @Test
  void theReadmeHeadlineIsThePlansAnswer() throws IOException {
    String readme = Files.readString(Path.of("..", "README.md"), StandardCharsets.UTF_8)
        .replaceAll("\\s+", " ");
    io.hyperframes.plan.Plan p = io.hyperframes.plan.Planner.analytical().plan(
        PlanRequests.parse(Files.readString(Path.of("..", "examples", "10b-on-2t.json"),
            StandardCharsets.UTF_8)));
    var json = io.hyperframes.plan.PlanJson.toJson(p);
    String engine = json.get("layout").get("engine").asText();
    assertTrue(engine.equals("megatron"), engine);
    String quoted = String.format(java.util.Locale.ROOT, "answers %d H100 for %.1f days (90 %%"
        + " interval %.1f–%.1f), %s GPU-hours, USD %s, on Megatron-LM", json.get("devices")
            .asLong(), json.get("trainingDays").asDouble(), json.get("trainingDaysLow")
            .asDouble(), json.get("trainingDaysHigh").asDouble(),
        grouped(Math.round(json.get("cost").get("gpuHours").asDouble())),
        grouped(Math.round(json.get("cost").get("totalUsd").asDouble() / 100) * 100));
    assertTrue(readme.contains(quoted), "README does not quote the plan: " + quoted);
    assertTrue(json.get("search").get("engineChoice").asText().startsWith("megatron (best of"));
  }

  /** Thousands separated by a space, as the README writes them (71 884). */
  private static String grouped(long n) {
    return String.format(java.util.Locale.ROOT, "%,d", n).replace(',', ' ');
  }

  @Test
  void everyReadmeLineIsInTheTour() throws IOException {
    String readme = Files.readString(Path.of("..", "README.md"), StandardCharsets.UTF_8);
    List<String> missing = DocSnippets.notRunBy(readme, "ReadmeTourTest");
    assertTrue(DocSnippets.javaLines(readme) > 20, "the document has its Java examples");
    assertTrue(missing.isEmpty(), "README lines not run by this test: " + missing);
  }
}
