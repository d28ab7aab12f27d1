package io.hyperframes.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/**
 * The options several commands share (picocli mixins). {@code --format}: a format a command does
 * not write is refused while the command line is read (exit 2, before any measurement or search),
 * naming the option, the value, the command and the formats it writes. {@code --record}: a file
 * in a folder that does not exist is refused the same way, before the measurement. The shared
 * {@code --catalog}/{@code --profile} options reach commands that had only {@code --catalog}.
 */
class SharedOptionsTest {

  static final Path CASES = Path.of("..", "docs", "validation", "training-cases.json");

  @Test
  void formatsACommandDoesNotWriteAreRefusedBeforeItRuns() throws Exception {
    assertRefused(CliTest.run("bench", "kernels", "--format", "html"), "html",
        "hyperframes bench kernels", "(table, json)");
    assertRefused(CliTest.run("bench", "plan", "--request", BenchPlanCliTest.COST.toString(),
        "--format", "markdown"), "markdown", "hyperframes bench plan", "(table, json)");
    assertRefused(CliTest.run("estimate", "--request", BenchPlanCliTest.COST.toString(),
        "--format", "html"), "html", "hyperframes estimate", "(table, json)");
    assertRefused(CliTest.run("doctor", "--format", "markdown"), "markdown",
        "hyperframes doctor", "(table, json)");
    assertRefused(CliTest.run("validate", "--cases", CASES.toString(), "--format", "html"),
        "html", "hyperframes validate", "(table, json, markdown)");
    assertRefused(CliTest.run("compare", "a.json", "b.json", "--format", "markdown"),
        "markdown", "hyperframes compare", "(table, json, html)");
    assertRefused(CliTest.run("schedule", "--trace", "t.csv", "--format", "markdown"),
        "markdown", "hyperframes schedule", "(table, json, html)");
  }

  @Test
  void aRecordThatCouldNotBeWrittenIsRefusedBeforeTheMeasurement() throws Exception {
    for (String bench : new String[] {"kernels", "infer", "train", "transformer", "compression",
        "adapters"}) {
      CliTest.Result r = CliTest.run("bench", bench, "--record",
          Path.of("no-such-folder", "record.json").toString());
      assertEquals(2, r.status(), bench + ": " + r.err());
      assertTrue(r.err().contains("--record: no folder ") && r.err().contains("no-such-folder"),
          r.err());
      assertEquals("", r.out(), "nothing runs before the refusal");
    }
  }

  @Test
  void aValueThatIsNoFormatAtAllIsNamed() throws Exception {
    CliTest.Result r = CliTest.run("probe", "--format", "yaml");
    assertEquals(2, r.status(), r.err());
    assertTrue(r.err().contains("--format") && r.err().contains("yaml"), r.err());
  }

  @Test
  void benchPlanAndValidateTakeAMachineProfileToo() throws Exception {
    CliTest.Result r = CliTest.run("bench", "plan", "--request", BenchPlanCliTest.COST.toString(),
        "--profile", "no-such-profile.json");
    assertEquals(2, r.status(), r.err());
    assertTrue(r.err().contains("no-such-profile.json"), r.err());
    CliTest.Result v = CliTest.run("validate", "--cases", CASES.toString(), "--catalog",
        "no-such-catalog.json");
    assertEquals(2, v.status(), v.err());
    assertTrue(v.err().contains("no-such-catalog.json"), v.err());
  }

  private static void assertRefused(CliTest.Result r, String value, String command,
      String written) {
    assertEquals(2, r.status(), r.err());
    assertTrue(r.err().contains("--format: " + value + " is not available for " + command + " "
        + written), r.err());
    assertEquals("", r.out(), "nothing runs before the refusal");
  }
}
