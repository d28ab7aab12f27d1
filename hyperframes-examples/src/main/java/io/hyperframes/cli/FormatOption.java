package io.hyperframes.cli;

import java.util.Arrays;
import java.util.EnumSet;
import java.util.Set;
import java.util.stream.Collectors;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * The {@code --format} option of the commands that print a table or JSON, as a picocli mixin
 * ({@code @Mixin FormatOption format}). A format the command does not write (markdown, html) is
 * refused while the command line is read, before any work, with exit status 2 and a message that
 * names the option, the value and the formats the command writes. Commands that write more
 * formats declare their own option and check it with {@link #check}.
 */
final class FormatOption {

  @Spec(Spec.Target.MIXEE) CommandSpec command;

  private Format value = Format.table;

  @Option(names = "--format", defaultValue = "table", paramLabel = "FORMAT",
      description = "table (default) or json.")
  void set(Format format) {
    value = check(command, format, Format.table, Format.json);
  }

  /** Whether the command prints JSON (otherwise its table). */
  boolean json() {
    return value == Format.json;
  }

  /**
   * {@code format} when {@code command} writes it.
   *
   * @throws ParameterException naming {@code --format}, the value and the formats written
   */
  static Format check(CommandSpec command, Format format, Format... written) {
    Set<Format> ok = EnumSet.copyOf(Arrays.asList(written));
    if (!ok.contains(format)) {
      throw new ParameterException(command.commandLine(), "--format: " + format
          + " is not available for " + command.qualifiedName() + " ("
          + ok.stream().map(Format::name).collect(Collectors.joining(", ")) + ")");
    }
    return format;
  }
}
