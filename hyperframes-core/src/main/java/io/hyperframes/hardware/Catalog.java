package io.hyperframes.hardware;

import static com.google.common.base.Preconditions.checkArgument;

import com.fasterxml.jackson.databind.JsonNode;
import com.google.common.base.Supplier;
import com.google.common.base.Suppliers;
import com.google.common.collect.ImmutableMap;
import com.google.common.collect.ImmutableSortedMap;
import io.hyperframes.json.JsonFields;
import io.hyperframes.model.TransformerSpec;
import io.hyperframes.precision.NumberFormat;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
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
      Map<String, Price> prices, Map<String, Map<NumberFormat, KernelEfficiency>> kernels) {
    this.version = version;
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
    k.computeIfAbsent(generation.toLowerCase(Locale.ROOT), g -> new LinkedHashMap<>())
        .put(format, kernel);
    return new Catalog(version, fabrics, resolve(accelerators, k), nodes, models, modelSources,
        prices, k);
  }

  /**
   * This catalog without fitted kernel efficiencies: every accelerator on its own matmul
   * constants (the prior a leave-one-source-out validation refits from).
   */
  public Catalog withoutKernels() {
    return new Catalog(version, fabrics, resolve(accelerators, Map.of()), nodes, models,
        modelSources, prices, Map.of());
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
            n.source())
        : n));
    return new Catalog(version, fs, as, ns, models, modelSources, prices, kernels);
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
    Accelerator a = id == null ? null : accelerators.get(id.toLowerCase(Locale.ROOT));
    if (a == null) {
      throw new IllegalArgumentException(field + ": unknown accelerator '" + id + "' (known: "
          + String.join(", ", accelerators.keySet()) + ")");
    }
    return a;
  }

  /** The node template with this id. */
  public NodeTemplate node(String field, String id) {
    NodeTemplate n = id == null ? null : nodes.get(id.toLowerCase(Locale.ROOT));
    if (n == null) {
      throw new IllegalArgumentException(field + ": unknown node template '" + id + "' (known: "
          + String.join(", ", nodes.keySet()) + ")");
    }
    return n;
  }

  /** The catalog model with this id. */
  public TransformerSpec model(String field, String id) {
    TransformerSpec m = id == null ? null : models.get(id.toLowerCase(Locale.ROOT));
    if (m == null) {
      throw new IllegalArgumentException(field + ": unknown catalog model '" + id + "' (known: "
          + String.join(", ", models.keySet()) + ")");
    }
    return m;
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
    return merge(JsonFields.parseObject("catalog " + file.getFileName(), text));
  }

  private static Catalog loadBuiltIn() {
    Catalog empty = new Catalog("", Map.of(), Map.of(), Map.of(), Map.of(), Map.of(), Map.of(),
        Map.of());
    Catalog c = empty.merge(JsonFields.parseObject("hardware.json", resource("hardware.json")));
    c = c.merge(JsonFields.parseObject("prices.json", resource("prices.json")));
    return c.merge(JsonFields.parseObject("models.json", resource("models.json")));
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

  private Catalog merge(JsonNode root) {
    Map<String, Fabric> f = new LinkedHashMap<>(fabrics);
    Map<String, Accelerator> a = new LinkedHashMap<>(accelerators);
    Map<String, NodeTemplate> n = new LinkedHashMap<>(nodes);
    Map<String, TransformerSpec> m = new LinkedHashMap<>(models);
    Map<String, String> ms = new LinkedHashMap<>(modelSources);
    Map<String, Price> pr = new LinkedHashMap<>(prices);
    Map<String, Map<NumberFormat, KernelEfficiency>> k = copyKernels(kernels);
    String v = JsonFields.optionalString(root, "version", "version");
    for (JsonNode e : array(root, "fabrics")) {
      String id = key(e, "fabrics");
      String p = "fabrics[" + id + "]";
      f.put(id, new Fabric(id,
          JsonFields.number(e, "bandwidthGBps", p + ".bandwidthGBps") * 1e9,
          JsonFields.number(e, "latencyUs", p + ".latencyUs") * 1e-6,
          JsonFields.number(e, "launchUs", p + ".launchUs") * 1e-6,
          JsonFields.number(e, "efficiency", p + ".efficiency"),
          JsonFields.number(e, "halfEfficiencyMB", p + ".halfEfficiencyMB") * 1e6,
          JsonFields.number(e, "inNetworkReductionGBps", p + ".inNetworkReductionGBps") * 1e9,
          JsonFields.string(e, "source", p + ".source")));
    }
    for (JsonNode e : array(root, "accelerators")) {
      String id = key(e, "accelerators");
      String p = "accelerators[" + id + "]";
      JsonNode peaks = JsonFields.object(e, "peakTflops", p + ".peakTflops");
      Map<NumberFormat, Double> peak = new LinkedHashMap<>();
      for (var it = peaks.fieldNames(); it.hasNext();) {
        String fmt = it.next();
        peak.put(NumberFormat.fromId(p + ".peakTflops", fmt),
            JsonFields.number(peaks, fmt, p + ".peakTflops." + fmt) * 1e12);
      }
      String link = JsonFields.string(e, "intraNode", p + ".intraNode");
      Fabric intra = f.get(link);
      checkArgument(intra != null, "%s.intraNode: unknown fabric '%s'", p, link);
      a.put(id, new Accelerator(id, JsonFields.string(e, "name", p + ".name"), peak,
          JsonFields.number(e, "memoryGiB", p + ".memoryGiB") * (1L << 30),
          JsonFields.number(e, "memoryBandwidthGBps", p + ".memoryBandwidthGBps") * 1e9,
          JsonFields.number(e, "l2MB", p + ".l2MB") * 1e6,
          JsonFields.number(e, "matmulEfficiency", p + ".matmulEfficiency"),
          JsonFields.number(e, "matmulHalfDim", p + ".matmulHalfDim"),
          JsonFields.number(e, "matmulHalfRows", p + ".matmulHalfRows"),
          JsonFields.number(e, "memoryEfficiency", p + ".memoryEfficiency"),
          JsonFields.number(e, "powerWatts", p + ".powerWatts"), intra,
          JsonFields.string(e, "defaultNode", p + ".defaultNode"),
          Boolean.TRUE.equals(
              JsonFields.optionalBoolean(e, "fusedAttention", p + ".fusedAttention")),
          JsonFields.optionalString(e, "generation", p + ".generation"), Map.of(), Map.of(),
          JsonFields.string(e, "source", p + ".source")));
    }
    for (JsonNode e : array(root, "nodes")) {
      String id = key(e, "nodes");
      String p = "nodes[" + id + "]";
      int perNode = JsonFields.integer(e, "devicesPerNode", p + ".devicesPerNode");
      int nics = JsonFields.integer(e, "nics", p + ".nics");
      Checks.positive(p + ".nics", nics);
      String nicId = JsonFields.string(e, "nic", p + ".nic");
      Fabric nic = f.get(nicId);
      checkArgument(nic != null, "%s.nic: unknown fabric '%s'", p, nicId);
      Fabric perDevice = new Fabric(nic.id() + "-x" + nics,
          nic.bandwidthBytesPerSecond() * nics / perNode, nic.latencySeconds(),
          nic.launchSeconds(), nic.efficiency(),
          nic.halfEfficiencyBytes(), nic.inNetworkReductionBytesPerSecond(), nic.source());
      n.put(id, new NodeTemplate(id, JsonFields.string(e, "accelerator", p + ".accelerator"),
          perNode, perDevice, JsonFields.integer(e, "hostCores", p + ".hostCores"),
          JsonFields.number(e, "hostMemoryGiB", p + ".hostMemoryGiB") * (1L << 30),
          JsonFields.string(e, "source", p + ".source")));
    }
    for (JsonNode e : array(root, "models")) {
      String id = key(e, "models");
      m.put(id, transformer(e, "models[" + id + "]", id));
      ms.put(id, JsonFields.string(e, "source", "models[" + id + "].source"));
    }
    for (JsonNode e : array(root, "prices")) {
      String id = JsonFields.string(e, "accelerator", "prices.accelerator").toLowerCase(Locale.ROOT);
      String p = "prices[" + id + "]";
      pr.put(id, new Price(Checks.positive(p + ".usdPerHour",
          JsonFields.number(e, "usdPerHour", p + ".usdPerHour")),
          JsonFields.string(e, "source", p + ".source"),
          JsonFields.string(e, "date", p + ".date")));
    }
    for (JsonNode e : array(root, "kernels")) {
      checkArgument(e.isObject(), "kernels: entries must be objects");
      String g = JsonFields.string(e, "generation", "kernels.generation").toLowerCase(Locale.ROOT);
      String p = "kernels[" + g + "]";
      Double overlap = JsonFields.optionalNumber(e, "overlapCost", p + ".overlapCost");
      Double servingOverhead = JsonFields.optionalNumber(e, "servingLayerOverheadUs",
          p + ".servingLayerOverheadUs");
      Double kvFraction = JsonFields.optionalNumber(e, "kvBandwidthFraction",
          p + ".kvBandwidthFraction");
      KernelEfficiency eff = new KernelEfficiency(
          JsonFields.number(e, "matmulEfficiency", p + ".matmulEfficiency"),
          JsonFields.number(e, "matmulHalfDim", p + ".matmulHalfDim"),
          JsonFields.number(e, "matmulHalfRows", p + ".matmulHalfRows"),
          JsonFields.number(e, "attentionEfficiency", p + ".attentionEfficiency"),
          JsonFields.number(e, "layerOverheadUs", p + ".layerOverheadUs") * 1e-6,
          overlap == null ? 0.0 : overlap,
          servingOverhead == null ? 0.0 : servingOverhead * 1e-6,
          kvFraction == null ? 1.0 : kvFraction,
          JsonFields.string(e, "source", p + ".source"));
      JsonNode formats = e.get("formats");
      checkArgument(formats != null && formats.isArray() && !formats.isEmpty(),
          "%s.formats: must be a non-empty array of number formats", p);
      for (JsonNode fmt : formats) {
        k.computeIfAbsent(g, x -> new LinkedHashMap<>())
            .put(NumberFormat.fromId(p + ".formats", fmt.asText()), eff);
      }
    }
    Map<String, StepInterval> iv = new LinkedHashMap<>();
    for (JsonNode e : array(root, "intervals")) {
      checkArgument(e.isObject(), "intervals: entries must be objects");
      String g = JsonFields.string(e, "generation", "intervals.generation")
          .toLowerCase(Locale.ROOT);
      String r = JsonFields.string(e, "regime", "intervals.regime");
      checkArgument(r.equals("*") || StepInterval.REGIMES.contains(r),
          "intervals.regime: unknown regime '%s' (expected *, %s)", r,
          String.join(", ", StepInterval.REGIMES));
      String p = "intervals[" + g + "/" + r + "]";
      iv.put(g + "/" + r, new StepInterval(JsonFields.number(e, "low", p + ".low"),
          JsonFields.number(e, "high", p + ".high"), JsonFields.integer(e, "cases", p + ".cases"),
          JsonFields.string(e, "source", p + ".source")));
    }
    Map<String, Accelerator> resolved = resolve(a, k);
    if (!iv.isEmpty()) {
      resolved.replaceAll((id, acc) -> {
        Map<String, StepInterval> byRegime = new LinkedHashMap<>(acc.intervals());
        for (String r : StepInterval.REGIMES) {
          for (String key : List.of(acc.generation() + "/" + r, "*/" + r,
              acc.generation() + "/*", "*/*")) {
            if (iv.containsKey(key)) {
              byRegime.put(r, iv.get(key));
              break;
            }
          }
        }
        return acc.withIntervals(byRegime);
      });
    }
    return new Catalog(v != null ? v : version, f, resolved, n, m, ms, pr, k);
  }

  /** Reads a transformer architecture from JSON fields (also used for request models). */
  public static TransformerSpec transformer(JsonNode e, String path, String name) {
    int hidden = JsonFields.integer(e, "hidden", path + ".hidden");
    int heads = JsonFields.integer(e, "heads", path + ".heads");
    Boolean gated = JsonFields.optionalBoolean(e, "gatedMlp", path + ".gatedMlp");
    boolean g = gated != null && gated;
    Integer kv = JsonFields.optionalInteger(e, "kvHeads", path + ".kvHeads");
    Integer ffn = JsonFields.optionalInteger(e, "ffnHidden", path + ".ffnHidden");
    Boolean tied = JsonFields.optionalBoolean(e, "tiedEmbeddings", path + ".tiedEmbeddings");
    Checks.positive(path + ".hidden", hidden);
    return new TransformerSpec(name,
        JsonFields.integer(e, "layers", path + ".layers"), hidden, heads,
        kv != null ? kv : heads,
        ffn != null ? ffn : TransformerSpec.defaultFfnHidden(hidden, g), g,
        JsonFields.integer(e, "vocab", path + ".vocab"),
        JsonFields.integer(e, "seqLen", path + ".seqLen"),
        tied != null ? tied : !g);
  }

  private static Iterable<JsonNode> array(JsonNode root, String name) {
    JsonNode n = root.get(name);
    if (n == null || n.isNull()) {
      return java.util.List.of();
    }
    checkArgument(n.isArray(), "%s: must be an array", name);
    return n;
  }

  private static String key(JsonNode e, String section) {
    checkArgument(e.isObject(), "%s: entries must be objects", section);
    return JsonFields.string(e, "id", section + ".id").toLowerCase(Locale.ROOT);
  }
}
