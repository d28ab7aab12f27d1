package io.hyperframes.cli;

import io.hyperframes.runtime.BenchmarkRecord;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * {@code --record FILE} of the bench commands, as a picocli mixin ({@code @Mixin RecordOption
 * record}): one benchmark record of every timed sample with the run's conditions, for
 * {@code hyperframes compare}. A file whose folder does not exist is refused while the command
 * line is read, before minutes of measurement that could then not be written.
 */
final class RecordOption {

  @Spec(Spec.Target.MIXEE) CommandSpec command;

  private Path file;

  @Option(names = "--record", paramLabel = "FILE",
      description = "Also write a benchmark record (every timed sample of every contender, with"
          + " the run's conditions) for hyperframes compare.")
  void set(Path record) {
    Path folder = record.toAbsolutePath().getParent();
    if (folder != null && !Files.isDirectory(folder)) {
      throw new ParameterException(command.commandLine(), "--record: no folder " + folder
          + " to write " + record + " in");
    }
    file = record;
  }

  /** Whether a record is asked for. */
  boolean wanted() {
    return file != null;
  }

  /**
   * Writes a record of {@code metrics}, when one is asked for: this process's conditions
   * ({@link BenchmarkRecord#hostConditions}), the CPU model and oneDNN's version and ISA, the
   * command ({@code "bench kernels"}) and its own settings.
   */
  void write(Map<String, String> settings, Map<String, BenchmarkRecord.Metric> metrics) {
    if (file == null) {
      return;
    }
    Map<String, String> conditions = new TreeMap<>(BenchmarkRecord.hostConditions());
    // The host's OS, architecture, cores and JVM are in hostConditions already; the machine
    // adds the CPU model and oneDNN's version and ISA.
    BenchKernelsCommand.machine().properties().stream()
        .filter(e -> !Set.of("os", "arch", "cores", "java").contains(e.getKey()))
        .forEach(e -> conditions.put("machine." + e.getKey(), e.getValue().asText()));
    String name = command.qualifiedName();
    conditions.put("command", name.substring(name.indexOf(' ') + 1));
    conditions.putAll(settings);
    new BenchmarkRecord(BenchmarkRecord.SCHEMA, conditions, metrics).write(file);
  }

  /** A metric of one value per sample (seconds: lower is better). */
  static BenchmarkRecord.Metric seconds(double[] samples) {
    return new BenchmarkRecord.Metric("s", false, samples);
  }
}
