package io.hyperframes.cli;

import io.hyperframes.nd4j.data.EncodedDataset;
import java.io.IOException;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** {@code hyperframes dataset}: pre-encode training data once. */
@Command(name = "dataset", mixinStandardHelpOptions = true,
    description = "Pre-encode training data into a memory-mapped binary file.",
    subcommands = {DatasetCommand.Encode.class})
final class DatasetCommand {

  @Command(name = "encode", mixinStandardHelpOptions = true,
      description = "Encode a CSV (numeric features, one integer class label) once; training"
          + " then maps it instead of parsing every epoch.")
  static final class Encode implements Callable<Integer> {
    @Spec CommandSpec spec;

    @Option(names = "--csv", required = true, paramLabel = "IN", description = "Input CSV.")
    Path csv;

    @Option(names = "--out", required = true, paramLabel = "OUT", description = "Output file.")
    Path out;

    @Option(names = "--label-column", defaultValue = "-1",
        description = "Label column (negative counts from the end; default -1, the last).")
    int labelColumn;

    @Option(names = "--classes", required = true, description = "Number of classes.")
    int classes;

    @Option(names = "--header", negatable = true, defaultValue = "false",
        description = "The first line is a header (default: no).")
    boolean header;

    @Override
    public Integer call() throws IOException {
      if (!java.nio.file.Files.isReadable(csv)) {
        throw new IllegalArgumentException("--csv: cannot read " + csv);
      }
      long rows = EncodedDataset.encodeCsv(csv, out, labelColumn, classes, header);
      spec.commandLine().getOut().printf("encoded %d rows into %s%n", rows, out);
      return 0;
    }
  }
}
