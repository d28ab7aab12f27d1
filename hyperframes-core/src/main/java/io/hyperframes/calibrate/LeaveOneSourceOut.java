package io.hyperframes.calibrate;

import static com.google.common.base.Preconditions.checkArgument;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.hyperframes.catalog.Catalog;
import io.hyperframes.hardware.StepInterval;
import io.hyperframes.json.Json;
import io.hyperframes.plan.TrainingEstimate;
import io.hyperframes.plan.TrainingEstimator;
import io.hyperframes.request.EstimateRequest;
import io.hyperframes.request.Requests;
import io.hyperframes.stat.Quantile;
import io.hyperframes.validate.CaseResult;
import io.hyperframes.validate.Validator;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * Leave-one-source-out validation ({@code hyperframes validate --leave-one-source-out},
 * docs/validation.md): the refittable constants are fitted without each source in turn and that
 * source is predicted, beside its in-sample error under the shipped catalog. Each source is
 * labelled held out, or in sample with the reasons (a shipped constant this run does not refit
 * was fitted on it, or a modelling decision looked at it: {@link Calibration#inSampleSources}).
 * The training step-time residuals give, per accelerator generation and regime, the band an
 * estimate's interval is, and how often the band fitted without a case's source covers it.
 */
public final class LeaveOneSourceOut {

  private LeaveOneSourceOut() {}

  /**
   * One source: its cases' |error| in sample and left out (fractions), and why it is in sample
   * (empty when it is held out).
   */
  public record SourceRow(String source, int cases, double inSampleMean, double inSampleMax,
      double leftOutMean, double leftOutMax, List<String> inSampleBecause) {
    public SourceRow {
      inSampleBecause = List.copyOf(inSampleBecause);
    }

    /** Whether no shipped constant and no modelling decision was fitted on the source. */
    public boolean heldOut() {
      return inSampleBecause.isEmpty();
    }
  }

  /**
   * One training step-time residual: measured over predicted step time (a throughput figure
   * inverted) with the case fitted without its source, and the case's regime
   * ("generation regime", {@link StepInterval#regime}).
   */
  public record Residual(String regime, String source, double factor) {}

  /**
   * A row of the coverage table: a regime (or "* all", "* held-out sources"), its residuals'
   * 5th, 50th and 95th percentiles, and how many of them the band fitted without the case's own
   * source covers.
   */
  public record RegimeRow(String regime, int cases, double p5, double p50, double p95,
      int covered) {}

  /** What a regime's band rests on. */
  public enum Evidence { OWN, THIN, NONE }

  /** A step-time band, the cases of its own regime it rests on, and on what evidence. */
  public record Band(double low, double high, int cases, Evidence evidence) {}

  /**
   * The outcome: one row per source (sorted by source), the residuals in case order, the
   * coverage rows (sorted by regime), the sources in sample with their reasons, and the mean
   * |error| left out over every source and over the held-out ones (fractions; NaN when no
   * source is held out).
   */
  public record Report(List<SourceRow> sources, List<Residual> residuals,
      List<RegimeRow> regimes, Map<String, List<String>> inSample, double leftOutMean,
      double heldOutMean) {
    public Report {
      sources = List.copyOf(sources);
      residuals = List.copyOf(residuals);
      regimes = List.copyOf(regimes);
      inSample = Map.copyOf(inSample);
    }

    /** Figures left out, over every source. */
    public int cases() {
      return sources.stream().mapToInt(SourceRow::cases).sum();
    }

    /** The sources held out, sorted. */
    public List<String> heldOutSources() {
      return sources.stream().filter(SourceRow::heldOut).map(SourceRow::source).toList();
    }

    /** Figures of the held-out sources. */
    public int heldOutCases() {
      return sources.stream().filter(SourceRow::heldOut).mapToInt(SourceRow::cases).sum();
    }

    /**
     * Mean |error| of the held-out sources' figures under the shipped catalog (fraction; NaN
     * when no source is held out): no shipped constant and no modelling decision was fitted on
     * them, so this is the error a user of the shipped catalog meets out of sample. The
     * leave-one-source-out figure {@link #heldOutMean} is of the catalog refitted without each
     * source, from the shipped kernel entries or (priors-free) from {@link
     * Catalog#withoutKernels}.
     */
    public double heldOutShippedMean() {
      double sum = 0;
      int n = 0;
      for (SourceRow r : sources) {
        if (r.heldOut()) {
          sum += r.inSampleMean() * r.cases();
          n += r.cases();
        }
      }
      return n == 0 ? Double.NaN : sum / n;
    }

    /**
     * The report as JSON ({@code validate --leave-one-source-out --format json}): {@code sources}
     * (per source: {@code source}, {@code cases}, {@code inSampleMeanAbsError},
     * {@code inSampleMaxAbsError}, {@code leftOutMeanAbsError}, {@code leftOutMaxAbsError},
     * {@code heldOut}, {@code inSampleBecause}), {@code cases}, {@code leftOutMeanAbsError},
     * {@code heldOutSources}, {@code heldOutCases}, {@code heldOutMeanAbsError},
     * {@code heldOutShippedMeanAbsError} (the held-out figures under the shipped catalog) and
     * {@code regimes} (per row: {@code regime}, {@code cases}, {@code p5}, {@code p50},
     * {@code p95}, {@code covered}, {@code coverage}). Errors are fractions; a figure that does
     * not exist (no held-out source, no in-sample case) is {@code null}.
     */
    public ObjectNode toJson() {
      ObjectNode root = Json.mapper().createObjectNode();
      ArrayNode list = root.putArray("sources");
      for (SourceRow r : sources) {
        ObjectNode o = list.addObject().put("source", r.source()).put("cases", r.cases());
        Json.putFinite(o, "inSampleMeanAbsError", r.inSampleMean());
        Json.putFinite(o, "inSampleMaxAbsError", r.inSampleMax());
        Json.putFinite(o, "leftOutMeanAbsError", r.leftOutMean());
        Json.putFinite(o, "leftOutMaxAbsError", r.leftOutMax());
        o.put("heldOut", r.heldOut());
        r.inSampleBecause().forEach(o.putArray("inSampleBecause")::add);
      }
      root.put("cases", cases());
      Json.putFinite(root, "leftOutMeanAbsError", leftOutMean);
      heldOutSources().forEach(root.putArray("heldOutSources")::add);
      root.put("heldOutCases", heldOutCases());
      Json.putFinite(root, "heldOutMeanAbsError", heldOutMean);
      Json.putFinite(root, "heldOutShippedMeanAbsError", heldOutShippedMean());
      ArrayNode rows = root.putArray("regimes");
      for (RegimeRow r : regimes) {
        ObjectNode o = rows.addObject().put("regime", r.regime()).put("cases", r.cases());
        Json.putFinite(o, "p5", r.p5());
        Json.putFinite(o, "p50", r.p50());
        Json.putFinite(o, "p95", r.p95());
        o.put("covered", r.covered());
        Json.putFinite(o, "coverage", (double) r.covered() / r.cases());
      }
      return root;
    }

    /**
     * The band of {@code regime} from the residuals of every source but {@code without} (null:
     * every source): the regime's own 5th-95th percentiles when at least five cases from at
     * least four sources remain (fewer sources hide the between-source spread a new source
     * shows); with fewer, the pooled 5th-95th percentiles widened to the regime's own extremes
     * (thin evidence); with none, the pooled minimum and maximum (no evidence: the widest band
     * seen, not a narrow borrowed one). The coverage rows and the intervals written are both
     * this band. Always contains 1.
     */
    public Band band(String regime, String without) {
      return LeaveOneSourceOut.band(residuals, regime, without);
    }

    /**
     * The step-time intervals of every accelerator generation of {@code catalog} and every
     * regime, from all sources' residuals, as a catalog file ({@code --write-intervals}; the
     * shipped catalog's intervals are this output).
     */
    public ObjectNode intervals(Catalog catalog) {
      return intervals(catalog, "hyperframes validate --leave-one-source-out --write-intervals");
    }

    /**
     * The step-time intervals as {@link #intervals(Catalog)}, each entry's source naming
     * {@code command} as the one that wrote it.
     */
    public ObjectNode intervals(Catalog catalog, String command) {
      return LeaveOneSourceOut.intervals(catalog, residuals, StepInterval.REGIMES,
          "measured / predicted step time over the %d leave-one-source-out cases",
          "leave-one-source-out case(s)", "leave-one-source-out cases", command);
    }
  }

  /**
   * The intervals of every generation of {@code catalog} and every one of {@code regimes} from
   * {@code residuals}, as a catalog file; each entry's source says what the band rests on in
   * the words given ({@code what} formats the case count) and the command that writes it.
   */
  static ObjectNode intervals(Catalog catalog, List<Residual> residuals, List<String> regimes,
      String what, String thinCases, String pooledCases, String command) {
    checkArgument(catalog != null, "catalog: must be given");
    Set<String> generations = new TreeSet<>();
    catalog.accelerators().values().forEach(a -> generations.add(a.generation()));
    long from = residuals.stream().map(Residual::source).distinct().count();
    ObjectNode root = Json.mapper().createObjectNode();
    // A catalog file's version is a string (CatalogFile): the catalog the bands were made on,
    // so that the file loads as a --catalog override.
    root.put("version", catalog.version());
    ArrayNode list = root.putArray("intervals");
    for (String g : generations) {
      for (String r : regimes) {
        Band b = band(residuals, g + " " + r, null);
        ObjectNode e = list.addObject();
        e.put("generation", g);
        e.put("regime", r);
        e.put("low", Math.round(b.low() * 1000) / 1000.0);
        e.put("high", Math.round(b.high() * 1000) / 1000.0);
        e.put("cases", b.cases());
        e.put("source", switch (b.evidence()) {
          case OWN -> String.format(Locale.ROOT, "5th and 95th percentile of " + what
              + " of %s %s", b.cases(), g, r);
          case THIN -> String.format(Locale.ROOT, "thin evidence: %d " + thinCases
              + " of %s %s, fewer than 5 from 4 sources; the pooled 5th-95th"
              + " percentile band of %d cases from %d sources widened to include them",
              b.cases(), g, r, residuals.size(), from);
          case NONE -> String.format(Locale.ROOT, "no evidence: no published run of %s %s;"
              + " the whole range of the %d pooled " + pooledCases + " from %d sources",
              g, r, residuals.size(), from);
        } + " (" + command + "; docs/validation.md)");
      }
    }
    return root;
  }

  /**
   * Runs leave-one-source-out over a cases document.
   *
   * @param casesJson the cases (format of published-runs.json)
   * @param shipped the catalog whose constants are in question (the built-in one, or it with a
   *     user's overrides); the fit starts from its kernel entries with the refitted constants
   *     reset, the kernel priors kept, as {@code validate --leave-one-source-out} does
   * @param refit the constants refitted without each source
   * @param scopes the engine-scoped constants refitted ({@link Calibration#fit})
   * @throws IllegalArgumentException when the document is malformed, naming the field
   */
  public static Report run(String casesJson, Catalog shipped, Set<Calibration.Constant> refit,
      Map<String, Set<Calibration.Constant>> scopes) {
    return run(casesJson, shipped, refit, scopes, true);
  }

  /**
   * Runs leave-one-source-out as {@link #run(String, Catalog, Set, Map)}, the refit starting, when
   * {@code keepPriors} is true, from the shipped kernel entries with only the refitted constants
   * reset to the accelerators' own values: the kernel priors (fused-attention and matmul priors
   * taken from kernel measurements) stay, so the left-out figures are of the shipped model
   * ({@code validate --leave-one-source-out}, the default since 2026-12-08; docs/validation.md),
   * and when false from the accelerators' own constants without the kernel entries
   * ({@link Catalog#withoutKernels}; {@code --no-keep-priors}).
   *
   * @throws IllegalArgumentException when the document is malformed, naming the field
   */
  public static Report run(String casesJson, Catalog shipped, Set<Calibration.Constant> refit,
      Map<String, Set<Calibration.Constant>> scopes, boolean keepPriors) {
    checkArgument(shipped != null, "catalog: must be given");
    checkArgument(refit != null, "refit: must be given");
    Catalog start = keepPriors ? PriorStart.of(shipped, refit) : shipped.withoutKernels();
    return of(casesJson, shipped, Calibration.fit(casesJson, start, refit, scopes), refit,
        scopes);
  }

  /**
   * The report of a fit already made: {@code result}'s leave-one-source-out predictions against
   * {@code shipped}'s in-sample ones ({@code calibrate --intervals}, whose refit starts from the
   * catalog it calibrates).
   *
   * @param casesJson the cases {@code result} was fitted on
   * @param shipped the catalog the in-sample errors and the regimes are of
   * @param result the fit ({@link Calibration#fit})
   * @param refit the constants it fitted, for the held-out labels
   * @param scopes the engine-scoped constants it fitted
   * @throws IllegalArgumentException when the document is malformed, naming the field
   */
  public static Report of(String casesJson, Catalog shipped, Calibration.Result result,
      Set<Calibration.Constant> refit, Map<String, Set<Calibration.Constant>> scopes) {
    checkArgument(shipped != null, "catalog: must be given");
    checkArgument(result != null, "result: must be given");
    Map<String, CaseResult> inSample = new HashMap<>();
    Validator.on(shipped).run(casesJson).cases().stream().filter(CaseResult::point)
        .forEach(c -> inSample.putIfAbsent(c.id() + " " + c.metric(), c));
    Map<String, String> regimes = new HashMap<>();
    for (var c : Json.parseObject("cases", casesJson).get("cases")) {
      var req = c.path("request");
      if (!"training".equals(req.path("workload").path("type").asText())) {
        continue; // intervals are for training step times
      }
      // The regime of the case's estimate under the shipped catalog: its layout, or
      // communication-bound when exposed communication is half its step or more.
      EstimateRequest r = Requests.fromJson(req, shipped);
      TrainingEstimate e = TrainingEstimator.analytical().estimate(r);
      regimes.put(c.path("id").asText(), r.cluster().accelerator().generation() + " "
          + StepInterval.regime(e.layout().tp(), e.layout().pp(), e.layout().ep(),
              e.layout().zeroStage(), e.commShare()));
    }
    Map<String, List<double[]>> bySource = new TreeMap<>();
    List<Residual> residuals = new ArrayList<>();
    for (CaseResult l : result.leaveOneOut().cases()) {
      CaseResult in = inSample.get(l.id() + " " + l.metric());
      String source = Calibration.sourceOf(l.id());
      bySource.computeIfAbsent(source, k -> new ArrayList<>()).add(new double[] {
          in == null ? Double.NaN : Math.abs(in.relativeError()), Math.abs(l.relativeError())});
      String regime = regimes.get(l.id());
      if (regime != null) {
        boolean time = l.metric().endsWith("Seconds");
        residuals.add(new Residual(regime, source,
            time ? l.expected() / l.predicted() : l.predicted() / l.expected()));
      }
    }
    Map<String, List<String>> tainted = Calibration.inSampleSources(shipped, refit, scopes);
    List<SourceRow> sources = new ArrayList<>();
    double sum = 0;
    int n = 0;
    double heldSum = 0;
    int heldN = 0;
    for (var e : bySource.entrySet()) {
      var rows = e.getValue();
      sum += rows.stream().mapToDouble(x -> x[1]).sum();
      n += rows.size();
      if (!tainted.containsKey(e.getKey())) {
        heldSum += rows.stream().mapToDouble(x -> x[1]).sum();
        heldN += rows.size();
      }
      sources.add(new SourceRow(e.getKey(), rows.size(),
          rows.stream().mapToDouble(x -> x[0]).average().orElse(Double.NaN),
          rows.stream().mapToDouble(x -> x[0]).max().orElse(Double.NaN),
          rows.stream().mapToDouble(x -> x[1]).average().orElse(Double.NaN),
          rows.stream().mapToDouble(x -> x[1]).max().orElse(Double.NaN),
          tainted.getOrDefault(e.getKey(), List.of())));
    }
    List<RegimeRow> rows = coverage(residuals, f -> !tainted.containsKey(f.source()));
    return new Report(sources, residuals, rows, tainted, sum / Math.max(1, n),
        heldN == 0 ? Double.NaN : heldSum / heldN);
  }

  /**
   * The coverage rows of {@code residuals}: one per regime, one over all ("* all") and one over
   * those {@code heldOut} keeps ("* held-out sources", absent when it keeps them all), sorted by
   * regime; a case counts as covered when the band fitted without its source contains it.
   */
  static List<RegimeRow> coverage(List<Residual> residuals,
      java.util.function.Predicate<Residual> heldOut) {
    boolean all = residuals.stream().allMatch(heldOut);
    Map<String, List<Residual>> byRegime = new TreeMap<>();
    for (Residual f : residuals) {
      byRegime.computeIfAbsent(f.regime(), k -> new ArrayList<>()).add(f);
      byRegime.computeIfAbsent("* all", k -> new ArrayList<>()).add(f);
      if (!all && heldOut.test(f)) {
        byRegime.computeIfAbsent("* held-out sources", k -> new ArrayList<>()).add(f);
      }
    }
    List<RegimeRow> rows = new ArrayList<>();
    for (var e : byRegime.entrySet()) {
      double[] v = e.getValue().stream().mapToDouble(Residual::factor).sorted().toArray();
      int covered = 0;
      for (Residual f : e.getValue()) {
        Band b = band(residuals, f.regime(), f.source());
        covered += f.factor() >= b.low() && f.factor() <= b.high() ? 1 : 0;
      }
      rows.add(new RegimeRow(e.getKey(), v.length, percentile(v, 5), percentile(v, 50),
          percentile(v, 95), covered));
    }
    return rows;
  }

  static Band band(List<Residual> residuals, String regime, String without) {
    double[] own = residuals.stream()
        .filter(f -> f.regime().equals(regime) && !f.source().equals(without))
        .mapToDouble(Residual::factor).sorted().toArray();
    long sources = residuals.stream()
        .filter(f -> f.regime().equals(regime) && !f.source().equals(without))
        .map(Residual::source).distinct().count();
    double[] pooled = residuals.stream().filter(f -> !f.source().equals(without))
        .mapToDouble(Residual::factor).sorted().toArray();
    double low;
    double high;
    Evidence evidence;
    if (own.length >= 5 && sources >= 4) {
      low = percentile(own, 5);
      high = percentile(own, 95);
      evidence = Evidence.OWN;
    } else if (own.length > 0) {
      low = Math.min(percentile(pooled, 5), own[0]);
      high = Math.max(percentile(pooled, 95), own[own.length - 1]);
      evidence = Evidence.THIN;
    } else {
      low = pooled[0];
      high = pooled[pooled.length - 1];
      evidence = Evidence.NONE;
    }
    return new Band(Math.min(1.0, low), Math.max(1.0, high), own.length, evidence);
  }

  /**
   * The percentile of sorted values, p in [0, 100], by Commons Math's default estimator (the
   * definition the shipped bands were written with).
   */
  private static double percentile(double[] sorted, double p) {
    return Quantile.ofSorted(sorted, p / 100, Quantile.Definition.WEIBULL);
  }
}
