package io.hyperframes.catalog;

import io.hyperframes.hardware.Accelerator;
import io.hyperframes.hardware.Checks;
import io.hyperframes.hardware.KernelEfficiency;
import static com.google.common.base.Preconditions.checkArgument;
import static com.google.common.base.Preconditions.checkState;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.google.common.collect.ImmutableList;
import com.google.common.collect.ImmutableSortedMap;
import io.hyperframes.catalog.CatalogFile;
import io.hyperframes.json.Json;
import io.hyperframes.precision.NumberFormat;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/**
 * What one machine measured, in a form the planner uses: the probe's measurements (each the
 * median of repeats with its spread) and the catalog entries fitted from them — the host as one
 * accelerator, its kernel constants per format, a fabric and a node template — in the catalog
 * override format ({@link CatalogFile}), so that {@code estimate | plan --profile FILE} run the
 * planner on measured figures instead of a spec sheet ({@value #SCHEMA}: top-level
 * {@code schema}, {@code conditions}, {@code measurements}, {@code catalog}).
 *
 * <p>The fitted constants follow the estimator's compute model (docs/model-reference.md,
 * "Kernel efficiency"): the format's peak is the large-matrix rate and the two half dimensions
 * are fitted to every measured matmul shape, with efficiency 1 ({@link ProfileFit}); the memory bandwidth is the STREAM triad's (McCalpin 1995, "Memory
 * Bandwidth and Machine Balance in Current High Performance Computers", IEEE TCCA Newsletter:
 * three arrays, 24 bytes per element of FP64), sustained by definition (efficiency 1); the
 * per-layer overhead is what a fused dense layer's measured forward and backward take beyond the
 * fitted matmuls and the element-wise passes the estimator counts.
 *
 * <p>Immutable. {@link #genericCpu} builds the spec-sheet counterpart of a profile, for
 * comparison.
 */
public final class MachineProfile {

  /** The schema this class writes and reads. */
  public static final String SCHEMA = "hyperframes.profile/1";

  /**
   * Bytes the estimator counts per parameter for an Adam step in FP32 training: the gradient
   * read (4), the weights read and written (8), both moments read and written (16).
   */
  public static final double ADAM_FP32_BYTES = 28;

  /**
   * One measurement: every repeat, and its median and range.
   *
   * @param name what was measured ("matmul.bf16.256x2048x2048", "memory.triad")
   * @param unit the unit of the samples ("s", "GB/s", "samples/s")
   * @param samples every repeat, finite and positive, at least one
   */
  public record Measurement(String name, String unit, double[] samples) {
    public Measurement {
      checkArgument(name != null && !name.isBlank(), "measurement.name: must be given");
      checkArgument(unit != null && !unit.isBlank(), "measurement %s.unit: must be given", name);
      checkArgument(samples != null && samples.length > 0,
          "measurement %s.samples: at least one", name);
      samples = samples.clone();
      for (int i = 0; i < samples.length; i++) {
        checkArgument(Double.isFinite(samples[i]) && samples[i] > 0,
            "measurement %s.samples[%s]: must be finite and positive, got %s", name, i,
            samples[i]);
      }
    }

    /** The median of the repeats. */
    public double median() {
      return io.hyperframes.stat.Quantile.median(samples);
    }

    /** The smallest repeat. */
    public double low() {
      return Arrays.stream(samples).min().orElseThrow();
    }

    /** The largest repeat. */
    public double high() {
      return Arrays.stream(samples).max().orElseThrow();
    }

    /** (high − low) / median: the spread of the repeats. */
    public double spread() {
      return (high() - low()) / median();
    }

    @Override
    public double[] samples() {
      return samples.clone();
    }

    @Override
    public boolean equals(Object o) {
      return o instanceof Measurement m && name.equals(m.name) && unit.equals(m.unit)
          && Arrays.equals(samples, m.samples);
    }

    @Override
    public int hashCode() {
      return 31 * (31 * name.hashCode() + unit.hashCode()) + Arrays.hashCode(samples);
    }

    @Override
    public String toString() {
      return String.format(Locale.ROOT, "%s: median %.6g %s (%.6g-%.6g, %d repeats)", name,
          median(), unit, low(), high(), samples.length);
    }
  }

  private final Map<String, String> conditions;
  private final List<Measurement> measurements;
  private final CatalogFile catalog;
  private final Accelerator accelerator;

  private MachineProfile(Map<String, String> conditions, List<Measurement> measurements,
      CatalogFile catalog) {
    checkArgument(catalog.accelerators() != null && catalog.accelerators().size() == 1,
        "profile.catalog.accelerators: a profile describes exactly one accelerator");
    checkArgument(catalog.nodes() != null && catalog.nodes().size() == 1,
        "profile.catalog.nodes: a profile describes exactly one node");
    this.conditions = ImmutableSortedMap.copyOf(conditions);
    this.measurements = ImmutableList.copyOf(measurements);
    this.catalog = catalog;
    // Resolve once so that a malformed catalog section fails here, naming its field.
    this.accelerator = Catalog.builtIn().withOverrides(catalog)
        .accelerator("profile.catalog.accelerators", catalog.accelerators().get(0).id());
  }

  /** What the probe ran under (hardware, OS, JVM, backend, ISA), sorted by name. */
  public Map<String, String> conditions() {
    return conditions;
  }

  /** Every measurement, in the order taken. */
  public List<Measurement> measurements() {
    return measurements;
  }

  /** The profiled host as the planner sees it: peaks, bandwidth and fitted kernel constants. */
  public Accelerator accelerator() {
    return accelerator;
  }

  /** The id of the profiled accelerator, as a request's {@code cluster.accelerator} names it. */
  public String acceleratorId() {
    return catalog.accelerators().get(0).id().toLowerCase(Locale.ROOT);
  }

  /** The id of the profiled node template ({@code cluster.template}). */
  public String nodeId() {
    return catalog.nodes().get(0).id().toLowerCase(Locale.ROOT);
  }

  /** {@code base} with this profile's accelerator, node, fabric and kernel constants added. */
  public Catalog applyTo(Catalog base) {
    checkArgument(base != null, "catalog: must be given");
    return base.withOverrides(catalog);
  }

  /** The measurement of that name, if taken. */
  public Optional<Measurement> measurement(String name) {
    return measurements.stream().filter(m -> m.name().equals(name)).findFirst();
  }

  /** The profile as its JSON document. */
  public String toJson() {
    ObjectNode root = Json.mapper().createObjectNode();
    root.put("schema", SCHEMA);
    ObjectNode c = root.putObject("conditions");
    conditions.forEach(c::put);
    ArrayNode ms = root.putArray("measurements");
    for (Measurement m : measurements) {
      ObjectNode o = ms.addObject();
      o.put("name", m.name());
      o.put("unit", m.unit());
      o.put("median", m.median());
      o.put("low", m.low());
      o.put("high", m.high());
      ArrayNode s = o.putArray("samples");
      for (double v : m.samples) {
        s.add(v);
      }
    }
    root.set("catalog", Json.tree(catalog));
    try {
      return Json.mapper().writerWithDefaultPrettyPrinter().writeValueAsString(root);
    } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
      throw new IllegalStateException(e);
    }
  }

  /** Writes {@link #toJson} to {@code file}. */
  public void write(Path file) {
    checkArgument(file != null, "profile: file must be given");
    try {
      Files.writeString(file, toJson(), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException("profile: cannot write " + file, e);
    }
  }

  /**
   * Reads a profile document.
   *
   * @throws IllegalArgumentException naming the field when it is malformed
   */
  public static MachineProfile parse(String json) {
    JsonNode root = Json.parseObject("profile", json);
    String schema = root.path("schema").asText(null);
    checkArgument(SCHEMA.equals(schema), "profile.schema: expected %s, got %s", SCHEMA, schema);
    Map<String, String> conditions = new TreeMap<>();
    root.path("conditions").properties().forEach(e ->
        conditions.put(e.getKey(), e.getValue().asText()));
    List<Measurement> ms = new ArrayList<>();
    JsonNode list = root.path("measurements");
    checkArgument(list.isArray(), "profile.measurements: must be an array");
    for (int i = 0; i < list.size(); i++) {
      JsonNode m = list.get(i);
      JsonNode s = m.path("samples");
      checkArgument(s.isArray() && !s.isEmpty(),
          "profile.measurements[%s].samples: must be a non-empty array", i);
      double[] samples = new double[s.size()];
      for (int j = 0; j < samples.length; j++) {
        checkArgument(s.get(j).isNumber(),
            "profile.measurements[%s].samples[%s]: must be a number, got %s", i, j, s.get(j));
        samples[j] = s.get(j).asDouble();
      }
      ms.add(new Measurement(m.path("name").asText(null), m.path("unit").asText(null),
          samples));
    }
    JsonNode cat = root.path("catalog");
    checkArgument(cat.isObject(), "profile.catalog: must be an object");
    CatalogFile catalog = Json.bind(cat, CatalogFile.class, "profile.catalog");
    return new MachineProfile(conditions, ms, catalog);
  }

  /** Reads a profile file; see {@link #parse}. */
  public static MachineProfile read(Path file) {
    checkArgument(file != null, "profile: file must be given");
    try {
      return parse(Files.readString(file, StandardCharsets.UTF_8));
    } catch (IOException e) {
      throw new IllegalArgumentException("profile: cannot read " + file + ": " + e.getMessage(),
          e);
    }
  }

  /**
   * A spec-sheet description of a CPU host, for comparison with a measured profile: peak =
   * cores × clock × FLOPs per cycle per core, 32 in FP32 for two 256-bit FMA pipes (AVX2 + FMA3,
   * every x86 core since Haswell and Zen 2: 2 FMA × 8 lanes × 2 FLOPs), twice that in BF16
   * where the core has {@code avx512_bf16} dot products ({@code VDPBF16PS}: two BF16 products
   * per FP32 lane), else BF16 at the FP32 rate (widened); the catalog's uncalibrated matmul
   * prior (0.76, no half dimensions: a CPU matmul has no GPU wave quantization), memory
   * bandwidth of one DDR4-3200 channel (3200 MT/s × 8 bytes = 25.6 GB/s, JEDEC JESD79-4) at
   * the catalog's 0.85 streaming fraction, no per-layer overhead.
   * FLOPs per cycle: Intel 64 and IA-32 Architectures Optimization Reference Manual (FMA
   * throughput of two per cycle on ports 0 and 1); AMD Software Optimization Guide for Family
   * 19h (two FMA pipes).
   *
   * @param id the accelerator id to give it
   * @param cores cores used
   * @param clockGhz nominal clock
   * @param bf16Dot whether the cores have {@code avx512_bf16}
   * @param memoryBytes host memory
   * @return a profile without measurements whose accelerator is the spec-sheet figure
   */
  public static MachineProfile genericCpu(String id, int cores, double clockGhz,
      boolean bf16Dot, double memoryBytes) {
    checkId(id);
    Checks.positive("cores", cores);
    checkArgument(Double.isFinite(clockGhz) && clockGhz > 0 && clockGhz < 10,
        "clockGhz: must be in (0, 10), got %s", clockGhz);
    Checks.positive("memoryBytes", memoryBytes);
    double fp32 = cores * clockGhz * 1e9 * 32;
    Map<String, Double> peak = new LinkedHashMap<>();
    peak.put(NumberFormat.FP32.id(), fp32 / 1e12);
    peak.put(NumberFormat.BF16.id(), (bf16Dot ? 2 : 1) * fp32 / 1e12);
    String source = String.format(Locale.ROOT,
        "spec sheet: %d cores x %.2f GHz x 32 FP32 FLOPs/cycle%s; one DDR4-3200 channel",
        cores, clockGhz, bf16Dot ? " (x2 in BF16, avx512_bf16)" : "");
    Map<String, String> conditions = new TreeMap<>();
    conditions.put("source", source);
    return new MachineProfile(conditions, List.of(), hostCatalog(id, "generic CPU (" + cores
        + " cores)", peak, memoryBytes, 25.6e9, 0.85, Map.of(), 25.6e9, cores, source));
  }

  static CatalogFile hostCatalog(String id, String name, Map<String, Double> peakTflops,
      double memoryBytes, double bandwidthBytesPerSecond, double memoryEfficiency,
      Map<NumberFormat, KernelEfficiency> kernels, double copyBytesPerSecond, int cores,
      String source) {
    String generation = "profile:" + id;
    String fabric = id + "-memory";
    String node = id + "-node";
    KernelEfficiency base = kernels.getOrDefault(NumberFormat.FP32,
        new KernelEfficiency(0.76, 0, 0, 0, 0, 0, source));
    CatalogFile.AcceleratorEntry acc = new CatalogFile.AcceleratorEntry(id, name, peakTflops,
        memoryBytes / (1L << 30), bandwidthBytesPerSecond / 1e9, 0.0, base.matmul(),
        base.halfDim(), base.halfRows(), memoryEfficiency, 0.0, fabric, node, false, generation,
        source);
    CatalogFile.FabricEntry link = new CatalogFile.FabricEntry(fabric,
        copyBytesPerSecond / 1e9, 1.0, 1.0, 1.0, 0.0, 0.0,
        "host memory copy bandwidth (a single-device host has no device link): " + source);
    CatalogFile.NodeEntry n = new CatalogFile.NodeEntry(node, id, 1, 1, fabric,
        cores, memoryBytes / (1L << 30),
        "this host as one device: " + source, "this host", null);
    List<CatalogFile.KernelEntry> ks = new ArrayList<>();
    kernels.forEach((format, k) -> ks.add(new CatalogFile.KernelEntry(generation, null,
        List.of(format.id()), k.matmul(), k.halfDim(), k.halfRows(), 0.0,
        k.layerOverheadSeconds() * 1e6, 0.0, null, null, null, k.optimizerBandwidthFraction(),
        null, null, null, k.source())));
    return new CatalogFile(null, "fitted by hyperframes probe", List.of(link), List.of(acc),
        List.of(n), null, null, ks.isEmpty() ? null : ks, null);
  }

  /**
   * Builds a profile from raw measurements and fits its catalog entries.
   *
   * @param id the accelerator id the profile will give the host ("host")
   */
  public static Builder builder(String id) {
    return new Builder(checkId(id));
  }

  private static String checkId(String id) {
    checkArgument(id != null && id.matches("[a-z0-9][a-z0-9._-]{0,63}"),
        "id: must be 1-64 lower-case letters, digits, '.', '_' or '-', got '%s'", id);
    return id;
  }

  /** Collects a probe's measurements; {@link #build} fits the catalog entries from them. */
  public static final class Builder {
    private final String id;
    private final Map<String, String> conditions = new TreeMap<>();
    private final List<Measurement> measurements = new ArrayList<>();
    private final List<ProfileFit.MatmulSample> matmuls = new ArrayList<>();
    private final List<ProfileFit.LayerSample> layers = new ArrayList<>();
    private String name;
    private double memoryBytes;
    private double triad;
    private double copy;
    private long optimizerParameters;
    private double optimizerSeconds;

    private Builder(String id) {
      this.id = id;
    }

    /** The host's name (its CPU model). */
    public Builder name(String value) {
      checkState(name == null, "name: already set to %s", name);
      checkArgument(value != null && !value.isBlank(), "name: must be given");
      name = value;
      return this;
    }

    /** The host memory in bytes. */
    public Builder memoryBytes(double bytes) {
      checkState(memoryBytes == 0, "memoryBytes: already set to %s", memoryBytes);
      memoryBytes = Checks.positive("memoryBytes", bytes);
      return this;
    }

    /** Conditions the probe ran under, merged over earlier ones. */
    public Builder conditions(Map<String, String> values) {
      checkArgument(values != null, "conditions: must be given");
      conditions.putAll(values);
      return this;
    }

    /**
     * A matmul of m×k by k×n in {@code format} (FP32 accumulation), timed {@code seconds}
     * per call in each repeat.
     */
    public Builder matmul(NumberFormat format, int m, int n, int k, double[] seconds) {
      checkArgument(format != null, "format: must be given");
      Checks.positive("m", m);
      Checks.positive("n", n);
      Checks.positive("k", k);
      Measurement meas = new Measurement(String.format(Locale.ROOT, "matmul.%s.%dx%dx%d",
          format.id(), m, n, k), "s", seconds);
      measurements.add(meas);
      matmuls.add(new ProfileFit.MatmulSample(format, m, n, k, meas.median()));
      return this;
    }

    /**
     * A streaming kernel: {@code bytes} moved per pass (STREAM counting: reads plus writes),
     * timed {@code seconds} per pass in each repeat; {@code kind} "copy" or "triad".
     */
    public Builder stream(String kind, double bytes, double[] seconds) {
      checkArgument("copy".equals(kind) || "triad".equals(kind),
          "kind: expected copy or triad, got %s", kind);
      Checks.positive("bytes", bytes);
      Measurement t = new Measurement("memory." + kind + ".seconds", "s", seconds);
      double[] gbps = Arrays.stream(t.samples()).map(s -> bytes / s / 1e9).toArray();
      Measurement m = new Measurement("memory." + kind, "GB/s", gbps);
      measurements.add(m);
      if (kind.equals("triad")) {
        triad = m.median() * 1e9;
      } else {
        copy = m.median() * 1e9;
      }
      return this;
    }

    /**
     * A fused dense layer (matmul + bias + activation) of {@code batch} rows, {@code in} to
     * {@code out} features in {@code format}: seconds of its forward and of its backward pass.
     */
    public Builder denseLayer(NumberFormat format, int batch, int in, int out,
        double[] forwardSeconds, double[] backwardSeconds) {
      checkArgument(format != null, "format: must be given");
      Checks.positive("batch", batch);
      Checks.positive("in", in);
      Checks.positive("out", out);
      String shape = String.format(Locale.ROOT, "%s.%dx%dx%d", format.id(), batch, in, out);
      Measurement f = new Measurement("dense.forward." + shape, "s", forwardSeconds);
      Measurement b = new Measurement("dense.backward." + shape, "s", backwardSeconds);
      measurements.add(f);
      measurements.add(b);
      layers.add(new ProfileFit.LayerSample(format, batch, in, out, f.median() + b.median()));
      return this;
    }

    /**
     * One Adam step over {@code parameters} FP32 parameters (the gradient read, the master
     * weights and both moments read and written), timed {@code seconds} per step in each
     * repeat, as a training step runs it: right after the backward pass's last kernel. It fits
     * the kernels' {@link KernelEfficiency#optimizerBandwidthFraction}: the bytes the estimator
     * counts for that step ({@link #ADAM_FP32_BYTES} per parameter) over the median time,
     * relative to the triad bandwidth, at most 1.
     */
    public Builder optimizer(long parameters, double[] seconds) {
      checkArgument(parameters > 0, "parameters: must be > 0, got %s", parameters);
      checkState(optimizerParameters == 0, "optimizer: already measured");
      Measurement m = new Measurement("optimizer.adam.fp32." + parameters, "s", seconds);
      measurements.add(m);
      optimizerParameters = parameters;
      optimizerSeconds = m.median();
      return this;
    }

    /** Any other measurement (loader throughput, host-to-device copies), recorded as is. */
    public Builder measurement(Measurement m) {
      checkArgument(m != null, "measurement: must be given");
      measurements.add(m);
      return this;
    }

    /**
     * Fits the catalog entries and returns the profile.
     *
     * @throws IllegalStateException when no matmul or no triad was measured
     */
    public MachineProfile build() {
      checkState(!matmuls.isEmpty(), "no matmul measured");
      checkState(triad > 0, "no triad measured");
      checkState(memoryBytes > 0, "memoryBytes: not set");
      Map<NumberFormat, ProfileFit.Result> fits = ProfileFit.fit(matmuls, layers, triad);
      Map<String, Double> peak = new LinkedHashMap<>();
      Map<NumberFormat, KernelEfficiency> kernels = new LinkedHashMap<>();
      String date = java.time.LocalDate.now(java.time.ZoneOffset.UTC).toString();
      double optimizerFraction = optimizerParameters == 0 ? 1.0
          : Math.min(1.0, ADAM_FP32_BYTES * optimizerParameters / optimizerSeconds / triad);
      String optimizerSource = optimizerParameters == 0 ? ""
          : String.format(Locale.ROOT, "; optimizer at %.3f of the triad bandwidth (an Adam"
              + " step of %d FP32 parameters in %.3g ms)", optimizerFraction,
              optimizerParameters, optimizerSeconds * 1e3);
      for (Map.Entry<NumberFormat, ProfileFit.Result> e : fits.entrySet()) {
        ProfileFit.Result r = e.getValue();
        peak.put(e.getKey().id(), r.peakFlopsPerSecond() / 1e12);
        kernels.put(e.getKey(), new KernelEfficiency(r.efficiency(), r.halfDim(),
            r.halfRows(), 0.0, r.layerOverheadSeconds(), 0.0, String.format(Locale.ROOT,
                "hyperframes probe %s: fitted on %d matmul shapes (rms log error %.3f) and %d"
                    + " fused dense layers%s", date, r.shapes(), r.rmsLogError(), r.layers(),
                optimizerSource)).withOptimizerBandwidthFraction(optimizerFraction));
      }
      String source = "hyperframes probe " + date + " on " + (name == null ? "this host" : name);
      CatalogFile catalog = hostCatalog(id, (name == null ? "this host" : name) + " (measured)",
          peak, memoryBytes, triad, 1.0, kernels, copy > 0 ? copy : triad,
          Runtime.getRuntime().availableProcessors(), source);
      return new MachineProfile(conditions, measurements, catalog);
    }
  }
}
