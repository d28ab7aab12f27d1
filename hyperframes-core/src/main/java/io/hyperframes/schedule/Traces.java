package io.hyperframes.schedule;

import static com.google.common.base.Preconditions.checkArgument;

import com.google.common.collect.ImmutableList;
import io.hyperframes.trace.Csv;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Readers of public cluster traces (files a user obtains; see docs/scheduling.md for sources and
 * licences). A malformed row is an {@link IllegalArgumentException} naming the file, the line
 * and the column; rows a trace marks as not schedulable are skipped and counted, never dropped
 * silently.
 */
public final class Traces {
  private Traces() {}

  /**
   * What a reader returned: the rows it kept and how many it skipped, with why.
   *
   * @param items rows kept, in file order
   * @param skipped rows skipped, by reason
   */
  public record Read<T>(List<T> items, Map<String, Integer> skipped) {
    public Read {
      items = ImmutableList.copyOf(items);
      skipped = Map.copyOf(skipped);
    }
  }

  /**
   * The node list of Alibaba's GPU-sharing trace ({@code alibaba/clusterdata}
   * {@code cluster-trace-gpu-v2023/csv/openb_node_list_*.csv}: {@code sn, cpu_milli,
   * memory_mib, gpu, model}).
   */
  public static Read<GpuNode> openbNodes(Path file) {
    Csv csv = Csv.open(file, "sn", "cpu_milli", "memory_mib", "gpu", "model");
    List<GpuNode> out = new ArrayList<>();
    for (Csv.Row row : csv.rows()) {
      int gpus = (int) csv.integer(row, "gpu", 0, 64);
      String model = csv.text(row, "model", true);
      if (model.equals("nan")) {
        model = "";
      }
      out.add(new GpuNode(csv.text(row, "sn", false), csv.integer(row, "cpu_milli", 0,
          Long.MAX_VALUE), csv.integer(row, "memory_mib", 0, Long.MAX_VALUE), gpus,
          gpus == 0 ? "" : model));
    }
    return new Read<>(out, Map.of());
  }

  /**
   * The task list of Alibaba's GPU-sharing trace ({@code openb_pod_list_*.csv}: {@code name,
   * cpu_milli, memory_mib, num_gpu, gpu_milli, gpu_spec, qos, pod_phase, creation_time,
   * deletion_time, scheduled_time}); {@code gpu_spec} lists allowed models separated by
   * {@code |}. Tasks the trace records as never scheduled ({@code pod_phase} other than
   * Running, Succeeded or Failed) are kept: the phase is the production scheduler's outcome,
   * not part of the request. Duration is deletion − creation time.
   */
  public static Read<GpuPod> openbPods(Path file) {
    Csv csv = Csv.open(file, "name", "cpu_milli", "memory_mib", "num_gpu", "gpu_milli",
        "gpu_spec", "creation_time", "deletion_time");
    List<GpuPod> out = new ArrayList<>();
    for (Csv.Row row : csv.rows()) {
      int gpus = (int) csv.integer(row, "num_gpu", 0, 1024);
      int milli = (int) csv.integer(row, "gpu_milli", 0, 1000);
      if (gpus == 0) {
        milli = 0;
      }
      String spec = csv.text(row, "gpu_spec", true);
      Set<String> models = spec.isEmpty() ? Set.of()
          : new LinkedHashSet<>(Arrays.asList(spec.split("\\|")));
      double created = csv.integer(row, "creation_time", 0, Long.MAX_VALUE);
      double deleted = csv.integer(row, "deletion_time", 0, Long.MAX_VALUE);
      if (deleted < created) {
        throw csv.error(row, "deletion_time", "must not be before creation_time "
            + (long) created);
      }
      out.add(new GpuPod(csv.text(row, "name", false), csv.integer(row, "cpu_milli", 0,
          Long.MAX_VALUE), csv.integer(row, "memory_mib", 0, Long.MAX_VALUE), gpus, milli,
          models, created, deleted - created));
    }
    return new Read<>(out, Map.of());
  }

  /**
   * A workload of the Pollux artifact ({@code petuum/adaptdl} osdi21-artifact,
   * {@code simulator/workloads/workload-N.csv}: {@code name, time, application, num_replicas,
   * batch_size}): training jobs with their submission second, GPU count and batch size.
   */
  public static Read<GoodputReplay.Job> polluxWorkload(Path file) {
    Csv csv = Csv.open(file, "name", "time", "application", "num_replicas", "batch_size");
    List<GoodputReplay.Job> out = new ArrayList<>();
    for (Csv.Row row : csv.rows()) {
      out.add(new GoodputReplay.Job(csv.text(row, "name", false), csv.integer(row, "time", 0,
          Long.MAX_VALUE / 4), csv.text(row, "application", false),
          (int) csv.integer(row, "num_replicas", 1, 1 << 16),
          (int) csv.integer(row, "batch_size", 1, Integer.MAX_VALUE)));
    }
    return new Read<>(out, Map.of());
  }

  private static final java.time.format.DateTimeFormatter PHILLY_TIME =
      java.time.format.DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss");

  /**
   * Microsoft's Philly trace as the Pollux artifact keeps it ({@code petuum/adaptdl}
   * osdi21-artifact, {@code simulator/traces/philly.csv}: {@code timestamp, duration, num_gpus,
   * gpu_time, cluster}; 82 247 jobs of Jeon et al., ATC 2019): each row a job submitted at
   * {@code timestamp} (seconds after the trace's earliest, which becomes 0) that runs for
   * {@code duration} seconds on {@code num_gpus} whole GPUs. The trace has no node list: a job of
   * more than {@code gpusPerNode} GPUs becomes a gang of members of {@code gpusPerNode} GPUs
   * (the last takes the rest), one per node. Rows are named {@code philly-LINE}; the
   * {@code cluster} column (Philly's virtual cluster, a team's share) is the job's tenant.
   *
   * @param gpusPerNode GPUs on each node of the cluster it will be replayed on, ≥ 1
   */
  public static Read<GpuJob> philly(Path file, int gpusPerNode) {
    checkArgument(gpusPerNode >= 1 && gpusPerNode <= 64, "gpusPerNode: must be in [1, 64], got"
        + " %s", gpusPerNode);
    Csv csv = Csv.open(file, "timestamp", "duration", "num_gpus");
    long[] at = csv.micros("timestamp", PHILLY_TIME, "yyyy-MM-dd HH:mm:ss");
    long first = Long.MAX_VALUE;
    for (int i = 0; i < at.length; i++) {
      at[i] /= 1_000_000L;
      first = Math.min(first, at[i]);
    }
    List<GpuJob> out = new ArrayList<>();
    Map<String, Integer> skipped = new HashMap<>();
    for (int i = 0; i < at.length; i++) {
      Csv.Row row = csv.rows().get(i);
      double duration = csv.number(row, "duration");
      if (duration < 0) {
        throw csv.error(row, "duration", "must be >= 0, got " + duration);
      }
      int gpus = (int) csv.integer(row, "num_gpus", 0, 1 << 16);
      if (gpus == 0) {
        skipped.merge("no GPU", 1, Integer::sum);
        continue;
      }
      String name = "philly-" + row.line();
      double arrival = at[i] - first;
      String tenant = csv.has("cluster") ? csv.text(row, "cluster", true) : "";
      out.add(GpuJob.wholeGpus(name, arrival, Math.max(1, duration), gpus, gpusPerNode, tenant,
          0));
    }
    return new Read<>(out, skipped);
  }

  private static final java.time.format.DateTimeFormatter AZURE_TIME =
      new java.time.format.DateTimeFormatterBuilder().appendPattern("yyyy-MM-dd HH:mm:ss")
          .optionalStart().appendFraction(java.time.temporal.ChronoField.NANO_OF_SECOND, 1, 9,
              true).optionalEnd().toFormatter();

  /**
   * Azure's LLM inference traces ({@code Azure/AzurePublicDataset},
   * {@code data/AzureLLMInferenceTrace_code.csv} and {@code _conv.csv}, CC-BY 4.0: {@code
   * TIMESTAMP, ContextTokens, GeneratedTokens}; one hour of two production services on
   * 2023-11-16, the trace of Patel et al., "Splitwise", ISCA 2024): each row a request arriving
   * at {@code TIMESTAMP} (seconds after the trace's earliest, which becomes 0, to the
   * microsecond) with its prompt and output lengths. Rows come back in arrival order. A row
   * with no generated or no context tokens is skipped and counted.
   */
  public static Read<LlmRequest> azureLlm(Path file) {
    Csv csv = Csv.open(file, "TIMESTAMP", "ContextTokens", "GeneratedTokens");
    long[] micros = csv.micros("TIMESTAMP", AZURE_TIME, "yyyy-MM-dd HH:mm:ss[.fraction]");
    long first = Long.MAX_VALUE;
    for (long m : micros) {
      first = Math.min(first, m);
    }
    List<LlmRequest> out = new ArrayList<>();
    Map<String, Integer> skipped = new HashMap<>();
    for (int i = 0; i < micros.length; i++) {
      Csv.Row row = csv.rows().get(i);
      int prompt = (int) csv.integer(row, "ContextTokens", 0, 1 << 24);
      int output = (int) csv.integer(row, "GeneratedTokens", 0, 1 << 24);
      if (prompt == 0 || output == 0) {
        skipped.merge(prompt == 0 ? "no context tokens" : "no generated tokens", 1,
            Integer::sum);
        continue;
      }
      out.add(new LlmRequest((micros[i] - first) / 1e6, prompt, output));
    }
    out.sort(java.util.Comparator.comparingDouble(LlmRequest::arrivalSeconds));
    return new Read<>(out, skipped);
  }

  /** The kinds of trace {@link #kind} recognises. */
  enum Kind { OPENB, PHILLY, POLLUX }

  /**
   * The kind of a trace file by its header: an openb pod list ({@code gpu_milli}), a Philly job
   * list ({@code timestamp}, {@code num_gpus}) or a Pollux workload ({@code application},
   * {@code num_replicas}).
   *
   * @throws IllegalArgumentException naming {@code trace} when the file cannot be read or is of
   *     none of these kinds (an Azure LLM request trace is named as such)
   */
  static Kind kind(java.nio.file.Path file) {
    String header;
    try (var in = java.nio.file.Files.newBufferedReader(file)) {
      header = String.valueOf(in.readLine());
    } catch (java.io.IOException e) {
      throw new IllegalArgumentException("trace: cannot read " + file + ": " + e.getMessage(),
          e);
    }
    List<String> columns = java.util.Arrays.stream(header.split(",")).map(String::strip)
        .toList();
    if (columns.contains("gpu_milli")) {
      return Kind.OPENB;
    }
    if (columns.contains("num_gpus") && columns.contains("timestamp")) {
      return Kind.PHILLY;
    }
    if (columns.contains("application") && columns.contains("num_replicas")) {
      return Kind.POLLUX;
    }
    checkArgument(!columns.contains("ContextTokens"), "trace: %s is an LLM inference"
        + " request trace; give it to serving(service, file)", file);
    throw new IllegalArgumentException("trace: " + file + " is not an openb pod list"
        + " (gpu_milli), a Philly job list (timestamp, num_gpus) or a Pollux workload"
        + " (application, num_replicas); header: " + header);
  }
}
