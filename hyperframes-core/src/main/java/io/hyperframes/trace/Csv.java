package io.hyperframes.trace;

import static com.google.common.base.Preconditions.checkArgument;

import java.io.BufferedReader;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * A small CSV reader for the traces the serving and scheduling layers read: a header row,
 * comma-separated fields, no quoting (as those traces). Every bad field is an
 * {@code IllegalArgumentException} naming the file, line, column and value.
 */
public final class Csv {
  private final Path file;
  private final Map<String, Integer> columns = new HashMap<>();
  private final List<Row> rows = new ArrayList<>();
  private String header;

  /** One data row and the line it is on. */
  public record Row(int line, String[] fields) {}

  private Csv(Path file) {
    this.file = file;
  }

  public static Csv open(Path file, String... required) {
    checkArgument(file != null, "trace: file must be given");
    Csv c = new Csv(file);
    try (BufferedReader in = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
      String header = in.readLine();
      checkArgument(header != null, "%s: empty file, expected a header row", file);
      c.header = header;
      String[] names = header.strip().split(",", -1);
      for (int i = 0; i < names.length; i++) {
        c.columns.put(names[i].strip(), i);
      }
      c.require(required);
      String line;
      int n = 1;
      while ((line = in.readLine()) != null) {
        n++;
        if (line.isBlank()) {
          continue;
        }
        String[] fields = line.split(",", -1);
        if (fields.length != names.length) {
          throw new IllegalArgumentException(String.format("%s:%d: %d fields, the header has"
              + " %d", file, n, fields.length, names.length));
        }
        c.rows.add(new Row(n, fields));
      }
    } catch (IOException e) {
      throw new IllegalArgumentException("trace: cannot read " + file + ": " + e.getMessage(),
          e);
    }
    return c;
  }

  public List<Row> rows() {
    return rows;
  }

  /** Every row's {@code column} as UTC microseconds since the epoch, read with {@code f}. */
  public long[] micros(String column, java.time.format.DateTimeFormatter f, String expected) {
    long[] out = new long[rows.size()];
    for (int i = 0; i < out.length; i++) {
      Row row = rows.get(i);
      String t = text(row, column, false);
      try {
        java.time.Instant at = java.time.LocalDateTime.parse(t, f)
            .toInstant(java.time.ZoneOffset.UTC);
        out[i] = at.getEpochSecond() * 1_000_000L + at.getNano() / 1000;
      } catch (java.time.format.DateTimeParseException e) {
        throw error(row, column, "must be " + expected + ", got '" + t + "'");
      }
    }
    return out;
  }

  /** Checks that the header names every one of {@code columns}. */
  public void require(String... columns) {
    for (String r : columns) {
      checkArgument(this.columns.containsKey(r), "%s:1: missing column '%s' (header: %s)", file,
          r, header);
    }
  }

  public boolean has(String column) {
    return columns.containsKey(column);
  }

  public String text(Row row, String column, boolean emptyAllowed) {
    String v = row.fields()[columns.get(column)].strip();
    if (v.isEmpty() && !emptyAllowed) {
      throw error(row, column, "must not be empty");
    }
    return v;
  }

  public long integer(Row row, String column, long min, long max) {
    String v = text(row, column, false);
    long value;
    try {
      value = Long.parseLong(v);
    } catch (NumberFormatException e) {
      try {
        double d = Double.parseDouble(v);
        if (d != Math.rint(d)) {
          throw error(row, column, "must be an integer, got '" + v + "'");
        }
        value = (long) d;
      } catch (NumberFormatException e2) {
        throw error(row, column, "must be an integer, got '" + v + "'");
      }
    }
    if (value < min || value > max) {
      throw error(row, column, "must be in [" + min + ", " + max + "], got " + value);
    }
    return value;
  }

  public double number(Row row, String column) {
    String v = text(row, column, false);
    double d;
    try {
      d = Double.parseDouble(v);
    } catch (NumberFormatException e) {
      throw error(row, column, "must be a number, got '" + v + "'");
    }
    if (!Double.isFinite(d)) {
      throw error(row, column, "must be finite, got '" + v + "'");
    }
    return d;
  }

  public IllegalArgumentException error(Row row, String column, String message) {
    return new IllegalArgumentException(String.format("%s:%d: column %s (%d): %s", file,
        row.line(), column, columns.get(column) + 1, message));
  }
}
