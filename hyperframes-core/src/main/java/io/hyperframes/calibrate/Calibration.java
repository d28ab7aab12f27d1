package io.hyperframes.calibrate;

import static com.google.common.base.Preconditions.checkArgument;

import com.fasterxml.jackson.databind.JsonNode;
import com.google.common.collect.ImmutableList;
import com.google.common.collect.ImmutableMap;
import io.hyperframes.request.EstimateRequest;
import io.hyperframes.request.Requests;
import io.hyperframes.hardware.Accelerator;
import io.hyperframes.catalog.Catalog;
import io.hyperframes.hardware.Cluster;
import io.hyperframes.hardware.KernelEfficiency;
import io.hyperframes.inference.InferenceRequest;
import io.hyperframes.inference.Serving;
import io.hyperframes.catalog.CatalogFile;
import io.hyperframes.request.Documents;
import io.hyperframes.json.Json;
import io.hyperframes.parallel.Engine;
import io.hyperframes.precision.NumberFormat;
import io.hyperframes.validate.CaseResult;
import io.hyperframes.workload.Attention;
import io.hyperframes.validate.ValidationReport;
import io.hyperframes.validate.Validator;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.function.BiFunction;
import org.apache.commons.math3.fitting.leastsquares.LeastSquaresBuilder;
import org.apache.commons.math3.fitting.leastsquares.LeastSquaresOptimizer;
import org.apache.commons.math3.fitting.leastsquares.LevenbergMarquardtOptimizer;
import org.apache.commons.math3.fitting.leastsquares.MultivariateJacobianFunction;
import org.apache.commons.math3.linear.Array2DRowRealMatrix;
import org.apache.commons.math3.linear.ArrayRealVector;
import org.apache.commons.math3.linear.RealVector;
import org.apache.commons.math3.util.Pair;

/**
 * Fits the catalog's efficiency constants to measured runs: the kernel efficiencies of each
 * accelerator generation and compute format that the training cases use, and the efficiency of
 * each fabric that the collective cases measure.
 *
 * <p>The fit minimises the squared log-ratios of predicted to measured figures (step time, or
 * tokens per second, or bus bandwidth: one figure per case) with Levenberg–Marquardt
 * (Apache Commons Math, {@link LevenbergMarquardtOptimizer}); every constant is bounded by a
 * logistic transform to a physical range. Cases without a fixed layout (searches) and memory
 * figures do not take part. A case's group for leave-one-out is its source ({@link #sourceOf}):
 * every group is predicted by a fit on the other groups.
 */
public final class Calibration {

  /** A constant that can be fitted. */
  public enum Constant {
    /** Large-matrix matmul fraction of peak, per generation and format; bounds [0.2, 1]. */
    MATMUL_EFFICIENCY("matmulEfficiency", 0.2, 1.0),
    /** Fused-attention fraction of peak, per generation and format; bounds [0.1, 1]. */
    ATTENTION_EFFICIENCY("attentionEfficiency", 0.1, 1.0),
    /** Weight dimension of half matmul efficiency, per generation and format; bounds [0, 2000]. */
    MATMUL_HALF_DIM("matmulHalfDim", 0.0, 2000.0),
    /** Fixed seconds per layer and micro-batch; bounds [0, 3 ms]. */
    LAYER_OVERHEAD("layerOverheadUs", 0.0, 3000.0),
    /** Compute throughput lost beside a collective, per generation and format; [0, 1]. */
    OVERLAP_COST("overlapCost", 0.0, 1.0),
    /** Serving: fixed seconds per layer and forward pass; bounds [0, 1 ms]. */
    SERVING_OVERHEAD("servingLayerOverheadUs", 0.0, 1000.0),
    /** Serving: fixed seconds per request before its first token; bounds [0, 100 ms]. */
    SERVING_REQUEST("servingRequestOverheadUs", 0.0, 100000.0),
    /** Serving: fixed seconds per layer of the first-token pass; bounds [0, 1 ms]. */
    SERVING_FIRST_TOKEN_LAYER("servingFirstTokenLayerOverheadUs", 0.0, 1000.0),
    /** Serving: fraction of sustained bandwidth of decode KV-cache reads; bounds [0.1, 1]. */
    KV_BANDWIDTH("kvBandwidthFraction", 0.1, 1.0),
    /**
     * Serving: fraction of sustained bandwidth at which a per-head decode-attention kernel
     * streams the KV cache; bounds [0.1, 1].
     */
    KV_PER_HEAD_BANDWIDTH("kvPerHeadBandwidthFraction", 0.1, 1.0),
    /**
     * Serving: share of a per-head kernel's repeated reads of a shared KV head that reach device
     * memory; bounds [0, 1].
     */
    KV_PER_HEAD_REREAD("kvPerHeadRereadFraction", 0.0, 1.0),
    /**
     * Training: fraction of the sustained memory bandwidth at which a layer's element-wise
     * kernels stream, per generation and format; bounds [0.1, 1].
     */
    ELEMENTWISE_BANDWIDTH("elementwiseBandwidthFraction", 0.1, 1.0),
    /** Sustained fraction of a fabric's bandwidth; bounds [0.2, 1]. */
    FABRIC_EFFICIENCY("efficiency", 0.2, 1.0),
    /**
     * Sustained fraction of an accelerator's memory bandwidth, per accelerator (the streaming
     * side of every roofline: weights and KV cache read in a decode step, element-wise passes);
     * bounds [0.3, 1].
     */
    MEMORY_EFFICIENCY("memoryEfficiency", 0.3, 1.0);

    private final String field;
    private final double low;
    private final double high;

    Constant(String field, double low, double high) {
      this.field = field;
      this.low = low;
      this.high = high;
    }

    /** The catalog field the constant is written to. */
    public String field() {
      return field;
    }
  }

  /**
   * One fitted constant.
   *
   * @param target "generation/format" (or "generation@engine/format" for a scope) for kernel
   *     constants, the fabric id for fabric efficiency, the accelerator id for memory efficiency
   * @param constant which constant
   * @param before value in the catalog the fit started from
   * @param after fitted value
   */
  public record Fitted(String target, Constant constant, double before, double after) {}

  /**
   * The outcome of a fit.
   *
   * @param catalog the calibrated catalog (the input catalog with the fitted constants)
   * @param fitted every fitted constant, before and after
   * @param before the cases against the input catalog
   * @param after the cases against the calibrated catalog (in-sample)
   * @param leaveOneOut each case group predicted by a fit on the other groups (out-of-sample)
   * @param cases ids of the cases that took part
   * @param date the day of the fit
   */
  public record Result(Catalog catalog, List<Fitted> fitted, ValidationReport before,
      ValidationReport after, ValidationReport leaveOneOut, List<String> cases, LocalDate date) {
    public Result {
      fitted = ImmutableList.copyOf(fitted);
      cases = ImmutableList.copyOf(cases);
    }

    /**
     * The calibrated constants as a catalog override file ({@code --catalog}): a {@code kernels}
     * entry per generation and format, the fitted fabrics and the accelerators whose memory
     * efficiency was fitted, each with its provenance.
     */
    public String toCatalogJson() {
      String provenance = String.format(Locale.ROOT,
          "calibrate %s on %d cases (%s); mean |error| %.2f %% before, %.2f %% after,"
              + " %.2f %% leave-one-source-out", date, cases.size(), String.join(", ", cases),
          100 * before.meanAbsRelativeError(), 100 * after.meanAbsRelativeError(),
          100 * leaveOneOut.meanAbsRelativeError());
      Set<String> kernelTargets = new LinkedHashSet<>();
      Set<String> fabricTargets = new LinkedHashSet<>();
      Set<String> acceleratorTargets = new LinkedHashSet<>();
      for (Fitted f : fitted) {
        (f.constant() == Constant.FABRIC_EFFICIENCY ? fabricTargets
            : f.constant() == Constant.MEMORY_EFFICIENCY ? acceleratorTargets : kernelTargets)
            .add(f.target());
      }
      // Provenance: every field fitted here was fitted on the sources of these cases.
      List<String> sources = cases.stream().map(Calibration::sourceOf).distinct().sorted()
          .toList();
      java.util.function.Function<String, Map<String, List<String>>> fittedOn = t -> {
        Map<String, List<String>> m = new java.util.TreeMap<>();
        fitted.stream().filter(f -> f.target().equals(t))
            .forEach(f -> m.put(f.constant().field(), sources));
        return m;
      };
      List<CatalogFile.KernelEntry> kernels = new ArrayList<>();
      // Entries written whole, serving constants as resolved (no servingFrom): a file alone.
      for (String t : kernelTargets) {
        String[] gf = t.split("/", 2);
        NumberFormat format = NumberFormat.fromId("kernels.formats", gf[1]);
        KernelEfficiency k = catalog.kernels().get(gf[0]).get(format);
        String[] scope = gf[0].split("@", 2);
        kernels.add(new CatalogFile.KernelEntry(scope[0], scope.length > 1 ? scope[1] : null,
            family(format).stream().map(NumberFormat::id).toList(), k.matmul(), k.halfDim(),
            k.halfRows(), k.attention(), k.layerOverheadSeconds() * 1e6, k.overlapCost(),
            k.servingLayerOverheadSeconds() * 1e6, k.kvBandwidthFraction(),
            k.servingRequestSeconds() * 1e6, k.optimizerBandwidthFraction(),
            k.kvPerHeadBandwidthFraction(), k.kvPerHeadRereadFraction(),
            k.servingFirstTokenLayerSeconds() * 1e6, k.elementwiseBandwidthFraction(), provenance,
            fittedOn.apply(t), null));
      }
      List<CatalogFile.FabricEntry> fabrics = new ArrayList<>();
      for (String t : fabricTargets) {
        var f = catalog.fabrics().get(t);
        fabrics.add(new CatalogFile.FabricEntry(f.id(), f.bandwidthBytesPerSecond() / 1e9,
            f.latencySeconds() * 1e6, f.launchSeconds() * 1e6, f.efficiency(),
            f.halfEfficiencyBytes() / 1e6, f.inNetworkReductionBytesPerSecond() / 1e9,
            f.source() + "; efficiency by " + provenance, fittedOn.apply(t)));
      }
      List<CatalogFile.AcceleratorEntry> accelerators = new ArrayList<>();
      for (String t : acceleratorTargets) {
        Accelerator a = catalog.accelerators().get(t);
        Map<String, Double> peaks = new LinkedHashMap<>();
        a.peakFlopsPerSecond().forEach((f, v) -> peaks.put(f.id(), v / 1e12));
        accelerators.add(new CatalogFile.AcceleratorEntry(a.id(), a.name(), peaks,
            a.memoryBytes() / (1L << 30), a.memoryBandwidthBytesPerSecond() / 1e9,
            a.l2Bytes() / 1e6, a.matmulEfficiency(), a.matmulHalfDim(), a.matmulHalfRows(),
            a.memoryEfficiency(), a.powerWatts(), a.intraNode().id(), a.defaultNode(),
            a.fusedAttention(), a.generation(),
            a.source() + "; memoryEfficiency by " + provenance, fittedOn.apply(t)));
      }
      CatalogFile file = new CatalogFile(catalog.version() + "+calibrated-" + date, null,
          fabrics, accelerators.isEmpty() ? null : accelerators, null, null, null, kernels,
          null);
      try {
        return Json.mapper().writerWithDefaultPrettyPrinter().writeValueAsString(file);
      } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
        throw new IllegalStateException(e);
      }
    }
  }

  /** One fitted degree of freedom: a target, a constant, and how to set it in a catalog. */
  private record Knob(String target, Constant constant, double start,
      BiFunction<Catalog, Double, Catalog> apply) {

    double value(double u) {
      return constant.low + (constant.high - constant.low) / (1 + Math.exp(-u));
    }

    double unbounded(double v) {
      double x = (Math.min(Math.max(v, constant.low + 1e-6), constant.high - 1e-6) - constant.low)
          / (constant.high - constant.low);
      return Math.log(x / (1 - x));
    }
  }

  private static final Set<String> FIT_METRICS =
      Set.of("stepSeconds", "tokensPerSecondPerDevice", "busBandwidthBytesPerSecond");
  /** Serving figures: each one a case gives is fitted (they measure different phases). */
  private static final Set<String> INFERENCE_METRICS =
      Set.of("ttftSeconds", "decodeSecondsPerToken", "outputTokensPerSecondPerDevice");

  private Calibration() {}

  /**
   * Fits the given constants on the cases of a document in the validation format.
   *
   * @param casesJson {@code {"cases": [...]}} as in {@code published-runs.json}
   * @param catalog the catalog to start from (its constants are the fit's starting point)
   * @param constants which constants to fit; kernel constants are fitted for every generation and
   *     format of the training cases, {@link Constant#ATTENTION_EFFICIENCY} only where those cases
   *     use fused attention, fabric efficiency for every fabric of the collective cases
   * @throws IllegalArgumentException when the document is malformed or has no case to fit
   */
  public static Result fit(String casesJson, Catalog catalog, Set<Constant> constants) {
    return fit(casesJson, catalog, constants, Map.of());
  }

  /**
   * Fits as {@link #fit(String, Catalog, Set)}, with some engines' kernels fitted apart: the
   * training cases that an engine runs on a generation named in {@code scopes}
   * ({@code "hopper@fsdp"}, {@link Catalog#scopedKey}) fit that scope's own constants (the
   * ones the map gives it), starting from the generation's, and take no part in the
   * generation's fit; the calibrated catalog carries them as a {@code kernels} entry with
   * {@code engine} ({@link Catalog#forEngine}).
   *
   * @throws IllegalArgumentException when a scope is malformed or names an unknown engine
   */
  public static Result fit(String casesJson, Catalog catalog, Set<Constant> constants,
      Map<String, Set<Constant>> scopes) {
    checkArgument(scopes != null, "scopes: must be given (empty for none)");
    Map<String, Set<Constant>> scoped = new LinkedHashMap<>();
    scopes.forEach((key, set) -> {
      String[] ge = key == null ? new String[0] : key.toLowerCase(Locale.ROOT).split("@", 2);
      checkArgument(ge.length == 2 && !ge[0].isBlank(),
          "scope: expected generation@engine (e.g. hopper@fsdp), got '%s'", key);
      checkArgument(set != null && !set.isEmpty(), "scope %s: at least one constant", key);
      scoped.put(Catalog.scopedKey(ge[0], Engine.fromId("scope " + key, ge[1])),
          EnumSet.copyOf(set));
    });
    checkArgument(casesJson != null, "cases: must be given");
    checkArgument(catalog != null, "catalog: must be given");
    checkArgument(constants != null && !constants.isEmpty(),
        "constants: at least one constant must be fitted");
    Documents.Cases all = Json.bind(Json.parseObject("cases", casesJson), Documents.Cases.class,
        "");
    checkArgument(all.cases() != null, "cases: must be an array of cases");
    List<Documents.Case> usable = new ArrayList<>();
    for (int i = 0; i < all.cases().size(); i++) {
      Documents.Case c = all.cases().get(i);
      checkArgument(c.id() != null, "cases[%s].id: missing required field (calibration groups"
          + " cases by the source their id names)", i);
      if (fittable(c)) {
        usable.add(c);
      }
    }
    checkArgument(!usable.isEmpty(), "cases: no case with a fixed layout and a step time,"
        + " throughput or bus bandwidth to fit");
    JsonNode doc = document(usable);
    ValidationReport before = fitted(Validator.on(catalog).run(doc), usable);
    FitOutcome full = fitOn(usable, catalog, EnumSet.copyOf(constants), scoped);
    ValidationReport after = fitted(Validator.on(full.catalog).run(doc), usable);

    Map<String, List<Documents.Case>> groups = new LinkedHashMap<>();
    for (Documents.Case c : usable) {
      groups.computeIfAbsent(sourceOf(c.id()), k -> new ArrayList<>()).add(c);
    }
    List<CaseResult> loo = new ArrayList<>();
    for (Map.Entry<String, List<Documents.Case>> g : groups.entrySet()) {
      List<Documents.Case> rest = new ArrayList<>(usable);
      rest.removeAll(g.getValue());
      Catalog trained = rest.isEmpty() ? catalog
          : fitOn(rest, catalog, EnumSet.copyOf(constants), scoped).catalog;
      loo.addAll(fitted(Validator.on(trained).run(document(g.getValue())), g.getValue())
          .cases());
    }
    List<String> ids = usable.stream().map(Documents.Case::id).toList();
    return new Result(full.catalog, full.fitted, before, after, new ValidationReport(loo), ids,
        LocalDate.now(java.time.ZoneOffset.UTC));
  }

  /**
   * The figures a document's cases are fitted on, as "id metric": the first of
   * {@link #FIT_METRICS} a training or collective case gives, every one of
   * {@link #INFERENCE_METRICS} a serving case gives.
   */
  private static List<String> keys(List<Documents.Case> cases) {
    List<String> out = new ArrayList<>();
    for (Documents.Case c : cases) {
      boolean inference = c.workloadType().equals("inference");
      for (Map.Entry<String, JsonNode> e : c.expected().entrySet()) {
        String m = e.getKey();
        if (!e.getValue().isNumber()) {
          continue;
        }
        if (inference && INFERENCE_METRICS.contains(m)) {
          out.add(c.id() + " " + m);
        } else if (!inference && FIT_METRICS.contains(m)) {
          out.add(c.id() + " " + m);
          break;
        }
      }
    }
    return out;
  }

  /** The rows of the fitted figures ({@link #keys}). */
  private static ValidationReport fitted(ValidationReport r, List<Documents.Case> cases) {
    Set<String> wanted = new LinkedHashSet<>(keys(cases));
    List<CaseResult> out = new ArrayList<>();
    for (CaseResult c : r.cases()) {
      if (c.point() && wanted.remove(c.id() + " " + c.metric())) {
        out.add(c);
      }
    }
    return new ValidationReport(out);
  }

  private record FitOutcome(Catalog catalog, List<Fitted> fitted) {}

  private static FitOutcome fitOn(List<Documents.Case> cases, Catalog catalog,
      Set<Constant> constants, Map<String, Set<Constant>> scoped) {
    List<Knob> knobs = knobs(cases, catalog, constants, scoped);
    if (knobs.isEmpty()) {
      return new FitOutcome(catalog, List.of());
    }
    JsonNode doc = document(cases);
    List<String> keys = keys(cases);
    int n = keys.size();
    double[] start = new double[knobs.size()];
    for (int i = 0; i < start.length; i++) {
      start[i] = knobs.get(i).unbounded(knobs.get(i).start());
    }
    MultivariateJacobianFunction model = point -> {
      double[] u = point.toArray();
      double[] r0 = residuals(doc, apply(catalog, knobs, u), keys);
      double[][] jac = new double[n][u.length];
      for (int j = 0; j < u.length; j++) {
        double[] v = u.clone();
        double step = 1e-3 * Math.max(1.0, Math.abs(u[j]));
        v[j] += step;
        double[] r1 = residuals(doc, apply(catalog, knobs, v), keys);
        for (int i = 0; i < n; i++) {
          jac[i][j] = (r1[i] - r0[i]) / step;
        }
      }
      return new Pair<RealVector, org.apache.commons.math3.linear.RealMatrix>(
          new ArrayRealVector(r0, false), new Array2DRowRealMatrix(jac, false));
    };
    LeastSquaresOptimizer.Optimum optimum = new LevenbergMarquardtOptimizer().optimize(
        new LeastSquaresBuilder().model(model).target(new double[n])
            .start(start).maxEvaluations(400).maxIterations(200).build());
    double[] u = optimum.getPoint().toArray();
    List<Fitted> fitted = new ArrayList<>();
    for (int i = 0; i < knobs.size(); i++) {
      Knob k = knobs.get(i);
      fitted.add(new Fitted(k.target(), k.constant(), k.start(), k.value(u[i])));
    }
    return new FitOutcome(apply(catalog, knobs, u), fitted);
  }

  private static Catalog apply(Catalog catalog, List<Knob> knobs, double[] u) {
    Catalog c = catalog;
    for (int i = 0; i < knobs.size(); i++) {
      c = knobs.get(i).apply().apply(c, knobs.get(i).value(u[i]));
    }
    return c;
  }

  /** log(predicted / measured) of each fitted figure; 3 where nothing is predicted. */
  private static double[] residuals(JsonNode doc, Catalog catalog, List<String> keys) {
    ValidationReport r = Validator.on(catalog).run(doc);
    Map<String, Double> byKey = new LinkedHashMap<>();
    for (CaseResult c : r.cases()) {
      if (c.point()) {
        double ratio = c.predicted() / c.expected();
        byKey.putIfAbsent(c.id() + " " + c.metric(),
            ratio > 0 && Double.isFinite(ratio) ? Math.log(ratio) : 3.0);
      }
    }
    double[] out = new double[keys.size()];
    for (int i = 0; i < out.length; i++) {
      out[i] = byKey.getOrDefault(keys.get(i), 3.0);
    }
    return out;
  }

  /**
   * The source group of a case id: the part before its first '-' ("mcore2024-h100-1.7b" →
   * "mcore2024"); the project's case files name every case after its publication this way.
   */
  /**
   * The case sources a leave-one-source-out run cannot hold out, each with why: a catalog field
   * fitted on the source ({@code Catalog#fittedOn}) that the run does not refit, or a modelling
   * decision made by comparing the source's cases ({@code Catalog#decisions}). A field is
   * refitted when its constant is in {@code refit} (for every entry: a scoped kernel entry takes
   * its generation's refitted constants) or, for a kernel entry scoped to an engine, in that
   * scope's constants.
   *
   * @param scopes refitted constants per scope ("hopper@fsdp"), as {@link #fit}'s
   * @return source → reasons ({@code accelerators[a100-sxm-80gb].matmulEfficiency},
   *     {@code decision 2026-12-01: …}), sorted by source
   */
  public static Map<String, List<String>> inSampleSources(Catalog catalog, Set<Constant> refit,
      Map<String, Set<Constant>> scopes) {
    checkArgument(catalog != null && refit != null && scopes != null,
        "catalog, refit and scopes: must be given");
    Set<String> refitFields = new java.util.HashSet<>();
    refit.forEach(c -> refitFields.add(c.field()));
    Map<String, List<String>> out = new java.util.TreeMap<>();
    catalog.fittedOn().forEach((entry, fields) -> fields.forEach((field, sources) -> {
      boolean refitted = refitFields.contains(field);
      int at = entry.indexOf('@');
      if (!refitted && entry.startsWith("kernels[") && at > 0) {
        String scope = entry.substring("kernels[".length(), entry.indexOf('/'));
        refitted = scopes.getOrDefault(scope, Set.of()).stream()
            .anyMatch(c -> c.field().equals(field));
      }
      if (!refitted) {
        sources.forEach(src -> out.computeIfAbsent(src, k -> new ArrayList<>())
            .add(entry + "." + field));
      }
    }));
    for (Catalog.Decision d : catalog.decisions()) {
      d.lookedAt().forEach(src -> out.computeIfAbsent(src, k -> new ArrayList<>())
          .add("decision " + d.date() + ": " + d.decision()));
    }
    out.replaceAll((k, v) -> List.copyOf(v));
    return Collections.unmodifiableMap(out);
  }

  public static String sourceOf(String caseId) {
    int dash = caseId.indexOf('-');
    return dash > 0 ? caseId.substring(0, dash) : caseId;
  }

  private static boolean fittable(Documents.Case c) {
    if (c.expected() == null) {
      return false;
    }
    String type = c.workloadType();
    boolean figure = false;
    for (String m : type.equals("inference") ? INFERENCE_METRICS : FIT_METRICS) {
      figure |= c.expected().containsKey(m) && c.expected().get(m).isNumber();
    }
    if (!figure) {
      return false;
    }
    if (c.collective() != null) {
      return true;
    }
    return c.request() != null && c.request().has("layout")
        && (type.equals("training") || type.equals("inference"));
  }

  // Per kernel target: GEMM constants wanted (GEMMS), fused attention wanted (ATTENTION).
  // Attention is fitted where it runs: an FP8 recipe's attention in its activation format's
  // family. Serving cases do not fit it: a serving prefill uses the training kernels' fitted
  // constant, and a fit on A100 serving prefills alone ran to its bound of 1 (the engine's
  // context kernel and the request path cannot be told apart there; docs/validation.md).
  private static final int GEMMS = 1;
  private static final int ATTENTION = 2;
  // Element-wise kernels are fitted in the format they run in (PrecisionRecipe#elementwiseFormat,
  // the activations' family): training cases only.
  private static final int ELEMENTWISE = 4;

  /**
   * What the cases fit: kernel targets ("generation/format" or a scoped key, with the bits of
   * the constants wanted there), fabrics and accelerators.
   */
  private record Targets(Map<String, Integer> kernels, Set<String> fabrics,
      Set<String> accelerators) {}

  private static Targets targets(List<Documents.Case> cases, Catalog catalog,
      Map<String, Set<Constant>> scoped) {
    Map<String, Integer> kernelTargets = new LinkedHashMap<>();
    Set<String> fabricTargets = new LinkedHashSet<>();
    Set<String> acceleratorTargets = new LinkedHashSet<>();
    for (Documents.Case c : cases) {
      if (c.collective() != null) {
        Cluster cluster = c.collective().cluster(catalog);
        if (cluster.devices() <= cluster.devicesPerNode()) {
          fabricTargets.add(cluster.intraNode().id());
        } else {
          String nic = cluster.interNode().id();
          fabricTargets.add(nic.substring(0, nic.lastIndexOf("-x")));
        }
        continue;
      }
      Accelerator a;
      NumberFormat compute;
      NumberFormat attention = null;
      NumberFormat elementwise = null;
      String scope = null;
      if (c.workloadType().equals("inference")) {
        InferenceRequest r = Serving.fromJson(c.request(), catalog);
        a = r.cluster().accelerator();
        NumberFormat weights = r.workload().weights();
        compute = !weights.isFloating() ? NumberFormat.FP16 : weights;
      } else {
        EstimateRequest r = Requests.fromJson(c.request(), catalog);
        a = r.cluster().accelerator();
        compute = r.workload().precision().compute();
        Engine engine = r.layout().engineOrDefault();
        if (r.workload().attentionOn(a, engine) == Attention.FLASH) {
          attention = r.workload().precision().attentionFormat(a::supports);
        }
        elementwise = r.workload().precision().elementwiseFormat(a::supports);
        String key = Catalog.scopedKey(a.generation(), engine);
        scope = scoped.containsKey(key) ? key : null;
      }
      acceleratorTargets.add(a.id());
      checkArgument(!a.generation().isEmpty(), "%s: accelerator %s has no generation in the"
          + " catalog, so its kernel constants cannot be fitted", c.id(), a.id());
      String prefix = (scope != null ? scope : a.generation()) + "/";
      kernelTargets.merge(prefix + family(compute).get(0).id(), GEMMS, (x, y) -> x | y);
      if (attention != null) {
        kernelTargets.merge(prefix + family(attention).get(0).id(), ATTENTION,
            (x, y) -> x | y);
      }
      if (elementwise != null) {
        kernelTargets.merge(prefix + family(elementwise).get(0).id(), ELEMENTWISE,
            (x, y) -> x | y);
      }
    }
    return new Targets(kernelTargets, fabricTargets, acceleratorTargets);
  }

  private static List<Knob> knobs(List<Documents.Case> cases, Catalog catalog,
      Set<Constant> constants, Map<String, Set<Constant>> scoped) {
    Targets targets = targets(cases, catalog, scoped);
    List<Knob> knobs = new ArrayList<>();
    for (Map.Entry<String, Integer> t : targets.kernels().entrySet()) {
      String[] gf = t.getKey().split("/", 2);
      String generation = gf[0];
      NumberFormat format = NumberFormat.fromId("workload.precision", gf[1]);
      KernelEfficiency k = current(catalog, generation, format);
      Map<Constant, Double> starts = starts(k, t.getValue());
      Set<Constant> wanted = scoped.getOrDefault(generation, constants);
      starts.forEach((constant, start) -> {
        if (wanted.contains(constant)) {
          knobs.add(new Knob(t.getKey(), constant, start, (cat, v) -> withFamily(cat,
              generation, format, set(current(cat, generation, format), constant, v))));
        }
      });
    }
    if (constants.contains(Constant.FABRIC_EFFICIENCY)) {
      for (String f : targets.fabrics()) {
        knobs.add(new Knob(f, Constant.FABRIC_EFFICIENCY, catalog.fabrics().get(f).efficiency(),
            (cat, v) -> cat.withFabricEfficiency(f, v)));
      }
    }
    if (constants.contains(Constant.MEMORY_EFFICIENCY)) {
      for (String id : targets.accelerators()) {
        knobs.add(new Knob(id, Constant.MEMORY_EFFICIENCY,
            catalog.accelerators().get(id).memoryEfficiency(),
            (cat, v) -> cat.withMemoryEfficiency(id, v)));
      }
    }
    return knobs;
  }

  /** The starting values of the kernel constants the target's bits ask for, in fitting order. */
  private static Map<Constant, Double> starts(KernelEfficiency k, int bits) {
    Map<Constant, Double> starts = new LinkedHashMap<>();
    boolean gemms = (bits & GEMMS) != 0;
    if (gemms) {
      starts.put(Constant.MATMUL_EFFICIENCY, k.matmul());
    }
    if ((bits & ATTENTION) != 0) {
      starts.put(Constant.ATTENTION_EFFICIENCY, k.attention() > 0 ? k.attention() : 0.5);
    }
    if (gemms) {
      starts.put(Constant.MATMUL_HALF_DIM, k.halfDim());
      starts.put(Constant.SERVING_OVERHEAD,
          Math.max(k.servingLayerOverheadSeconds() * 1e6, 20.0));
      starts.put(Constant.KV_BANDWIDTH, Math.min(k.kvBandwidthFraction(), 0.9));
      starts.put(Constant.KV_PER_HEAD_BANDWIDTH, Math.min(k.kvPerHeadBandwidth(), 0.9));
      starts.put(Constant.KV_PER_HEAD_REREAD, Math.min(k.kvPerHeadRereadFraction(), 0.9));
      starts.put(Constant.SERVING_REQUEST, Math.max(k.servingRequestSeconds() * 1e6, 1000.0));
      starts.put(Constant.SERVING_FIRST_TOKEN_LAYER,
          Math.max(k.servingFirstTokenLayerSeconds() * 1e6, 20.0));
      starts.put(Constant.OVERLAP_COST, Math.max(k.overlapCost(), 0.1));
      starts.put(Constant.LAYER_OVERHEAD, Math.max(k.layerOverheadSeconds() * 1e6, 50.0));
    }
    if ((bits & ELEMENTWISE) != 0) {
      starts.put(Constant.ELEMENTWISE_BANDWIDTH, Math.min(k.elementwiseBandwidthFraction(), 0.9));
    }
    return starts;
  }

  /** Kernel constants with one fitted constant set (overheads in µs, as the catalog writes). */
  private static KernelEfficiency set(KernelEfficiency k, Constant constant, double v) {
    return switch (constant) {
      case MATMUL_EFFICIENCY -> k.withMatmul(v);
      case ATTENTION_EFFICIENCY -> k.withAttention(v);
      case MATMUL_HALF_DIM -> k.withHalfDim(v);
      case SERVING_OVERHEAD -> k.withServingLayerOverhead(v * 1e-6);
      case KV_BANDWIDTH -> k.withKvBandwidthFraction(v);
      case KV_PER_HEAD_BANDWIDTH -> k.withKvPerHeadBandwidthFraction(v);
      case KV_PER_HEAD_REREAD -> k.withKvPerHeadRereadFraction(v);
      case SERVING_REQUEST -> k.withServingRequest(v * 1e-6);
      case SERVING_FIRST_TOKEN_LAYER -> k.withServingFirstTokenLayer(v * 1e-6);
      case OVERLAP_COST -> k.withOverlapCost(v);
      case LAYER_OVERHEAD -> k.withLayerOverhead(v * 1e-6);
      case ELEMENTWISE_BANDWIDTH -> k.withElementwiseBandwidthFraction(v);
      case FABRIC_EFFICIENCY, MEMORY_EFFICIENCY ->
          throw new AssertionError("not a kernel constant");
    };
  }

  /**
   * The formats that share tensor-core throughput and are fitted as one: FP16 with BF16, the two
   * FP8 formats together (equal dense peaks on Ampere, Hopper and Blackwell datasheets).
   */
  static List<NumberFormat> family(NumberFormat f) {
    return switch (f) {
      case BF16, FP16 -> List.of(NumberFormat.BF16, NumberFormat.FP16);
      case FP8_E4M3, FP8_E5M2 -> List.of(NumberFormat.FP8_E4M3, NumberFormat.FP8_E5M2);
      default -> List.of(f);
    };
  }

  private static Catalog withFamily(Catalog cat, String generation, NumberFormat format,
      KernelEfficiency k) {
    Catalog out = cat;
    for (NumberFormat f : family(format)) {
      out = out.withKernel(generation, f, k);
    }
    return out;
  }

  /**
   * The kernel constants a generation's accelerators use now in this format; for a scope
   * ({@code "hopper@fsdp"}) its own, else the generation's.
   */
  static KernelEfficiency current(Catalog catalog, String key, NumberFormat format) {
    KernelEfficiency k = catalog.kernels().getOrDefault(key, ImmutableMap.of()).get(format);
    if (k != null) {
      return k;
    }
    String generation = key.contains("@") ? key.substring(0, key.indexOf('@')) : key;
    if (!generation.equals(key)) {
      return current(catalog, generation, format);
    }
    for (Accelerator a : catalog.accelerators().values()) {
      if (a.generation().equals(generation) && a.supports(format)) {
        return a.kernel(format);
      }
    }
    throw new IllegalArgumentException("kernels: no accelerator of generation '" + generation
        + "' computes in " + format.id());
  }

  private static JsonNode document(List<Documents.Case> cases) {
    return Json.tree(new Documents.Cases(cases));
  }
}
