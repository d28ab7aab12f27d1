package io.hyperframes.cli;

import io.hyperframes.runtime.BenchmarkRecord;
import java.nio.file.Path;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/** {@code --record FILE} of the bench commands: one benchmark record with the run's conditions. */
final class Records {
  private Records() {}

  /**
   * Writes a record of {@code metrics} to {@code file}: this process's conditions
   * ({@link BenchmarkRecord#hostConditions}), the CPU model and oneDNN's version and ISA, the
   * command and its own settings.
   */
  static void write(Path file, String command, Map<String, String> settings,
      Map<String, BenchmarkRecord.Metric> metrics) {
    Map<String, String> conditions = new TreeMap<>(BenchmarkRecord.hostConditions());
    // The host's OS, architecture, cores and JVM are in hostConditions already; the machine
    // adds the CPU model and oneDNN's version and ISA.
    BenchKernelsCommand.machine().properties().stream()
        .filter(e -> !Set.of("os", "arch", "cores", "java").contains(e.getKey()))
        .forEach(e -> conditions.put("machine." + e.getKey(), e.getValue().asText()));
    conditions.put("command", command);
    conditions.putAll(settings);
    new BenchmarkRecord(BenchmarkRecord.SCHEMA, conditions, metrics).write(file);
  }

  /** A metric of one value per sample (seconds: lower is better). */
  static BenchmarkRecord.Metric seconds(double[] samples) {
    return new BenchmarkRecord.Metric("s", false, samples);
  }
}
