package io.hyperframes.calibrate;

import static com.google.common.base.Preconditions.checkArgument;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.hyperframes.catalog.Catalog;
import io.hyperframes.hardware.Accelerator;
import io.hyperframes.hardware.StepInterval;
import io.hyperframes.json.Json;
import io.hyperframes.validate.CaseResult;
import io.hyperframes.validate.Validator;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * The band of a serving throughput estimate ({@code hyperframes validate --serving-intervals},
 * docs/validation.md): measured over predicted time per generated token, that is predicted over
 * measured output tokens per second, of the published serving runs with role {@code check} (no
 * constant was fitted on them), per accelerator generation, under the catalog as shipped. A
 * generation's band and its coverage follow the rules of the step-time bands
 * ({@link LeaveOneSourceOut.Report#band}): a case's coverage is judged by the band fitted without
 * its own source. The serving plan's front carries the band of its accelerator's generation.
 */
public final class ServingIntervals {

  private ServingIntervals() {}

  /** The throughput figures that give a residual. */
  static final Set<String> METRICS = Set.of("capacityOutputTokensPerSecond",
      "capacityOutputTokensPerSecondPerDevice", "outputTokensPerSecondPerDevice");

  /**
   * The residuals (regime "GENERATION serving"), in case order, and the coverage rows (one per
   * generation and one over all, sorted).
   */
  public record Report(List<LeaveOneSourceOut.Residual> residuals,
      List<LeaveOneSourceOut.RegimeRow> regimes) {
    public Report {
      residuals = List.copyOf(residuals);
      regimes = List.copyOf(regimes);
    }

    /**
     * The serving band of {@code generation} from the residuals of every source but
     * {@code without} (null: every source).
     */
    public LeaveOneSourceOut.Band band(String generation, String without) {
      return LeaveOneSourceOut.band(residuals, generation + " " + StepInterval.SERVING, without);
    }

    /**
     * The serving intervals of every accelerator generation of {@code catalog}, as a catalog file
     * of {@code intervals} with regime {@code serving} (the shipped catalog's serving intervals
     * are this output).
     */
    public ObjectNode intervals(Catalog catalog) {
      return LeaveOneSourceOut.intervals(catalog, residuals, List.of(StepInterval.SERVING),
          "predicted / measured output tokens per second over the %d published check runs",
          "published check run(s)", "published check runs",
          "hyperframes validate --serving-intervals --write-intervals");
    }

    /**
     * The report as JSON: {@code residuals} (per case: {@code regime}, {@code source},
     * {@code factor}) and {@code regimes} (per row: {@code regime}, {@code cases}, {@code p5},
     * {@code p50}, {@code p95}, {@code covered}, {@code coverage}).
     */
    public ObjectNode toJson() {
      ObjectNode root = Json.mapper().createObjectNode();
      ArrayNode list = root.putArray("residuals");
      for (LeaveOneSourceOut.Residual r : residuals) {
        list.addObject().put("regime", r.regime()).put("source", r.source())
            .put("factor", r.factor());
      }
      ArrayNode rows = root.putArray("regimes");
      for (LeaveOneSourceOut.RegimeRow r : regimes) {
        ObjectNode o = rows.addObject().put("regime", r.regime()).put("cases", r.cases());
        Json.putFinite(o, "p5", r.p5());
        Json.putFinite(o, "p50", r.p50());
        Json.putFinite(o, "p95", r.p95());
        o.put("covered", r.covered()).put("coverage", (double) r.covered() / r.cases());
      }
      return root;
    }
  }

  /**
   * The residuals of the throughput cases with role {@code check} in {@code casesJson} under
   * {@code catalog}.
   *
   * @throws IllegalArgumentException when the document is malformed, a case names an
   *     accelerator the catalog lacks, or no case gives a residual
   */
  public static Report run(String casesJson, Catalog catalog) {
    checkArgument(catalog != null, "catalog: must be given");
    Map<String, String> generation = new HashMap<>();
    for (JsonNode c : Json.parseObject("cases", casesJson).path("cases")) {
      if (!"check".equals(c.path("role").asText())) {
        continue;
      }
      String id = c.path("id").asText();
      String acc = c.path("request").path("cluster").path("accelerator").asText("")
          .toLowerCase(Locale.ROOT);
      Accelerator a = catalog.accelerators().get(acc);
      checkArgument(a != null, "cases[%s].request.cluster.accelerator: unknown accelerator"
          + " '%s'", id, acc);
      generation.put(id, a.generation());
    }
    List<LeaveOneSourceOut.Residual> residuals = new ArrayList<>();
    for (CaseResult r : Validator.on(catalog).run(casesJson).cases()) {
      String g = generation.get(r.id());
      if (g != null && METRICS.contains(r.metric()) && r.compared()) {
        residuals.add(new LeaveOneSourceOut.Residual(g + " " + StepInterval.SERVING,
            Calibration.sourceOf(r.id()), r.predicted() / r.expected()));
      }
    }
    checkArgument(!residuals.isEmpty(), "cases: no case with role check gives a serving"
        + " throughput (%s)", String.join(", ", METRICS.stream().sorted().toList()));
    return new Report(residuals, LeaveOneSourceOut.coverage(residuals, f -> true));
  }
}
