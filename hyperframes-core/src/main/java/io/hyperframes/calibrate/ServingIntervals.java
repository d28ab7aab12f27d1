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
import java.util.TreeMap;

/**
 * The band of a serving throughput estimate ({@code hyperframes validate --serving-intervals},
 * docs/validation.md): measured over predicted time per generated token, that is predicted over
 * measured output tokens per second, of the published serving runs with role {@code check}, per
 * accelerator generation, under the catalog as shipped. A check row whose source is in sample
 * (a shipped constant was fitted on the source, or a recorded modelling decision looked at it:
 * {@link Calibration#inSampleSources}; nothing is refitted here) gives no residual: the report
 * names it and why ({@link Report#inSample}). A
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
      List<LeaveOneSourceOut.RegimeRow> regimes, List<InSample> inSample) {
    public Report {
      residuals = List.copyOf(residuals);
      regimes = List.copyOf(regimes);
      inSample = List.copyOf(inSample);
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
     * {@code factor}), {@code inSample} (per source left out: {@code source}, {@code cases},
     * {@code because}) and {@code regimes} (per row: {@code regime}, {@code cases}, {@code p5},
     * {@code p50}, {@code p95}, {@code covered}, {@code coverage}).
     */
    public ObjectNode toJson() {
      ObjectNode root = Json.mapper().createObjectNode();
      ArrayNode list = root.putArray("residuals");
      for (LeaveOneSourceOut.Residual r : residuals) {
        list.addObject().put("regime", r.regime()).put("source", r.source())
            .put("factor", r.factor());
      }
      ArrayNode left = root.putArray("inSample");
      for (InSample i : inSample) {
        ObjectNode o = left.addObject().put("source", i.source()).put("cases", i.cases());
        i.because().forEach(o.putArray("because")::add);
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
   * A source whose check rows give no residual because it is in sample.
   *
   * @param source the case source (case-id prefix)
   * @param cases its throughput check figures left out
   * @param because the fitted constants and the decisions that make it in sample
   */
  public record InSample(String source, int cases, List<String> because) {
    public InSample {
      because = List.copyOf(because);
    }
  }

  /**
   * The residuals of the throughput cases with role {@code check} in {@code casesJson} under
   * {@code catalog}, leaving out the sources that are in sample under it.
   *
   * @throws IllegalArgumentException when the document is malformed, a case names an
   *     accelerator the catalog lacks, or no case gives a residual (naming the sources in
   *     sample, when there are any)
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
    Map<String, List<String>> tainted = Calibration.inSampleSources(catalog, Set.of(),
        Map.of());
    Map<String, Integer> leftOut = new TreeMap<>();
    List<LeaveOneSourceOut.Residual> residuals = new ArrayList<>();
    for (CaseResult r : Validator.on(catalog).run(casesJson).cases()) {
      String g = generation.get(r.id());
      if (g != null && METRICS.contains(r.metric()) && r.compared()) {
        String source = Calibration.sourceOf(r.id());
        if (tainted.containsKey(source)) {
          leftOut.merge(source, 1, Integer::sum);
        } else {
          residuals.add(new LeaveOneSourceOut.Residual(g + " " + StepInterval.SERVING, source,
              r.predicted() / r.expected()));
        }
      }
    }
    checkArgument(!residuals.isEmpty(), "cases: no case with role check gives a serving"
        + " throughput (%s)%s", String.join(", ", METRICS.stream().sorted().toList()),
        leftOut.isEmpty() ? "" : " from a source that is out of sample (in sample: "
            + String.join(", ", leftOut.keySet()) + ")");
    List<InSample> inSample = new ArrayList<>();
    leftOut.forEach((src, n) -> inSample.add(new InSample(src, n, tainted.get(src))));
    return new Report(residuals, LeaveOneSourceOut.coverage(residuals, f -> true), inSample);
  }
}
