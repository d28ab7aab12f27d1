package io.hyperframes.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * docs/validation.md, "MLPerf Offline runs, held out": both reports are printed there by the
 * commands it quotes, and its summary table (by model, release and node) is what the reports give.
 */
class CapacityMlperfCliTest {

  /** Each report is run once; the three summaries the text states are asserted on them. */
  @Test
  void bothReportsAndTheirSummary() throws Exception {
    List<Double> llama2 = summarise("capacity-checks-mlperf-llama2.json", "10.03",
        "Llama 2 70B");
    assertEquals(26, llama2.size(), llama2.toString());
    assertEquals(23, llama2.stream().filter(e -> Math.abs(e) <= 15).count(), llama2.toString());

    List<Double> mixtral = summarise("capacity-checks-mlperf-mixtral.json", "26.18",
        "Mixtral 8x7B");
    assertEquals(14, mixtral.size(), mixtral.toString());
    // Every run too fast, none within ±15 %, as the text says.
    assertTrue(mixtral.stream().allMatch(e -> e > 15), mixtral.toString());

    List<Double> all = new ArrayList<>(llama2);
    all.addAll(mixtral);
    assertEquals(15.68, all.stream().mapToDouble(Math::abs).average().orElseThrow(), 0.0051,
        all.toString());
  }

  /**
   * Runs {@code validate} on the file (its report printed in the docs, with the mean the text
   * states), groups its rows by release, accelerator and node size as the summary table does,
   * asserts that the table prints each group's line, and returns every row's error.
   */
  private static List<Double> summarise(String file, String mean, String model)
      throws Exception {
    String report = CliTest.validatedInDocs(file);
    assertTrue(report.contains("Mean |error| " + mean + " %"), report);
    Map<String, Double> byId = CliTest.errorsById(report, "capacityOutputTokensPerSecond");
    Map<String, List<Double>> groups = new LinkedHashMap<>();
    byId.forEach((id, e) -> {
      // Ids read mlperfNN-<submitter>-<system>…: NN the release, the system its GPUs.
      String release = "v" + id.charAt(6) + "." + id.charAt(7);
      String node = (id.contains("x4-") ? "4" : "8") + " × " + (id.contains("h200") ? "H200"
          : "H100");
      groups.computeIfAbsent(release + " | " + node, k -> new ArrayList<>()).add(e);
    });
    String docs = Files.readString(Path.of("..", "docs", "validation.md"),
        StandardCharsets.UTF_8);
    groups.forEach((key, errors) -> {
      String line = String.format(Locale.ROOT, "| %s | %s | %d | %.2f %% | %+.2f %% | %d |",
          model, key, errors.size(),
          errors.stream().mapToDouble(Math::abs).average().orElseThrow(),
          errors.stream().mapToDouble(Double::doubleValue).average().orElseThrow(),
          errors.stream().filter(e -> Math.abs(e) <= 15).count());
      assertTrue(docs.contains(line), "docs/validation.md does not print: " + line);
    });
    return new ArrayList<>(byId.values());
  }
}
