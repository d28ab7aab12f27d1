package io.hyperframes.plan;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.hyperframes.HyperFrames;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;
import org.junit.jupiter.api.Test;

/** The Mixtral plan of docs/planning.md is what the planner answers. */
class MoePlanTest {

  @Test
  void theGuidesMixtralPlanIsThePlannersAnswer() throws IOException {
    Plan p = HyperFrames.plan().model("mixtral-8x7b").accelerator("h100-sxm-80gb")
        .devices(16, 64).training(t -> t.precision("bf16-mixed").tokens(1e11)).run();
    TrainingEstimate e = p.best().estimate();
    assertTrue(p.feasible(), p.reasons().toString());
    assertEquals(46.7e9, e.parameters(), 0.01 * 46.7e9);
    assertEquals(12.9e9, e.activeParameters(), 0.03 * 12.9e9);
    String guide = Files.readString(Path.of("..", "docs", "planning.md"),
        StandardCharsets.UTF_8).replaceAll("\\s+", " ");
    String quoted = String.format(Locale.ROOT, "**%d H100, %.1f days** for 100 B tokens,"
        + " Megatron-LM with tp %d", e.devices(), e.trainingDays(), e.layout().tp());
    assertTrue(guide.contains(quoted), "docs/planning.md does not quote: " + quoted);
    assertTrue(guide.contains(String.format(Locale.ROOT, "MFU %.1f %%", 100 * e.mfu())));
  }

  @Test
  void qwen3MoeIsPlannedWithExpertParallelismInsideTheNode() throws IOException {
    Plan p = HyperFrames.plan().model("qwen3-235b-a22b").accelerator("h100-sxm-80gb")
        .devices(64, 512).training(t -> t.precision("bf16-mixed").tokens(1e12)).run();
    TrainingEstimate e = p.best().estimate();
    assertTrue(p.feasible(), p.reasons().toString());
    assertTrue(e.layout().ep() > 1, e.layout().toString());
    assertTrue(e.layout().ep() * e.layout().tp() <= 8, "inside the node: " + e.layout());
    assertTrue(e.time().allToAllSeconds() > 0);
    String guide = Files.readString(Path.of("..", "docs", "planning.md"),
        StandardCharsets.UTF_8).replaceAll("\\s+", " ");
    assertTrue(guide.contains(String.format(Locale.ROOT, "**%d H100**", e.devices())));
    assertTrue(guide.contains(String.format(Locale.ROOT, "**ep %d**", e.layout().ep())));
    assertTrue(guide.contains(String.format(Locale.ROOT, "%.2f s of a %.1f s step",
        e.time().allToAllSeconds(), e.stepSeconds())));
  }
}
