package io.hyperframes.runtime;

import static com.google.common.base.Preconditions.checkArgument;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.google.common.collect.ImmutableSortedMap;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

/**
 * A benchmark run as data: the conditions it ran under and every raw sample of every metric, in
 * a versioned JSON document ({@value #SCHEMA}: top-level {@code schema}, {@code conditions},
 * {@code metrics}). Two records are compared with {@link Comparison#of}.
 *
 * @param schema the document version, {@value #SCHEMA}
 * @param conditions what the run ran under (hardware, OS, JVM, versions, configuration, batch,
 *     threads, seed, …), by name; sorted
 * @param metrics the measured metrics by name; sorted
 */
public record BenchmarkRecord(String schema, Map<String, String> conditions,
    Map<String, Metric> metrics) {

  /** The schema this class writes and reads. */
  public static final String SCHEMA = "hyperframes.benchmark/1";

  /**
   * One metric's raw samples.
   *
   * @param unit the samples' unit ("samples/s", "s")
   * @param higherIsBetter whether a larger value is an improvement (throughput) or not (latency)
   * @param samples every sample, finite, at least one
   */
  public record Metric(String unit, boolean higherIsBetter, double[] samples) {
    public Metric {
      checkArgument(unit != null, "metric unit: must be given");
      checkArgument(samples != null && samples.length > 0, "metric samples: at least one");
      samples = samples.clone();
      for (int i = 0; i < samples.length; i++) {
        checkArgument(Double.isFinite(samples[i]), "metric samples[%s]: must be finite, got %s",
            (Object) i, samples[i]);
      }
    }

    /** The median of the samples. */
    public double median() {
      return io.hyperframes.stat.Quantile.median(samples);
    }

    @Override
    public double[] samples() {
      return samples.clone();
    }

    @Override
    public boolean equals(Object o) {
      return o instanceof Metric m && unit.equals(m.unit) && higherIsBetter == m.higherIsBetter
          && Arrays.equals(samples, m.samples);
    }

    @Override
    public int hashCode() {
      return 31 * (31 * unit.hashCode() + Boolean.hashCode(higherIsBetter))
          + Arrays.hashCode(samples);
    }

    @Override
    public String toString() {
      return String.format(Locale.ROOT, "Metric[%s, %s, %d samples, median %.6g]", unit,
          higherIsBetter ? "higher is better" : "lower is better", samples.length, median());
    }
  }

  public BenchmarkRecord {
    checkArgument(SCHEMA.equals(schema), "schema: expected %s, got %s", SCHEMA, schema);
    checkArgument(conditions != null, "conditions: must be given");
    checkArgument(metrics != null && !metrics.isEmpty(), "metrics: at least one metric");
    conditions = ImmutableSortedMap.copyOf(conditions);
    metrics = ImmutableSortedMap.copyOf(metrics);
  }

  /**
   * The conditions of this process that every record should carry: OS, architecture, JVM and
   * its flags, available processors and maximum heap; merge the run's own (batch, threads,
   * configuration, library versions) over them.
   */
  public static Map<String, String> hostConditions() {
    Map<String, String> c = new TreeMap<>();
    c.put("os", System.getProperty("os.name") + " " + System.getProperty("os.version"));
    c.put("arch", System.getProperty("os.arch"));
    c.put("jvm", System.getProperty("java.vm.name") + " " + System.getProperty("java.version"));
    c.put("jvmFlags", String.join(" ",
        java.lang.management.ManagementFactory.getRuntimeMXBean().getInputArguments()));
    c.put("processors", Integer.toString(Runtime.getRuntime().availableProcessors()));
    c.put("maxHeapBytes", Long.toString(Runtime.getRuntime().maxMemory()));
    return c;
  }

  /**
   * A record of the steps a {@link StepMeter} measured: {@code prefix + "stepSeconds"} (lower is
   * better) and {@code prefix + "samplesPerSecond"} (per step, higher is better), each with
   * every step's value, merged into {@code metrics}.
   *
   * @throws IllegalArgumentException when the meter measured no step
   */
  public static void addSteps(Map<String, Metric> metrics, String prefix, StepMeter meter) {
    checkArgument(metrics != null && prefix != null && meter != null,
        "metrics, prefix and meter: must be given");
    double[] seconds = meter.stepSeconds();
    checkArgument(seconds.length > 0, "meter %s: no step measured", prefix);
    metrics.put(prefix + "stepSeconds", new Metric("s", false, seconds));
    metrics.put(prefix + "samplesPerSecond", new Metric("samples/s", true,
        meter.stepSamplesPerSecond()));
  }

  /** The record as its JSON document. */
  public String toJson() {
    ObjectMapper mapper = new ObjectMapper();
    ObjectNode root = mapper.createObjectNode();
    root.put("schema", schema);
    ObjectNode c = root.putObject("conditions");
    conditions.forEach(c::put);
    ObjectNode m = root.putObject("metrics");
    metrics.forEach((name, metric) -> {
      ObjectNode o = m.putObject(name);
      o.put("unit", metric.unit());
      o.put("higherIsBetter", metric.higherIsBetter());
      ArrayNode s = o.putArray("samples");
      for (double v : metric.samples) {
        s.add(v);
      }
    });
    try {
      return mapper.writerWithDefaultPrettyPrinter().writeValueAsString(root);
    } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
      throw new IllegalStateException(e);
    }
  }

  /** Writes {@link #toJson()} to {@code file}. */
  public void write(Path file) {
    try {
      Files.writeString(file, toJson(), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /**
   * Reads a record document.
   *
   * @throws IllegalArgumentException naming the field and the value when it is malformed
   */
  public static BenchmarkRecord parse(String json) {
    checkArgument(json != null, "record: must be given");
    JsonNode root;
    try {
      root = new ObjectMapper().readTree(json);
    } catch (IOException e) {
      throw new IllegalArgumentException("record: malformed JSON: " + e.getMessage(), e);
    }
    checkArgument(root != null && root.isObject(), "record: must be a JSON object");
    JsonNode schema = root.get("schema");
    checkArgument(schema != null && schema.isTextual(), "schema: must be a string, got %s",
        schema);
    JsonNode c = root.get("conditions");
    checkArgument(c != null && c.isObject(), "conditions: must be an object, got %s", c);
    Map<String, String> conditions = new TreeMap<>();
    for (Map.Entry<String, JsonNode> e : c.properties()) {
      conditions.put(e.getKey(), e.getValue().isTextual() ? e.getValue().asText()
          : e.getValue().toString());
    }
    JsonNode m = root.get("metrics");
    checkArgument(m != null && m.isObject(), "metrics: must be an object, got %s", m);
    Map<String, Metric> metrics = new TreeMap<>();
    for (Map.Entry<String, JsonNode> e : m.properties()) {
      String p = "metrics." + e.getKey();
      JsonNode o = e.getValue();
      checkArgument(o.isObject(), "%s: must be an object", p);
      checkArgument(o.path("unit").isTextual(), "%s.unit: must be a string, got %s", p,
          o.get("unit"));
      checkArgument(o.path("higherIsBetter").isBoolean(),
          "%s.higherIsBetter: must be true or false, got %s", p, o.get("higherIsBetter"));
      JsonNode s = o.get("samples");
      checkArgument(s != null && s.isArray() && s.size() > 0,
          "%s.samples: must be a non-empty array, got %s", p, s);
      double[] samples = new double[s.size()];
      for (int i = 0; i < samples.length; i++) {
        checkArgument(s.get(i).isNumber(), "%s.samples[%s]: must be a number, got %s", p, i,
            s.get(i));
        samples[i] = s.get(i).asDouble();
      }
      metrics.put(e.getKey(), new Metric(o.get("unit").asText(),
          o.get("higherIsBetter").asBoolean(), samples));
    }
    return new BenchmarkRecord(schema.asText(), conditions, metrics);
  }

  /** Reads the record in {@code file} ({@link #parse}). */
  public static BenchmarkRecord read(Path file) {
    try {
      return parse(Files.readString(file, StandardCharsets.UTF_8));
    } catch (IOException e) {
      throw new IllegalArgumentException("record: cannot read " + file + ": " + e.getMessage(),
          e);
    }
  }
}
