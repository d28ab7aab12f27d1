package io.hyperframes.catalog;

import io.hyperframes.hardware.Accelerator;
import io.hyperframes.hardware.Checks;
import io.hyperframes.hardware.Cluster;
import io.hyperframes.hardware.Fabric;
import io.hyperframes.hardware.KernelEfficiency;
import io.hyperframes.hardware.NodeTemplate;
import io.hyperframes.hardware.StepInterval;
import static com.google.common.base.Preconditions.checkArgument;

import com.google.common.base.Supplier;
import com.google.common.base.Suppliers;
import com.google.common.collect.ImmutableMap;
import com.google.common.collect.ImmutableSortedMap;
import io.hyperframes.json.Json;
import io.hyperframes.catalog.CatalogFile;
import io.hyperframes.parallel.Engine;
import io.hyperframes.model.TransformerSpec;
import io.hyperframes.precision.NumberFormat;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The catalog of fabrics, accelerators, node templates and models: data files on the classpath
 * ({@code io/hyperframes/catalog/*.json}), every number with its source, loaded once on first use.
 * A user file in the same format overrides or adds entries by id ({@link #withOverrides(Path)}).
 */
public final class Catalog {

  private static final Supplier<Catalog> BUILT_IN = Suppliers.memoize(Catalog::loadBuiltIn);

  private final String version;
  private final Map<String, Fabric> fabrics;
  private final Map<String, Accelerator> accelerators;
  private final Map<String, NodeTemplate> nodes;
  private final Map<String, TransformerSpec> models;
  private final Map<String, String> modelSources;
  private final Map<String, Price> prices;
  private final Map<String, Map<NumberFormat, KernelEfficiency>> kernels;
  private final Map<String, Map<String, List<String>>> fittedOn;
  private final List<Decision> decisions;
  // Kernel entries whose serving constants are another's ("blackwell/nvfp4" -> "hopper/fp8-e4m3",
  // CatalogFile.KernelEntry#servingFrom), kept so that a later file or a fit of the named entry
  // moves them too.
  private final Map<String, String> servingFrom;

  /**
   * An accelerator-hour price.
   *
   * @param usdPerHour on-demand price per device-hour in USD
   * @param source where it was read
   * @param date when (YYYY-MM)
   */
  public record Price(double usdPerHour, String source, String date) {}

  private Catalog(String version, Map<String, Fabric> fabrics,
      Map<String, Accelerator> accelerators, Map<String, NodeTemplate> nodes,
      Map<String, TransformerSpec> models, Map<String, String> modelSources,
      Map<String, Price> prices, Map<String, Map<NumberFormat, KernelEfficiency>> kernels,
      Map<String, Map<String, List<String>>> fittedOn, List<Decision> decisions,
      Map<String, String> servingFrom) {
    this.version = version;
    this.servingFrom = ImmutableSortedMap.copyOf(servingFrom);
    ImmutableSortedMap.Builder<String, Map<String, List<String>>> fo =
        ImmutableSortedMap.naturalOrder();
    fittedOn.forEach((entry, fields) -> {
      ImmutableSortedMap.Builder<String, List<String>> b = ImmutableSortedMap.naturalOrder();
      fields.forEach((field, sources) -> b.put(field, List.copyOf(sources)));
      fo.put(entry, b.build());
    });
    this.fittedOn = fo.build();
    this.decisions = List.copyOf(decisions);
    this.fabrics = ImmutableSortedMap.copyOf(fabrics);
    this.accelerators = ImmutableSortedMap.copyOf(accelerators);
    this.nodes = ImmutableSortedMap.copyOf(nodes);
    this.models = ImmutableSortedMap.copyOf(models);
    this.modelSources = ImmutableMap.copyOf(modelSources);
    this.prices = ImmutableSortedMap.copyOf(prices);
    ImmutableSortedMap.Builder<String, Map<NumberFormat, KernelEfficiency>> k =
        ImmutableSortedMap.naturalOrder();
    kernels.forEach((g, byFormat) -> k.put(g, ImmutableMap.copyOf(byFormat)));
    this.kernels = k.build();
  }

  /**
   * Fitted kernel efficiencies by accelerator generation and compute format (the catalog's
   * {@code kernels} section); accelerators of a generation use them.
   */
  public Map<String, Map<NumberFormat, KernelEfficiency>> kernels() {
    return kernels;
  }

  /**
   * This catalog with the kernel efficiencies of one generation and format replaced, every
   * accelerator of that generation re-resolved (what {@code calibrate} fits).
   */
  public Catalog withKernel(String generation, NumberFormat format, KernelEfficiency kernel) {
    checkArgument(generation != null && !generation.isBlank(), "generation: must be given");
    checkArgument(format != null && kernel != null, "kernel: format and efficiencies must be given");
    Map<String, Map<NumberFormat, KernelEfficiency>> k = copyKernels(kernels);
    String g = generation.toLowerCase(Locale.ROOT);
    k.computeIfAbsent(g, x -> new LinkedHashMap<>()).put(format, kernel);
    // The entry set here is taken as given (its serving constants included); entries that
    // carry its serving constants follow it.
    Map<String, String> carries = new LinkedHashMap<>(servingFrom);
    carries.remove(g + "/" + format.id());
    carryServing(k, carries);
    return new Catalog(version, fabrics, resolve(accelerators, k), nodes, models, modelSources,
        prices, k, fittedOn, decisions, carries);
  }

  /**
   * The key of the kernel constants an engine's kernels have on a generation
   * ({@code "hopper@fsdp"}), beside the generation's own ({@code "hopper"}) in {@link #kernels()}.
   */
  public static String scopedKey(String generation, Engine engine) {
    return generation + "@" + engine.id();
  }

  /**
   * The cluster as {@code engine} runs it: where the catalog has kernel constants scoped to the
   * engine on the cluster's accelerator generation, the accelerator uses them (over the
   * generation's) in the formats they cover; otherwise the cluster itself.
   */
  public Cluster forEngine(Cluster cluster, Engine engine) {
    checkArgument(cluster != null && engine != null, "cluster and engine: must be given");
    Accelerator a = cluster.accelerator();
    Map<NumberFormat, KernelEfficiency> scoped = kernels.get(scopedKey(a.generation(), engine));
    if (scoped == null || scoped.isEmpty()) {
      return cluster;
    }
    Map<NumberFormat, KernelEfficiency> merged =
        new LinkedHashMap<>(kernels.getOrDefault(a.generation(), Map.of()));
    merged.putAll(scoped);
    return cluster.withAccelerator(a.withKernels(merged));
  }

  /**
   * This catalog without fitted kernel efficiencies: every accelerator on its own matmul
   * constants (the prior a leave-one-source-out validation refits from).
   */
  public Catalog withoutKernels() {
    return new Catalog(version, fabrics, resolve(accelerators, Map.of()), nodes, models,
        modelSources, prices, Map.of(), fittedOn, decisions, Map.of());
  }

  /**
   * This catalog with one accelerator's sustained fraction of its memory bandwidth replaced
   * (what {@code calibrate --fit memory} fits).
   *
   * @throws IllegalArgumentException for an unknown accelerator or an efficiency outside (0, 1]
   */
  public Catalog withMemoryEfficiency(String acceleratorId, double efficiency) {
    Accelerator old = accelerators.get(acceleratorId);
    checkArgument(old != null, "accelerator: unknown accelerator '%s'", acceleratorId);
    checkArgument(efficiency > 0 && efficiency <= 1,
        "accelerators[%s].memoryEfficiency: must be in (0, 1], got %s", acceleratorId,
        efficiency);
    Map<String, Accelerator> as = new LinkedHashMap<>(accelerators);
    as.put(acceleratorId, old.withMemoryEfficiency(efficiency));
    return new Catalog(version, fabrics, as, nodes, models, modelSources, prices, kernels,
        fittedOn, decisions, servingFrom);
  }

  /** This catalog with a fabric replaced (and the node templates built on it re-derived). */
  public Catalog withFabricEfficiency(String fabricId, double efficiency) {
    Fabric old = fabrics.get(fabricId);
    checkArgument(old != null, "fabric: unknown fabric '%s'", fabricId);
    Fabric f = old.withEfficiency(efficiency);
    Map<String, Fabric> fs = new LinkedHashMap<>(fabrics);
    fs.put(fabricId, f);
    Map<String, Accelerator> as = new LinkedHashMap<>();
    accelerators.forEach((id, a) -> as.put(id,
        a.intraNode().id().equals(fabricId) ? a.withIntraNode(f) : a));
    Map<String, NodeTemplate> ns = new LinkedHashMap<>();
    nodes.forEach((id, n) -> ns.put(id, n.interNode().id().startsWith(fabricId + "-x")
        ? new NodeTemplate(n.id(), n.accelerator(), n.devicesPerNode(),
            n.interNode().withEfficiency(efficiency), n.hostCores(), n.hostMemoryBytes(),
            n.source(), n.devicesPerHost())
        : n));
    return new Catalog(version, fs, as, ns, models, modelSources, prices, kernels, fittedOn,
        decisions, servingFrom);
  }

  private static Map<String, Map<NumberFormat, KernelEfficiency>> copyKernels(
      Map<String, Map<NumberFormat, KernelEfficiency>> from) {
    Map<String, Map<NumberFormat, KernelEfficiency>> k = new LinkedHashMap<>();
    from.forEach((g, byFormat) -> k.put(g, new LinkedHashMap<>(byFormat)));
    return k;
  }

  private static Map<String, Accelerator> resolve(Map<String, Accelerator> accelerators,
      Map<String, Map<NumberFormat, KernelEfficiency>> kernels) {
    Map<String, Accelerator> out = new LinkedHashMap<>();
    accelerators.forEach((id, a) -> out.put(id,
        a.withKernels(kernels.getOrDefault(a.generation(), Map.of()))));
    return out;
  }

  /** Prices by accelerator id. */
  public Map<String, Price> prices() {
    return prices;
  }

  /** The catalog shipped with the library (loaded on the first call, then shared). */
  public static Catalog builtIn() {
    return BUILT_IN.get();
  }

  /** Catalog data version ("2026-11"). */
  public String version() {
    return version;
  }

  public Map<String, Fabric> fabrics() {
    return fabrics;
  }

  public Map<String, Accelerator> accelerators() {
    return accelerators;
  }

  public Map<String, NodeTemplate> nodes() {
    return nodes;
  }

  public Map<String, TransformerSpec> models() {
    return models;
  }

  /** Where a catalog model's architecture comes from. */
  public String modelSource(String id) {
    return modelSources.getOrDefault(id, "");
  }

  /** The accelerator with this id; {@code IllegalArgumentException} naming it otherwise. */
  public Accelerator accelerator(String field, String id) {
    return lookup(accelerators, "accelerator", field, id);
  }

  /** The node template with this id. */
  public NodeTemplate node(String field, String id) {
    return lookup(nodes, "node template", field, id);
  }

  /** The catalog model with this id. */
  public TransformerSpec model(String field, String id) {
    return lookup(models, "catalog model", field, id);
  }

  private static <T> T lookup(Map<String, T> entries, String kind, String field, String id) {
    T t = id == null ? null : entries.get(id.toLowerCase(Locale.ROOT));
    if (t == null) {
      throw new IllegalArgumentException(field + ": unknown " + kind + " '" + id + "' (known: "
          + String.join(", ", entries.keySet()) + ")");
    }
    return t;
  }

  /**
   * This catalog with the entries of a user file (same format as the built-in files; any of
   * "fabrics", "accelerators", "nodes", "models") replacing or adding entries by id.
   *
   * @throws IllegalArgumentException when the file is unreadable or malformed, naming the field
   */
  public Catalog withOverrides(Path file) {
    checkArgument(file != null, "catalog: file must be given");
    String text;
    try {
      text = Files.readString(file, StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new IllegalArgumentException("catalog: cannot read " + file + ": " + e.getMessage(), e);
    }
    return merge(Json.read("catalog " + file.getFileName(), text, CatalogFile.class));
  }

  /**
   * This catalog with the entries of a catalog document already read (a profile's, a
   * calibration's), replacing or adding entries by id.
   *
   * @throws IllegalArgumentException naming the field when an entry is malformed
   */
  Catalog withOverrides(CatalogFile file) {
    checkArgument(file != null, "catalog: must be given");
    return merge(file);
  }

  private static Catalog loadBuiltIn() {
    Catalog empty = new Catalog("", Map.of(), Map.of(), Map.of(), Map.of(), Map.of(), Map.of(),
        Map.of(), Map.of(), List.of(), Map.of());
    Catalog c = empty.merge(
        Json.read("hardware.json", resource("hardware.json"), CatalogFile.class));
    c = c.merge(Json.read("prices.json", resource("prices.json"), CatalogFile.class));
    return c.merge(Json.read("models.json", resource("models.json"), CatalogFile.class));
  }

  private static void provenance(Map<String, Map<String, List<String>>> into, String entry,
      Map<String, List<String>> fitted) {
    if (fitted == null) {
      return;
    }
    fitted.forEach((field, sources) -> checkArgument(sources != null && !sources.isEmpty(),
        "%s.fittedOn.%s: must list the case sources it was fitted on", entry, field));
    into.put(entry, fitted);
  }

  /**
   * Provenance of the fitted fields: for each entry ({@code fabrics[ib-hdr]},
   * {@code accelerators[a100-sxm-80gb]}, {@code kernels[hopper/bf16,fp16]},
   * {@code kernels[hopper@fsdp/bf16,fp16]}), each fitted field and the case sources (case-id
   * prefixes) it was fitted on. A field absent here is a prior with the source its entry
   * names.
   */
  public Map<String, Map<String, List<String>>> fittedOn() {
    return fittedOn;
  }

  /**
   * A modelling choice made by comparing published cases (catalog {@code decisions}): the
   * sources of {@code lookedAt} are fitting sources of the model from then on.
   *
   * @param date when (YYYY-MM-DD)
   * @param decision what was chosen, and between what
   * @param lookedAt the case sources (case-id prefixes) whose errors were compared
   * @param where the report section that shows the comparison
   */
  public record Decision(String date, String decision, List<String> lookedAt, String where) {}

  /** The modelling choices made by comparing published cases, with the sources compared. */
  public List<Decision> decisions() {
    return decisions;
  }

  private static String resource(String name) {
    try (InputStream in = Catalog.class.getResourceAsStream("/io/hyperframes/catalog/" + name)) {
      if (in == null) {
        throw new IllegalStateException("catalog resource missing: " + name);
      }
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private Catalog merge(CatalogFile file) {
    Map<String, Fabric> f = new LinkedHashMap<>(fabrics);
    Map<String, Accelerator> a = new LinkedHashMap<>(accelerators);
    Map<String, NodeTemplate> n = new LinkedHashMap<>(nodes);
    Map<String, TransformerSpec> m = new LinkedHashMap<>(models);
    Map<String, String> ms = new LinkedHashMap<>(modelSources);
    Map<String, Price> pr = new LinkedHashMap<>(prices);
    Map<String, Map<NumberFormat, KernelEfficiency>> k = copyKernels(kernels);
    Map<String, Map<String, List<String>>> fo = new LinkedHashMap<>(fittedOn);
    List<Decision> dec = new java.util.ArrayList<>(decisions);
    for (CatalogFile.DecisionEntry d : list(file.decisions())) {
      checkArgument(d.decision() != null && !d.decision().isBlank(),
          "decisions[].decision: must be given");
      checkArgument(d.lookedAt() != null && !d.lookedAt().isEmpty(),
          "decisions[%s].lookedAt: must name the case sources compared", d.decision());
      dec.removeIf(x -> x.decision().equals(d.decision()));
      dec.add(new Decision(d.date(), d.decision(), List.copyOf(d.lookedAt()), d.where()));
    }
    String v = file.version();
    for (CatalogFile.FabricEntry e : list(file.fabrics())) {
      String id = id("fabrics", e.id());
      String p = "fabrics[" + id + "]";
      f.put(id, new Fabric(id, num(p + ".bandwidthGBps", e.bandwidthGBps()) * 1e9,
          num(p + ".latencyUs", e.latencyUs()) * 1e-6,
          num(p + ".launchUs", e.launchUs()) * 1e-6,
          num(p + ".efficiency", e.efficiency()),
          num(p + ".halfEfficiencyMB", e.halfEfficiencyMB()) * 1e6,
          num(p + ".inNetworkReductionGBps", e.inNetworkReductionGBps()) * 1e9,
          text(p + ".source", e.source())));
      provenance(fo, p, e.fittedOn());
    }
    mergeAccelerators(file, f, a, fo);
    mergeNodes(file, f, n);
    for (CatalogFile.ModelEntry e : list(file.models())) {
      String id = id("models", e.id());
      String p = "models[" + id + "]";
      m.put(id, e.architecture().architecture(p, id));
      ms.put(id, text(p + ".source", e.source()));
    }
    for (CatalogFile.PriceEntry e : list(file.prices())) {
      String id = text("prices.accelerator", e.accelerator()).toLowerCase(Locale.ROOT);
      String p = "prices[" + id + "]";
      pr.put(id, new Price(Checks.positive(p + ".usdPerHour",
          num(p + ".usdPerHour", e.usdPerHour())), text(p + ".source", e.source()),
          text(p + ".date", e.date())));
    }
    Map<String, String> carries = new LinkedHashMap<>(servingFrom);
    mergeKernels(file, k, fo, carries);
    carryServing(k, carries);
    Map<String, StepInterval> iv = intervals(file);
    Map<String, Accelerator> resolved = resolve(a, k);
    if (!iv.isEmpty()) {
      resolved.replaceAll((id, acc) -> withIntervals(acc, iv));
    }
    return new Catalog(v != null ? v : version, f, resolved, n, m, ms, pr, k, fo, dec, carries);
  }

  /** The file's accelerators into {@code a}, on the fabrics of {@code f}. */
  private static void mergeAccelerators(CatalogFile file, Map<String, Fabric> f,
      Map<String, Accelerator> a, Map<String, Map<String, List<String>>> fo) {
    for (CatalogFile.AcceleratorEntry e : list(file.accelerators())) {
      String id = id("accelerators", e.id());
      String p = "accelerators[" + id + "]";
      Map<NumberFormat, Double> peak = new LinkedHashMap<>();
      Json.required(p + ".peakTflops", e.peakTflops()).forEach((fmt, tflops) ->
          peak.put(NumberFormat.fromId(p + ".peakTflops", fmt),
              num(p + ".peakTflops." + fmt, tflops) * 1e12));
      String link = text(p + ".intraNode", e.intraNode());
      Fabric intra = f.get(link);
      checkArgument(intra != null, "%s.intraNode: unknown fabric '%s'", p, link);
      a.put(id, new Accelerator(id, text(p + ".name", e.name()), peak,
          num(p + ".memoryGiB", e.memoryGiB()) * (1L << 30),
          num(p + ".memoryBandwidthGBps", e.memoryBandwidthGBps()) * 1e9,
          num(p + ".l2MB", e.l2MB()) * 1e6,
          num(p + ".matmulEfficiency", e.matmulEfficiency()),
          num(p + ".matmulHalfDim", e.matmulHalfDim()),
          num(p + ".matmulHalfRows", e.matmulHalfRows()),
          num(p + ".memoryEfficiency", e.memoryEfficiency()),
          num(p + ".powerWatts", e.powerWatts()), intra, text(p + ".defaultNode", e.defaultNode()),
          Boolean.TRUE.equals(e.fusedAttention()), e.generation(), Map.of(), Map.of(),
          text(p + ".source", e.source())));
      provenance(fo, p, e.fittedOn());
    }
  }

  /** The file's node templates into {@code n}, their NICs among the fabrics of {@code f}. */
  private static void mergeNodes(CatalogFile file, Map<String, Fabric> f,
      Map<String, NodeTemplate> n) {
    for (CatalogFile.NodeEntry e : list(file.nodes())) {
      String id = id("nodes", e.id());
      String p = "nodes[" + id + "]";
      int perNode = Json.required(p + ".devicesPerNode", e.devicesPerNode());
      int nics = Checks.positive(p + ".nics", Json.required(p + ".nics", e.nics()));
      String nicId = text(p + ".nic", e.nic());
      Fabric nic = f.get(nicId);
      checkArgument(nic != null, "%s.nic: unknown fabric '%s'", p, nicId);
      Fabric perDevice = new Fabric(nic.id() + "-x" + nics,
          nic.bandwidthBytesPerSecond() * nics / perNode, nic.latencySeconds(),
          nic.launchSeconds(), nic.efficiency(),
          nic.halfEfficiencyBytes(), nic.inNetworkReductionBytesPerSecond(), nic.source());
      n.put(id, new NodeTemplate(id, text(p + ".accelerator", e.accelerator()), perNode,
          perDevice, Json.required(p + ".hostCores", e.hostCores()),
          num(p + ".hostMemoryGiB", e.hostMemoryGiB()) * (1L << 30),
          text(p + ".source", e.source()), e.devicesPerHost() == null ? perNode
              : Checks.positive(p + ".devicesPerHost", e.devicesPerHost())));
    }
  }

  /** The file's kernel efficiencies into {@code k}, by generation (and engine) and format. */
  private static void mergeKernels(CatalogFile file,
      Map<String, Map<NumberFormat, KernelEfficiency>> k,
      Map<String, Map<String, List<String>>> fo, Map<String, String> servingFrom) {
    for (CatalogFile.KernelEntry e : list(file.kernels())) {
      String g = text("kernels.generation", e.generation()).toLowerCase(Locale.ROOT);
      if (e.engine() != null) {
        g = scopedKey(g, Engine.fromId("kernels[" + g + "].engine", e.engine()));
      }
      String p = "kernels[" + g + "]";
      KernelEfficiency eff = new KernelEfficiency(
          num(p + ".matmulEfficiency", e.matmulEfficiency()),
          num(p + ".matmulHalfDim", e.matmulHalfDim()),
          num(p + ".matmulHalfRows", e.matmulHalfRows()),
          num(p + ".attentionEfficiency", e.attentionEfficiency()),
          num(p + ".layerOverheadUs", e.layerOverheadUs()) * 1e-6,
          e.overlapCost() == null ? 0.0 : Checks.finite(p + ".overlapCost", e.overlapCost()),
          e.servingLayerOverheadUs() == null ? 0.0
              : Checks.finite(p + ".servingLayerOverheadUs", e.servingLayerOverheadUs()) * 1e-6,
          e.kvBandwidthFraction() == null ? 1.0
              : Checks.finite(p + ".kvBandwidthFraction", e.kvBandwidthFraction()),
          e.servingRequestOverheadUs() == null ? 0.0
              : Checks.nonNegative(p + ".servingRequestOverheadUs",
                  e.servingRequestOverheadUs()) * 1e-6,
          e.optimizerBandwidthFraction() == null ? 1.0
              : Checks.fraction(p + ".optimizerBandwidthFraction", e.optimizerBandwidthFraction()),
          e.kvPerHeadBandwidthFraction() == null ? 0.0
              : Checks.share(p + ".kvPerHeadBandwidthFraction", e.kvPerHeadBandwidthFraction()),
          e.kvPerHeadRereadFraction() == null ? 1.0
              : Checks.share(p + ".kvPerHeadRereadFraction", e.kvPerHeadRereadFraction()),
          e.servingFirstTokenLayerOverheadUs() == null ? 0.0
              : Checks.nonNegative(p + ".servingFirstTokenLayerOverheadUs",
                  e.servingFirstTokenLayerOverheadUs()) * 1e-6,
          e.elementwiseBandwidthFraction() == null ? 1.0
              : Checks.fraction(p + ".elementwiseBandwidthFraction",
                  e.elementwiseBandwidthFraction()),
          text(p + ".source", e.source()));
      checkArgument(e.formats() != null && !e.formats().isEmpty(),
          "%s.formats: must be a non-empty array of number formats", p);
      provenance(fo, "kernels[" + g + "/" + String.join(",", e.formats()) + "]", e.fittedOn());
      for (String fmt : e.formats()) {
        NumberFormat format = NumberFormat.fromId(p + ".formats", text(p + ".formats", fmt));
        k.computeIfAbsent(g, x -> new LinkedHashMap<>()).put(format, eff);
        servingFrom.remove(g + "/" + format.id());
        if (e.servingFrom() != null) {
          checkArgument(e.servingLayerOverheadUs() == null && e.kvBandwidthFraction() == null
              && e.servingRequestOverheadUs() == null && e.kvPerHeadBandwidthFraction() == null
              && e.kvPerHeadRereadFraction() == null
              && e.servingFirstTokenLayerOverheadUs() == null,
              "%s.servingFrom: the entry takes its serving constants from '%s' and must not set"
                  + " any of its own (servingLayerOverheadUs, kvBandwidthFraction,"
                  + " servingRequestOverheadUs, kvPerHeadBandwidthFraction,"
                  + " kvPerHeadRereadFraction, servingFirstTokenLayerOverheadUs)", p,
              e.servingFrom());
          servingFrom.put(g + "/" + format.id(), e.servingFrom());
        }
      }
    }
  }

  /**
   * Each entry of {@code servingFrom} ({@code "generation/format"} to the entry it names) with
   * the serving constants of the entry it names, once every file's entries are read (the one
   * named may come later in a file, or from another file).
   */
  private static void carryServing(Map<String, Map<NumberFormat, KernelEfficiency>> k,
      Map<String, String> servingFrom) {
    servingFrom.forEach((target, from) -> {
      String p = "kernels[" + target + "].servingFrom";
      String[] gf = from.toLowerCase(Locale.ROOT).split("/", 2);
      checkArgument(gf.length == 2, "%s: expected GENERATION/FORMAT (e.g. hopper/fp8-e4m3), got"
          + " '%s'", p, from);
      NumberFormat format = NumberFormat.fromId(p, gf[1]);
      KernelEfficiency source = k.getOrDefault(gf[0], Map.of()).get(format);
      checkArgument(source != null, "%s: no kernel entry '%s' in the catalog", p, from);
      checkArgument(!servingFrom.containsKey(gf[0] + "/" + format.id()),
          "%s: '%s' takes its own serving constants from another entry; name that one", p, from);
      String[] tf = target.split("/", 2);
      NumberFormat targetFormat = NumberFormat.fromId(p, tf[1]);
      k.get(tf[0]).put(targetFormat, k.get(tf[0]).get(targetFormat).withServingOf(source));
    });
  }

  /** The file's step-time intervals by {@code generation/regime} ({@code *} for any). */
  private static Map<String, StepInterval> intervals(CatalogFile file) {
    Map<String, StepInterval> iv = new LinkedHashMap<>();
    for (CatalogFile.IntervalEntry e : list(file.intervals())) {
      String g = text("intervals.generation", e.generation()).toLowerCase(Locale.ROOT);
      String r = text("intervals.regime", e.regime());
      checkArgument(r.equals("*") || r.equals(StepInterval.SERVING)
          || StepInterval.REGIMES.contains(r),
          "intervals.regime: unknown regime '%s' (expected *, %s or %s)", r,
          String.join(", ", StepInterval.REGIMES), StepInterval.SERVING);
      String p = "intervals[" + g + "/" + r + "]";
      iv.put(g + "/" + r, new StepInterval(num(p + ".low", e.low()), num(p + ".high", e.high()),
          Json.required(p + ".cases", e.cases()), text(p + ".source", e.source())));
    }
    return iv;
  }

  /**
   * {@code acc} with the interval of each regime: its generation's for the regime, else any
   * generation's, else (training regimes only: a step-time band says nothing of serving
   * throughput) its generation's for every regime, else the catch-all.
   */
  private static Accelerator withIntervals(Accelerator acc, Map<String, StepInterval> iv) {
    Map<String, StepInterval> byRegime = new LinkedHashMap<>(acc.intervals());
    List<String> regimes = new ArrayList<>(StepInterval.REGIMES);
    regimes.add(StepInterval.SERVING);
    for (String r : regimes) {
      List<String> keys = r.equals(StepInterval.SERVING)
          ? List.of(acc.generation() + "/" + r, "*/" + r)
          : List.of(acc.generation() + "/" + r, "*/" + r, acc.generation() + "/*", "*/*");
      for (String key : keys) {
        if (iv.containsKey(key)) {
          byRegime.put(r, iv.get(key).withRegime(acc.generation() + " " + r));
          break;
        }
      }
    }
    return acc.withIntervals(byRegime);
  }

  private static <T> List<T> list(List<T> section) {
    return section == null ? List.of() : section;
  }

  private static String id(String section, String id) {
    return text(section + ".id", id).toLowerCase(Locale.ROOT);
  }

  private static String text(String path, String value) {
    return Json.required(path, Json.text(path, value));
  }

  private static double num(String path, Double value) {
    return Checks.finite(path, Json.required(path, value));
  }
}
