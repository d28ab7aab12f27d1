package io.hyperframes.schedule;

import static com.google.common.base.Preconditions.checkArgument;

import com.fasterxml.jackson.databind.JsonNode;
import io.hyperframes.json.Json;
import io.hyperframes.trace.Csv;
import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * What a training application does on a cluster, as measured and tabulated by the Pollux
 * artifact (Qiao et al., OSDI 2021, §5.3 "Simulator construction"; {@code petuum/adaptdl}
 * branch {@code osdi21-artifact}, {@code simulator/traces/APP/}):
 * <ul>
 *   <li>{@code placements.csv} ({@code placement, local_bsz, step_time, sync_time}): the
 *       measured step time and its synchronisation part for each placement of up to four nodes
 *       (a placement is the GPUs used on each node, {@code "124"} = 1, 2 and 4) and per-GPU
 *       batch size;</li>
 *   <li>{@code scalability.csv} ({@code num_nodes, num_replicas, local_bsz, step_time,
 *       sync_time}): the same for larger placements by node and GPU count;</li>
 *   <li>{@code validation-B.csv} ({@code progress, iteration, metric, grad_sqr, grad_var}), one
 *       per batch size B: per epoch the statistical progress reached and the gradient's squared
 *       norm and variance, from which the statistical efficiency of a batch size follows
 *       (Pollux §3.1, Eq. 6; McCandlish et al. 2018).</li>
 * </ul>
 * Between measurements it interpolates as the artifact's {@code applications.py} does: linearly
 * in the batch size within a measured placement, linearly over the Delaunay triangulation of
 * (nodes, GPUs, per-GPU batch) otherwise, linearly between the two nearest measured batch sizes
 * for gradient statistics.
 */
public final class ApplicationProfile {
  private static final Pattern VALIDATION = Pattern.compile("validation-(\\d+)\\.csv");

  private final String name;
  private final int maxEpochs;
  private final int minLocalBatch;
  private final int maxLocalBatch;
  private final int[] batchSizes;
  private final double[][] progress;
  private final double[][] gradSqr;
  private final double[][] gradVar;
  private final Map<String, double[][]> byPlacement = new HashMap<>();
  private final Delaunay3 grid;
  private final int gridMaxNodes;

  private ApplicationProfile(String name, int maxEpochs, Integer maxLocalOverride, Path dir) {
    this.name = name;
    TreeMap<Integer, Path> validations = validationTables(name, dir);
    int n = validations.size();
    batchSizes = new int[n];
    progress = new double[n][];
    gradSqr = new double[n][];
    gradVar = new double[n][];
    int shortest = Integer.MAX_VALUE;
    int i = 0;
    for (Map.Entry<Integer, Path> e : validations.entrySet()) {
      Csv csv = Csv.open(e.getValue(), "progress", "grad_sqr", "grad_var");
      List<Csv.Row> rows = csv.rows();
      batchSizes[i] = e.getKey();
      progress[i] = rows.stream().mapToDouble(r -> csv.number(r, "progress")).toArray();
      gradSqr[i] = rows.stream().mapToDouble(r -> csv.number(r, "grad_sqr")).toArray();
      gradVar[i] = rows.stream().mapToDouble(r -> csv.number(r, "grad_var")).toArray();
      shortest = Math.min(shortest, rows.size());
      i++;
    }
    checkArgument(maxEpochs >= 1 && maxEpochs <= shortest,
        "application %s.maxEpochs: must be in [1, %s] (the shortest validation table), got %s",
        name, shortest, maxEpochs);
    this.maxEpochs = maxEpochs;

    Csv pl = Csv.open(dir.resolve("placements.csv"), "placement", "local_bsz",
        "step_time", "sync_time");
    Map<String, TreeMap<Long, double[]>> rowsByPlacement = new LinkedHashMap<>();
    // Grid points of the interpolation: the placements' means per (nodes, GPUs, batch), then
    // the scalability rows, as applications.py builds them.
    Map<List<Long>, double[]> means = new LinkedHashMap<>();
    Map<List<Long>, Integer> counts = new HashMap<>();
    long minLocal = Long.MAX_VALUE;
    long maxLocal = 0;
    for (Csv.Row r : pl.rows()) {
      String digits = pl.text(r, "placement", false);
      if (!digits.chars().allMatch(c -> c >= '1' && c <= '9')) {
        throw pl.error(r, "placement", "must be GPUs per node as digits 1-9, got '" + digits
            + "'");
      }
      long local = pl.integer(r, "local_bsz", 1, 1 << 15);
      double step = pl.number(r, "step_time");
      double sync = pl.number(r, "sync_time");
      rowsByPlacement.computeIfAbsent(key(digits), k -> new TreeMap<>())
          .put(local, new double[] {step, sync});
      long nodes = digits.length();
      long gpus = digits.chars().map(c -> c - '0').sum();
      List<Long> xs = List.of(nodes, gpus, local);
      means.merge(xs, new double[] {step, sync}, (a, b) -> new double[] {a[0] + b[0],
          a[1] + b[1]});
      counts.merge(xs, 1, Integer::sum);
      minLocal = Math.min(minLocal, local);
      maxLocal = Math.max(maxLocal, local);
    }
    checkArgument(!rowsByPlacement.isEmpty(), "application %s: placements.csv has no rows",
        name);
    rowsByPlacement.forEach((placement, rows) -> byPlacement.put(placement, columns(rows)));
    List<long[]> points = new ArrayList<>();
    List<double[]> values = new ArrayList<>();
    for (Map.Entry<List<Long>, double[]> e : means.entrySet()) {
      int c = counts.get(e.getKey());
      points.add(new long[] {e.getKey().get(0), e.getKey().get(1), e.getKey().get(2)});
      values.add(new double[] {e.getValue()[0] / c, e.getValue()[1] / c});
    }
    Csv sc = Csv.open(dir.resolve("scalability.csv"), "num_nodes",
        "num_replicas", "local_bsz", "step_time", "sync_time");
    long maxNodes = 0;
    for (Csv.Row r : sc.rows()) {
      long nodes = sc.integer(r, "num_nodes", 1, 1 << 10);
      points.add(new long[] {nodes, sc.integer(r, "num_replicas", 1, 1 << 12),
          sc.integer(r, "local_bsz", 1, 1 << 15)});
      values.add(new double[] {sc.number(r, "step_time"), sc.number(r, "sync_time")});
      maxNodes = Math.max(maxNodes, nodes);
    }
    this.gridMaxNodes = (int) Math.max(maxNodes, 4);
    this.grid = new Delaunay3(points.toArray(long[][]::new), values.toArray(double[][]::new));
    this.minLocalBatch = (int) minLocal;
    int maxL = maxLocalOverride == null ? (int) maxLocal : maxLocalOverride;
    checkArgument(maxL >= minLocal, "application %s.maxLocalBatch: must be >= %s, got %s", name,
        minLocal, maxL);
    this.maxLocalBatch = maxL;
    checkArgument(maxBatchSize() >= minLocalBatch, "application %s: largest validated batch %s"
        + " below the smallest per-GPU batch %s", name, maxBatchSize(), minLocalBatch);
  }

  /** The validation tables of an application, {@code validation-B.csv} by batch size B. */
  private static TreeMap<Integer, Path> validationTables(String name, Path dir) {
    TreeMap<Integer, Path> validations = new TreeMap<>();
    try (DirectoryStream<Path> ds = Files.newDirectoryStream(dir, "validation-*.csv")) {
      for (Path f : ds) {
        Matcher m = VALIDATION.matcher(f.getFileName().toString());
        if (m.matches()) {
          validations.put(Integer.parseInt(m.group(1)), f);
        }
      }
    } catch (IOException e) {
      throw new IllegalArgumentException("application " + name + ": cannot list " + dir + ": "
          + e.getMessage(), e);
    }
    checkArgument(!validations.isEmpty(), "application %s: no validation-B.csv in %s", name,
        dir);
    return validations;
  }

  /** One placement's rows by local batch as columns: local batch, step time, sync time. */
  private static double[][] columns(TreeMap<Long, double[]> rows) {
    double[][] table = new double[3][rows.size()];
    int k = 0;
    for (Map.Entry<Long, double[]> r : rows.entrySet()) {
      table[0][k] = r.getKey();
      table[1][k] = r.getValue()[0];
      table[2][k] = r.getValue()[1];
      k++;
    }
    return table;
  }

  /**
   * Reads the applications a JSON index lists: {@code {"applications": [{"name": "bert",
   * "maxEpochs": 2, "maxLocalBatch": 8?}, ...]}}, each from the directory
   * {@code traces/NAME/} beside the index (the layout of {@code docs/validation/pollux/}).
   */
  public static Map<String, ApplicationProfile> readAll(Path index) {
    checkArgument(index != null, "applications: index file must be given");
    JsonNode root;
    try {
      root = Json.mapper().readTree(index.toFile());
    } catch (IOException e) {
      throw new IllegalArgumentException("applications: cannot read " + index + ": "
          + e.getMessage(), e);
    }
    JsonNode list = root.path("applications");
    checkArgument(list.isArray() && !list.isEmpty(), "%s: 'applications' must be a non-empty"
        + " array", index);
    Path base = index.toAbsolutePath().getParent().resolve("traces");
    Map<String, ApplicationProfile> out = new LinkedHashMap<>();
    for (JsonNode a : list) {
      String name = a.path("name").asText("");
      checkArgument(!name.isBlank() && name.matches("[A-Za-z0-9_.-]+"),
          "%s: applications[].name must be a plain name, got '%s'", index, name);
      checkArgument(a.path("maxEpochs").canConvertToInt() && a.path("maxEpochs").isIntegralNumber(),
          "%s: application %s.maxEpochs must be an integer", index, name);
      Integer maxLocal = null;
      if (a.has("maxLocalBatch")) {
        checkArgument(a.get("maxLocalBatch").isIntegralNumber()
            && a.get("maxLocalBatch").asInt() >= 1, "%s: application %s.maxLocalBatch must be a"
            + " positive integer, got %s", index, name, a.get("maxLocalBatch"));
        maxLocal = a.get("maxLocalBatch").asInt();
      }
      checkArgument(!out.containsKey(name), "%s: application %s listed twice", index, name);
      out.put(name, new ApplicationProfile(name, a.get("maxEpochs").asInt(), maxLocal,
          base.resolve(name)));
    }
    return out;
  }

  /** Application name. */
  public String name() {
    return name;
  }

  /** Epochs to completion. */
  public int maxEpochs() {
    return maxEpochs;
  }

  /** The smallest validated batch size (the reference of statistical efficiency). */
  public int initBatchSize() {
    return batchSizes[0];
  }

  /** The largest validated batch size. */
  public int maxBatchSize() {
    return batchSizes[batchSizes.length - 1];
  }

  /** Smallest measured per-GPU batch. */
  public int minLocalBatch() {
    return minLocalBatch;
  }

  /** Largest per-GPU batch before gradient accumulation is needed. */
  public int maxLocalBatch() {
    return maxLocalBatch;
  }

  /**
   * Step time and its synchronisation part, in seconds, for {@code placement} (GPUs per node,
   * zeros ignored) at {@code localBatch} per GPU.
   *
   * @throws IllegalArgumentException outside the measurements
   */
  public double[] stepSeconds(int[] placement, double localBatch) {
    int[] pl = Arrays.stream(placement).filter(g -> g != 0).toArray();
    checkArgument(pl.length > 0, "placement: at least one GPU, got %s",
        Arrays.toString(placement));
    String id = smallestRotation(pl);
    double[][] t = byPlacement.get(id);
    if (t != null) {
      double[] x = t[0];
      checkArgument(localBatch >= x[0] && localBatch <= x[x.length - 1], "application %s:"
          + " per-GPU batch %s outside the measured [%s, %s] of placement %s", name, localBatch,
          x[0], x[x.length - 1], id);
      int k = Arrays.binarySearch(x, localBatch);
      if (k >= 0) {
        return new double[] {t[1][k], t[2][k]};
      }
      int hi = -k - 1;
      int lo = hi - 1;
      // scipy.interpolate.interp1d's linear rule: slope * (x - x_lo) + y_lo.
      double dx = localBatch - x[lo];
      return new double[] {(t[1][hi] - t[1][lo]) / (x[hi] - x[lo]) * dx + t[1][lo],
          (t[2][hi] - t[2][lo]) / (x[hi] - x[lo]) * dx + t[2][lo]};
    }
    int gpus = Arrays.stream(pl).sum();
    double[] v = grid.at(Math.min(pl.length, gridMaxNodes), gpus, localBatch);
    checkArgument(v != null, "application %s: placement %s at per-GPU batch %s is outside the"
        + " measured grid", name, Arrays.toString(pl), localBatch);
    return v;
  }

  /** Statistical progress at the end of {@code epoch} (0 before the first). */
  double progressAt(int epoch) {
    if (epoch == 0) {
      return 0;
    }
    double m = Double.POSITIVE_INFINITY;
    for (double[] p : progress) {
      m = Math.min(m, p[epoch - 1]);
    }
    return m;
  }

  /** Gradient squared norm and variance during {@code epoch} at {@code batch}. */
  double[] gradStats(double batch, int epoch) {
    checkArgument(batch >= batchSizes[0] && batch <= maxBatchSize(), "application %s: batch %s"
        + " outside the validated [%s, %s]", name, batch, batchSizes[0], maxBatchSize());
    int hi = 0;
    while (batchSizes[hi] < batch) {
      hi++;
    }
    if (batchSizes[hi] == batch) {
      return new double[] {gradSqr[hi][epoch], gradVar[hi][epoch]};
    }
    int lo = hi - 1;
    double a = batch - batchSizes[lo];
    double b = batchSizes[hi] - batch;
    double span = batchSizes[hi] - batchSizes[lo];
    return new double[] {(a * gradSqr[hi][epoch] + b * gradSqr[lo][epoch]) / span,
        (a * gradVar[hi][epoch] + b * gradVar[lo][epoch]) / span};
  }

  private static String key(String digits) {
    return smallestRotation(digits.chars().map(c -> c - '0').toArray());
  }

  /** The lexicographically smallest rotation, written as comma-separated counts. */
  static String smallestRotation(int[] pl) {
    int[] best = pl;
    for (int s = 1; s < pl.length; s++) {
      int[] r = new int[pl.length];
      for (int i = 0; i < pl.length; i++) {
        r[i] = pl[(i + s) % pl.length];
      }
      if (Arrays.compare(r, best) < 0) {
        best = r;
      }
    }
    StringBuilder b = new StringBuilder();
    for (int g : best) {
      if (b.length() > 0) {
        b.append(',');
      }
      b.append(g);
    }
    return b.toString();
  }
}
