package io.hyperframes.inference;

import com.fasterxml.jackson.databind.JsonNode;
import io.hyperframes.json.Json;
import io.hyperframes.trace.Csv;
import java.util.ArrayList;
import java.util.List;

/**
 * The length fields of a serving request ({@code workload.promptTokens},
 * {@code workload.outputTokens}): a whole number of tokens, or where an engine's scheduler runs
 * the server (capacity mode, slo mode with {@code workload.engine}) a distribution or a trace.
 */
final class LengthFields {
  private LengthFields() {}

  /** Bins a trace's lengths are summarised in ({@link LengthDistribution#ofSamples}). */
  static final int TRACE_GROUPS = 64;

  /**
   * Lengths read from a CSV trace, {@code {"trace": FILE, "column": NAME}}: every row's
   * {@code column} (default: the Azure LLM inference traces' {@code ContextTokens} for prompts,
   * {@code GeneratedTokens} for outputs; docs/validation/azure-llm), rows of 0 tokens left out,
   * summarised in {@link #TRACE_GROUPS} bins. A relative path is read from the working
   * directory; {@code traces} holds the files already read for this request. Prompt and output
   * lengths are read as two distributions (their pairing in the trace is not kept).
   */
  static LengthDistribution traceLengths(String field, JsonNode node,
      java.util.Map<java.nio.file.Path, Csv> traces) {
    for (java.util.Iterator<String> names = node.fieldNames(); names.hasNext(); ) {
      String name = names.next();
      if (!name.equals("trace") && !name.equals("column")) {
        throw new IllegalArgumentException(field + "." + name + ": unknown field (a trace has"
            + " trace and column)");
      }
    }
    JsonNode file = node.get("trace");
    if (!file.isTextual() || file.asText().isBlank()) {
      throw new IllegalArgumentException(field + ".trace: must be a file path, got " + file);
    }
    JsonNode columnNode = node.get("column");
    if (columnNode != null && (!columnNode.isTextual() || columnNode.asText().isBlank())) {
      throw new IllegalArgumentException(field + ".column: must be a column name, got "
          + columnNode);
    }
    String column = columnNode != null ? columnNode.asText()
        : field.endsWith("promptTokens") ? "ContextTokens" : "GeneratedTokens";
    java.nio.file.Path path;
    try {
      path = java.nio.file.Path.of(file.asText());
    } catch (java.nio.file.InvalidPathException e) {
      throw new IllegalArgumentException(field + ".trace: not a file path: " + file.asText(), e);
    }
    if (!java.nio.file.Files.isRegularFile(path)) {
      throw new IllegalArgumentException(field + ".trace: no such file " + path + " (a relative"
          + " path is read from the working directory)");
    }
    Csv csv = traces.computeIfAbsent(path, Csv::open);
    csv.require(column);
    int[] lengths = new int[csv.rows().size()];
    int n = 0;
    for (Csv.Row row : csv.rows()) {
      long tokens = csv.integer(row, column, 0, LengthDistribution.MAX_TOKENS);
      if (tokens > 0) {
        lengths[n++] = (int) tokens;
      }
    }
    if (n == 0) {
      throw new IllegalArgumentException(field + ".trace: " + path + " has no row with "
          + column + " > 0");
    }
    return LengthDistribution.ofSamples(field, java.util.Arrays.copyOf(lengths, n),
        TRACE_GROUPS);
  }

  /**
   * A length field: a whole number ≥ 1, or with {@code distribution} allowed a list of
   * {@code [tokens, weight]} pairs or {@code {"tokens", "weight"}} objects.
   */
  static LengthDistribution lengths(String field, JsonNode node, boolean distribution,
      java.util.Map<java.nio.file.Path, Csv> traces) {
    Json.required(field, node);
    if (node.isIntegralNumber()) {
      if (!node.canConvertToInt() || node.asInt() < 1) {
        throw new IllegalArgumentException(field + ": must be > 0, got " + node);
      }
      return LengthDistribution.of(field, List.of(new LengthDistribution.Bin(node.asInt(),
          1.0)));
    }
    if (node.isObject() && node.has("trace")) {
      if (!distribution) {
        throw new IllegalArgumentException(field + ": a trace needs workload.mode capacity, or"
            + " workload.engine in mode slo; give a whole number of tokens otherwise");
      }
      return traceLengths(field, node, traces);
    }
    if (!node.isArray()) {
      throw new IllegalArgumentException(field + ": must be a whole number of tokens"
          + (distribution ? ", a list of [tokens, weight] or {\"trace\": file}" : "") + ", got "
          + node);
    }
    if (!distribution) {
      throw new IllegalArgumentException(field + ": a length distribution needs workload.mode"
          + " capacity, or workload.engine in mode slo; give a whole number of tokens otherwise");
    }
    List<LengthDistribution.Bin> bins = new ArrayList<>();
    for (int i = 0; i < node.size(); i++) {
      JsonNode e = node.get(i);
      JsonNode tokens = e.isArray() && e.size() == 2 ? e.get(0) : e.isObject() ? e.get("tokens")
          : null;
      JsonNode weight = e.isArray() && e.size() == 2 ? e.get(1) : e.isObject() ? e.get("weight")
          : null;
      if (tokens == null || weight == null || !tokens.isIntegralNumber() || !tokens.canConvertToInt()
          || !weight.isNumber()) {
        throw new IllegalArgumentException(field + "[" + i + "]: must be [tokens, weight] or"
            + " {\"tokens\": n, \"weight\": w} with whole tokens, got " + e);
      }
      bins.add(new LengthDistribution.Bin(tokens.asInt(), weight.asDouble()));
    }
    return LengthDistribution.of(field, bins);
  }
}
