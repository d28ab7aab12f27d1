package io.hyperframes.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * docs/validation.md, "Serving at capacity": the report of
 * {@code validate --cases docs/validation/capacity-cases.json} is printed there, and every
 * figure of its table by model (rows, mean |error|, mean error, rows within ±15 %) is what the
 * report gives.
 */
class CapacityCasesCliTest {

  @Test
  void theReportAndItsTableArePrinted() throws Exception {
    String out = CliTest.validatedInDocs("capacity-cases.json");
    Matcher m = Pattern.compile("(?m)^\\| (trtllm(017|10)-(\\S+?)-h[12]00-\\S+) \\|"
        + " capacityOutputTokensPerSecond \\| [0-9.]+ \\| [0-9.]+ \\| ([-+][0-9.]+) % \\|")
        .matcher(out);
    Map<String, List<Double>> groups = new LinkedHashMap<>();
    int rows = 0;
    int within = 0;
    while (m.find()) {
      String key = (m.group(2).equals("017") ? "v0.17" : "v1.0") + " " + m.group(3);
      double e = Double.parseDouble(m.group(4));
      groups.computeIfAbsent(key, k -> new ArrayList<>()).add(e);
      rows++;
      within += Math.abs(e) <= 15 ? 1 : 0;
    }
    assertEquals(246, rows, out);
    assertEquals(164, within);
    assertTrue(out.contains("Mean |error| 13.75 %"), out);
    String doc = Files.readString(Path.of("..", "docs", "validation.md"));
    assertTrue(doc.contains("mean |error| 13.75 % over\nthe 246 rows, 164 of them within ±15 %"));
    Map<String, String> names = Map.of("llama3-70b", "Llama 3.1 70B|Llama 3.3 70B",
        "llama3.1-405b", "Llama 3.1 405B", "llama3.1-8b", "Llama 3.1 8B", "mixtral-8x7b",
        "Mixtral 8x7B", "qwen3-235b-a22b", "Qwen3-235B-A22B");
    assertEquals(8, groups.size(), groups::toString);
    for (Map.Entry<String, List<Double>> g : groups.entrySet()) {
      String[] k = g.getKey().split(" ");
      List<Double> v = g.getValue();
      double abs = v.stream().mapToDouble(Math::abs).average().orElseThrow();
      double mean = v.stream().mapToDouble(Double::doubleValue).average().orElseThrow();
      long in = v.stream().filter(x -> Math.abs(x) <= 15).count();
      String name = names.get(k[1]);
      if (name.contains("|")) {
        name = k[0].equals("v0.17") ? name.split("\\|")[0] : name.split("\\|")[1];
      }
      String row = String.format(Locale.ROOT, "| %s | %s | %d | %.1f %% | %+.1f %% | %d |", k[0],
          name, v.size(), abs, mean, in);
      assertTrue(doc.contains(row), row);
    }
  }
}
