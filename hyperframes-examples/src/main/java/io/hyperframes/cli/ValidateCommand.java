package io.hyperframes.cli;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.hyperframes.json.JsonFields;
import io.hyperframes.validate.CaseResult;
import io.hyperframes.validate.ValidationReport;
import io.hyperframes.validate.Validator;
import java.nio.file.Path;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** {@code hyperframes validate}: the planner against a file of measured cases. */
@Command(name = "validate", mixinStandardHelpOptions = true,
    description = "Compare predictions with measured cases (format of published-runs.json).")
final class ValidateCommand implements Callable<Integer> {

  @Spec CommandSpec spec;

  @Option(names = "--cases", required = true, paramLabel = "FILE", description = "Cases JSON.")
  Path cases;

  @Option(names = "--catalog", paramLabel = "FILE",
      description = "Catalog override (for example written by calibrate).")
  Path catalog;

  @Option(names = "--format", defaultValue = "table",
      description = "table (default), json or markdown.")
  Format format;

  @Override
  public Integer call() throws JsonProcessingException {
    Validator v = catalog == null ? Validator.analytical()
        : Validator.on(io.hyperframes.hardware.Catalog.builtIn().withOverrides(catalog));
    ValidationReport r = v.run(Files2.read("--cases", cases));
    var out = spec.commandLine().getOut();
    switch (format) {
      case json -> out.println(JsonFields.mapper().writerWithDefaultPrettyPrinter()
          .writeValueAsString(json(r)));
      case markdown -> out.print(markdown(r));
      case table -> out.print(table(r));
      default -> throw new IllegalArgumentException("--format: " + format + " is not available for validate");
    }
    out.flush();
    return 0;
  }

  static ObjectNode json(ValidationReport r) {
    ObjectNode root = JsonFields.mapper().createObjectNode();
    ArrayNode cases = root.putArray("cases");
    for (CaseResult c : r.cases()) {
      ObjectNode o = cases.addObject();
      o.put("id", c.id());
      o.put("metric", c.metric());
      o.put("expected", c.expected());
      if (c.compared()) {
        o.put("predicted", c.predicted());
        o.put("relativeError", c.relativeError());
      } else {
        o.putNull("predicted");
        o.putNull("relativeError");
      }
      o.put("bound", c.bound());
      if (!c.bound().equals("point")) {
        o.put("boundMet", c.boundMet());
      }
      o.put("note", c.note());
    }
    root.put("meanAbsRelativeError", r.meanAbsRelativeError());
    root.put("maxAbsRelativeError", r.maxAbsRelativeError());
    return root;
  }

  static String table(ValidationReport r) {
    StringBuilder b = new StringBuilder();
    b.append(String.format(Locale.ROOT, "%-46s %-28s %13s %13s %9s  %s%n", "case", "metric",
        "expected", "predicted", "error", "note"));
    for (CaseResult c : r.cases()) {
      b.append(String.format(Locale.ROOT, "%-46s %-28s %13.5g %13s %9s  %s%n", c.id(),
          c.metric(), c.expected(), c.compared() ? String.format(Locale.ROOT, "%.5g",
              c.predicted()) : "-", error(c), note(c)));
    }
    b.append(String.format(Locale.ROOT, "mean |error| %.2f %%, max |error| %.2f %% (point cases)%n",
        100 * r.meanAbsRelativeError(), 100 * r.maxAbsRelativeError()));
    return b.toString();
  }

  static String markdown(ValidationReport r) {
    StringBuilder b = new StringBuilder();
    b.append("| case | metric | expected | predicted | error | note |\n");
    b.append("|---|---|---:|---:|---:|---|\n");
    for (CaseResult c : r.cases()) {
      b.append(String.format(Locale.ROOT, "| %s | %s | %.5g | %s | %s | %s |%n", c.id(),
          c.metric(), c.expected(), c.compared() ? String.format(Locale.ROOT, "%.5g",
              c.predicted()) : "-", error(c), note(c)));
    }
    b.append(String.format(Locale.ROOT,
        "%nMean |error| %.2f %%, max |error| %.2f %% over point cases.%n",
        100 * r.meanAbsRelativeError(), 100 * r.maxAbsRelativeError()));
    return b.toString();
  }

  private static String error(CaseResult c) {
    return c.compared() ? String.format(Locale.ROOT, "%+.2f %%", 100 * c.relativeError()) : "-";
  }

  private static String note(CaseResult c) {
    if (c.bound().equals("point")) {
      return c.note();
    }
    return (c.boundMet() ? "met: " : "NOT met: ") + c.bound() + "; " + c.note();
  }
}
